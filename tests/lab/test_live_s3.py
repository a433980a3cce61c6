"""The live object-store lab's own logic, without services: how it ships the access log, and how it judges the first
verdicts (the client's lines alone) against the revised ones (with the store's log) and `analyze`'s."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from correlator.core.explain.verdict import verdict_to_dict
from correlator.offline.analyze import analyze

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "deploy" / "lab"))

import live_s3  # noqa: E402
from livestack import rsyslog_conf  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "data" / "lab" / "s3-1.20.1"
TOPICS = {n: f"{n}.t" for n in ("logs.flink", "logs.hdfs", "logs.s3")}


def test_the_access_log_goes_to_logs_s3_one_record_per_line_and_the_flink_logs_to_logs_flink() -> None:
    access = rsyslog_conf(Path("/logs"), Path("/var/lib/shipper"), "127.0.0.1:9", "lab-s3-x", TOPICS,
                          files=live_s3.ACCESS_FILES)
    assert 'file="/logs/s3-access-lab-s3.log"' in access and 'topic="logs.s3.t"' in access
    assert 'set $!host = "lab-s3";' in access and 'set $!cluster = "lab-s3-x";' in access
    assert "startmsg.regex" not in access and "logs.flink" not in access
    flink = rsyslog_conf(Path("/logs"), Path("/var/lib/shipper"), "127.0.0.1:9", "lab-s3-x", TOPICS,
                         files=live_s3.FLINK_FILES)
    assert "startmsg.regex" in flink and 'topic="logs.flink.t"' in flink
    assert flink.count('escapeLF="off"') == len(live_s3.FLINK_FILES)  # a cause chain keeps its line breaks
    assert "s3-access" not in flink and "logs.hdfs" not in flink and "hadoop-" not in flink


def _run(tmp_path: Path, scenario: str) -> tuple[dict[str, Any], list[dict[str, Any]], live_s3.Timed,
                                                 list[dict[str, Any]]]:
    """A real run's verdicts as the live lab sees them: first from the Flink logs alone, then revised (revision 1
    where the cause changed) from the complete logs, and `analyze`'s."""
    run = DATA / scenario
    client = tmp_path / scenario
    shutil.copytree(run, client, ignore=shutil.ignore_patterns("s3-access-*", "truth.json"))
    first = [verdict_to_dict(v) for v in analyze([str(client)])]
    offline = [verdict_to_dict(v) for v in analyze([str(run)])]
    was = {live_s3.key(v): v for v in first}
    got: live_s3.Timed = [(1.0, v) for v in first]
    got += [(2.0, {**v, "revision": 1}) for v in offline if live_s3.cause(v) != live_s3.cause(was[live_s3.key(v)])]
    return json.loads((run / "truth.json").read_text()), first, got, offline


@pytest.mark.parametrize("scenario", ["s3-throttling", "s3-slow-put", "s3-expired-token", "s3-connection-limit",
                                      "s3-hot-prefix"])
def test_a_first_verdict_without_the_store_then_its_revision_is_as_expected(tmp_path: Path, scenario: str) -> None:
    truth, first, got, offline = _run(tmp_path, scenario)
    assert truth["failed_checkpoints"] and live_s3.settled(truth, got)
    assert live_s3.judge_s3(truth, first, got, offline) == []
    rows = live_s3.checkpoint_rows(truth, [(1.0, v) for v in first], got, fault_end=0.0, shipped=1.5)
    assert [r["checkpoint"] for r in rows] == [int(f["checkpoint_id"]) for f in truth["failed_checkpoints"]]
    assert all(r["final"] == truth["expected"][0]["code"] and r["hosts"] == ["lab-checkpoints"] for r in rows)
    assert all(r["revised_after_access_log_s"] == 0.5 for r in rows if r["revisions"])


def test_a_cause_changed_without_a_revision_and_a_first_verdict_that_had_the_store_are_named(tmp_path: Path) -> None:
    truth, first, got, offline = _run(tmp_path, "s3-throttling")
    unrevised = [(t, {**v, "revision": 0}) for t, v in got if t == 2.0]
    problems = live_s3.judge_s3(truth, first, unrevised, offline)
    assert any("without a revision" in p for p in problems)
    full = [v for t, v in got if t == 2.0]
    assert any("does not want lab-checkpoints's access log" in p for p in live_s3.judge_s3(truth, full, got, offline))


def test_a_final_verdict_other_than_analyzes_or_without_the_prefix_is_named(tmp_path: Path) -> None:
    truth, first, got, offline = _run(tmp_path, "s3-throttling")
    t, last = got[-1]
    wrong = {**last, "root_cause": {**last["root_cause"], "explanation": "the store throttled"}}
    problems = live_s3.judge_s3(truth, first, [*got[:-1], (t, wrong)], offline)
    assert any("names no s3://lab-checkpoints/flink/checkpoints/" in p for p in problems)
    assert not live_s3.settled(truth, got[:len(first)])
    assert any("differ from analyze's" in p for p in live_s3.judge_s3(truth, first, got[:len(first)], offline))


def test_no_failed_checkpoint_wants_no_verdict(tmp_path: Path) -> None:
    truth, first, got, offline = _run(tmp_path, "s3-control")
    assert not truth["failed_checkpoints"] and not got
    assert live_s3.judge_s3(truth, first, got, offline) == []
    _, _, other, _ = _run(tmp_path, "s3-throttling")
    assert live_s3.judge_s3(truth, [], other, offline)[0].endswith("a verdict, but it did not fail")
