"""Real object-store runs of the lab judge the object-store path: `correlator analyze` on each `s3-<flink>/` run.

Each run is Flink checkpointing to `s3://` through flink-s3-fs-hadoop, s3proxy serving S3 behind the lab's fault proxy,
which wrote the S3 server access log (`deploy/lab/objectstore.py`). The Flink logs say nothing of the store (S3A
retries quietly at INFO): the store's log is the evidence, and the verdict must name the bucket and the job's prefix.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from correlator.core.explain.verdict import verdict_to_dict
from correlator.offline.analyze import analyze

DATA = Path(__file__).resolve().parents[1] / "data" / "lab"
RUNS = sorted(p.parent for p in DATA.glob("s3-*/*/truth.json"))


def _verdicts(run: Path) -> list[dict[str, Any]]:
    return [verdict_to_dict(v) for v in analyze([str(run)])]


def test_the_lab_captured_every_object_store_scenario_on_every_flink_line() -> None:
    for line in ("s3-1.20.1", "s3-2.1.1", "s3-2.3.0-native"):
        assert {p.name for p in RUNS if p.parent.name == line} >= {
            "s3-throttling", "s3-slow-put", "s3-control", "s3-connection-limit", "s3-hot-prefix",
            "s3-hot-prefix-entropy", "s3-slow-parts", "s3-throttling-bursts"}


S3A_RUNS = [p for p in RUNS if not p.parent.name.endswith("-native")]


@pytest.mark.parametrize("run", S3A_RUNS, ids=[f"{p.parent.name}/{p.name}" for p in S3A_RUNS])
def test_the_flink_logs_say_nothing_of_the_store(run: Path) -> None:
    """What the issue reported, true of the real runs with flink-s3-fs-hadoop: no S3 error or retry line in any Flink
    log (S3A retries quietly)."""
    for log in run.glob("flink-*.log"):
        text = log.read_text()
        assert "SlowDown" not in text and "AWSServiceThrottledException" not in text and "Retried" not in text, log


@pytest.mark.parametrize("run", RUNS, ids=[f"{p.parent.name}/{p.name}" for p in RUNS])
def test_each_failed_checkpoint_is_named_on_its_bucket_and_prefix(run: Path) -> None:
    truth = json.loads((run / "truth.json").read_text())
    verdicts = {(v["job_id"], int(v["checkpoint_id"])): v for v in _verdicts(run)}
    if not truth["failed_checkpoints"]:
        assert not verdicts
        return
    fault = truth["fault"]
    for want in truth["expected"]:
        v = verdicts[(want["job_id"], int(want["checkpoint_id"]))]
        cause = v["root_cause"]
        assert cause["code"] == want["code"] and cause["hosts"] == [fault["bucket"]], cause
        assert f"s3://{fault['bucket']}/{fault['prefix']}/{want['job_id']}/" in cause["explanation"]
        assert not v["coverage"]["missing"], v["coverage"]
        store = [e for e in v["evidence"] if e["role"] == "objectstore"]
        said = {"OBJECT_STORE_THROTTLED": "503 SlowDown", "OBJECT_STORE_SLOW": "the store took ",
                "OBJECT_STORE_CREDENTIALS": "400 ExpiredToken",
                "OBJECT_STORE_CONNECTION_LIMIT": "the store took "}[want["code"]]
        assert store and all(said in e["summary"] for e in store), v["evidence"]


@pytest.mark.parametrize("line", ["s3-1.20.1", "s3-2.1.1"])
def test_a_slow_marker_of_the_checkpoints_directory_is_the_stores_not_backpressure(line: str) -> None:
    """When the JobManager's own `chk-N/` marker PUT is the slow one, no task uploads anything while it waits: the
    shape of backpressure, but the store's log shows where the time went, and the verdict says so."""
    run = DATA / line / "s3-slow-put"
    truth = json.loads((run / "truth.json").read_text())
    access = (run / "s3-access-lab-s3.log").read_text()
    verdicts = {int(v["checkpoint_id"]): v for v in _verdicts(run)}
    marked = [f["checkpoint_id"] for f in truth["failed_checkpoints"]
              if f" REST.PUT.OBJECT {truth['fault']['prefix']}/{f['job_id']}/chk-{f['checkpoint_id']}/ " in access
              and not any(f"/chk-{f['checkpoint_id']}/" in line and " REST.PUT.OBJECT " in line
                          and f"/chk-{f['checkpoint_id']}/ " not in line for line in access.splitlines())]
    assert marked
    for chk in marked:
        cause = verdicts[chk]["root_cause"]
        assert cause["code"] == "OBJECT_STORE_SLOW" and "not backpressure" in cause["explanation"], cause


