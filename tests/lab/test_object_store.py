"""Real object-store runs of the lab judge the object-store path: `correlator analyze` on each `s3-<flink>/` run.

Each run is Flink checkpointing to `s3://` through flink-s3-fs-hadoop, s3proxy serving S3 behind the lab's fault proxy,
which wrote the S3 server access log (`deploy/lab/objectstore.py`). The Flink logs say nothing of the store (S3A
retries quietly at INFO): the store's log is the evidence, and the verdict must name the bucket and the job's prefix.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from correlator.core.explain.verdict import verdict_to_dict
from correlator.offline.analyze import analyze

DATA = Path(__file__).resolve().parents[1] / "data" / "lab"
RUNS = sorted(p.parent for p in DATA.glob("s3-*/*/truth.json"))


def _verdicts(run: Path) -> list[dict[str, Any]]:
    return [verdict_to_dict(v) for v in analyze([str(run)])]


def test_the_lab_captured_a_throttling_run_and_a_control_run() -> None:
    assert {p.name for p in RUNS} >= {"s3-throttling", "s3-control"}


@pytest.mark.parametrize("run", RUNS, ids=[f"{p.parent.name}/{p.name}" for p in RUNS])
def test_the_flink_logs_say_nothing_of_the_store(run: Path) -> None:
    """What the issue reported, true of the real run: no S3 error or retry line in any Flink log."""
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
        said = "503 SlowDown" if want["code"] == "OBJECT_STORE_THROTTLED" else "the store took "
        assert store and all(said in e["summary"] for e in store), v["evidence"]


def test_a_slow_marker_of_the_checkpoints_directory_is_the_stores_not_backpressure() -> None:
    """When the JobManager's own `chk-N/` marker PUT is the slow one, no task uploads anything while it waits: the
    shape of backpressure, but the store's log shows where the time went, and the verdict says so."""
    run = DATA / "s3-1.20.1" / "s3-slow-put"
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