def test_hdfs_and_object_store_checkpoints_in_one_input_are_each_judged_on_their_own_storage() -> None:
    """Two jobs, two storages, one input: the HDFS job's verdicts are the ones its logs alone give, and the object
    store's job gets the store's cause; neither borrows the other's evidence."""
    hdfs, s3 = DATA / "3.3.6-1.20.1" / "slow-disk", DATA / "s3-1.20.1" / "s3-throttling"
    alone = {(v["job_id"], v["checkpoint_id"]): (v["root_cause"]["code"], v["root_cause"]["hosts"])
             for run in (hdfs, s3) for v in _verdicts(run)}
    together = {(v["job_id"], v["checkpoint_id"]): (v["root_cause"]["code"], v["root_cause"]["hosts"])
                for v in [verdict_to_dict(v) for v in analyze([str(hdfs), str(s3)])]}
    assert together == alone
    assert {code for code, _ in alone.values()} >= {"HDFS_SLOW_DISK", "OBJECT_STORE_THROTTLED"}


@pytest.mark.parametrize(("line", "said"), [
    ("s3-1.20.1", "AWSBadRequestException"), ("s3-2.1.1", "AWSBadRequestException"),
    ("s3-2.3.0-native", "S3Exception: The provided token has expired. (Service: S3, Status Code: 400,")])
def test_an_expired_token_is_stated_by_the_store_and_by_the_client(line: str, said: str) -> None:
    """The client does not retry a 400: the JobManager's cause chains carry the store's words too (S3A's SDK v1 its
    error code, the native filesystem's SDK v2 only S3's message), and the verdict is the store's refusal, not a
    failure inside Flink."""
    run = DATA / line / "s3-expired-token"
    chains = "".join(log.read_text() for log in run.glob("flink-*.log"))
    assert said in chains
    verdicts = _verdicts(run)
    assert verdicts and {v["root_cause"]["code"] for v in verdicts} == {"OBJECT_STORE_CREDENTIALS"}
    assert all("session token had expired" in v["root_cause"]["explanation"] for v in verdicts)


@pytest.mark.parametrize("line", ["s3-1.20.1", "s3-2.1.1", "s3-2.3.0-native"])
def test_without_the_stores_log_the_clients_cause_chain_decides(tmp_path: Path, line: str) -> None:
    """The access log arrives late (hours): from the Flink logs alone, the refusal in the cause chain names the
    store's credentials, never user code or missing HDFS logs, and the verdict says the store's log is not in."""
    run = DATA / line / "s3-expired-token"
    for log in run.glob("flink-*.log"):
        (tmp_path / log.name).write_bytes(log.read_bytes())
    truth = json.loads((run / "truth.json").read_text())
    verdicts = {int(v["checkpoint_id"]): v for v in _verdicts(tmp_path)}
    assert set(verdicts) == {int(f["checkpoint_id"]) for f in truth["failed_checkpoints"]}
    for v in verdicts.values():
        cause = v["root_cause"]
        assert cause["code"] == "OBJECT_STORE_CREDENTIALS", cause
        assert "access log is not in the input" in cause["explanation"]
        assert [(m["host"], m["role"]) for m in v["coverage"]["missing"]] == [("lab-checkpoints", "objectstore")]


@pytest.mark.parametrize("line", ["s3-1.20.1", "s3-2.1.1"])
def test_without_the_stores_log_a_throttled_checkpoint_asks_for_the_stores_log_not_hdfs(tmp_path: Path,
                                                                                          line: str) -> None:
    """A throttle leaves nothing in the Flink logs: from them alone the verdict names no cause, and what it asks for
    is the bucket's access log (the JobManager logged where checkpoints go), never DataNode or NameNode logs."""
    run = DATA / line / "s3-throttling"
    for log in run.glob("flink-*.log"):
        (tmp_path / log.name).write_bytes(log.read_bytes())
    verdicts = _verdicts(tmp_path)
    assert verdicts
    for v in verdicts:
        assert v["root_cause"]["code"] == "INSUFFICIENT_DATA"
        assert [(m["host"], m["role"]) for m in v["coverage"]["missing"]] == [("lab-checkpoints", "objectstore")]
        assert not any("DataNode" in step for step in v["remediation"]), v["remediation"]
        assert "access log of the object store (bucket lab-checkpoints)" in v["root_cause"]["explanation"]


@pytest.mark.parametrize("line", ["s3-1.20.1", "s3-2.1.1"])
def test_a_hot_prefix_is_named_and_an_entropy_marker_spreads_it(line: str) -> None:
    """The same store rule in both runs (each key prefix takes 1.5 writes a second, beyond that `503 SlowDown`): ten
    subtasks writing under one prefix fail checkpoints and are told it is one prefix and to add entropy; with
    `s3.entropy.key` in the checkpoint path their files spread over prefixes, nothing is throttled, nothing fails."""
    hot, spread = DATA / line / "s3-hot-prefix", DATA / line / "s3-hot-prefix-entropy"
    rule = json.loads((hot / "truth.json").read_text())["fault"]["settings"]
    assert json.loads((spread / "truth.json").read_text())["fault"]["settings"] == rule
    verdicts = _verdicts(hot)
    assert verdicts and all(v["root_cause"]["code"] == "OBJECT_STORE_THROTTLED" for v in verdicts)
    for v in verdicts:
        assert "start with the one prefix flink/" in v["root_cause"]["explanation"], v["root_cause"]["explanation"]
        assert "s3.entropy.key" in v["remediation"][0], v["remediation"]
    spread_log = (spread / "s3-access-lab-s3.log").read_text()
    assert " 503 SlowDown " not in spread_log and "/checkpoints/" in spread_log
    assert not json.loads((spread / "truth.json").read_text())["failed_checkpoints"] and not _verdicts(spread)


@pytest.mark.parametrize("line", ["s3-1.20.1", "s3-2.1.1"])
def test_slow_parts_of_the_metadata_delay_checkpoints_past_their_timeout_and_fail_none(line: str) -> None:
    """What the lab found: the multipart parts are the JobManager's `_metadata`, uploaded after the tasks' last
    acknowledgement, where the timeout no longer runs: checkpoints complete late, nothing fails, no verdict."""
    run = DATA / line / "s3-slow-parts"
    parts = [ln for ln in (run / "s3-access-lab-s3.log").read_text().splitlines() if " REST.PUT.PART " in ln]
    held = [ln for ln in parts if int(ln.split('" ')[1].split()[4]) >= 12_000]
    assert held and all("/_metadata " in ln for ln in parts)
    jm = next(run.glob("flink-*-standalonesession-*.log")).read_text()
    completed = re.findall(r"Completed checkpoint \d+ for job \w+ \(\d+ bytes, checkpointDuration=(\d+)", jm)
    late = [int(d) for d in completed if int(d) > 10_000]
    assert len(late) >= 2 and not json.loads((run / "truth.json").read_text())["failed_checkpoints"]
    assert not _verdicts(run)


def test_the_native_filesystem_gives_up_on_a_throttle_and_its_chain_says_so(tmp_path: Path) -> None:
    """flink-s3-fs-native 2.3.0 retries a `503 SlowDown` a few times and fails the checkpoint (not an expiry): its
    cause chain states the throttle, so the Flink logs alone name it, saying the store's log is not in; with the
    store's log the verdict says both."""
    run = DATA / "s3-2.3.0-native" / "s3-throttling"
    chains = "".join(log.read_text() for log in run.glob("flink-*.log"))
    assert "Please reduce your request rate. (Service: S3, Status Code: 503," in chains and "SDK Attempt Count" in chains
    for log in run.glob("flink-*.log"):
        (tmp_path / log.name).write_bytes(log.read_bytes())
    alone = _verdicts(tmp_path)
    assert alone and all(v["root_cause"]["code"] == "OBJECT_STORE_THROTTLED" for v in alone)
    assert all("access log is not in the input" in v["root_cause"]["explanation"] for v in alone)
    both = _verdicts(run)
    assert both and all(v["root_cause"]["code"] == "OBJECT_STORE_THROTTLED" for v in both)
    assert all("cause chain carries the throttle too" in v["root_cause"]["explanation"] for v in both)
