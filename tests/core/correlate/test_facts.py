"""What daemons said about themselves at start, as a decision at a given deadline sees it."""

from __future__ import annotations

import json
from pathlib import Path

from correlator.core.correlate.facts import Facts
from correlator.core.events import DaemonStart, FlinkSetting, TaskDeployed
from correlator.offline.analyze import analyze

LAB = Path(__file__).parents[2] / "data" / "lab"


def _learned(*events: DaemonStart | FlinkSetting) -> Facts:
    facts = Facts()
    for e in events:
        assert facts.learn(e)
    return facts


def test_a_setting_counts_only_once_logged_and_the_last_start_wins() -> None:
    facts = _learned(
        FlinkSetting(ts_ms=1_000, cluster="a", host="jm", role="jobmanager", key="heartbeat.timeout", value_ms=50_000),
        FlinkSetting(ts_ms=9_000, cluster="a", host="jm", role="jobmanager", key="heartbeat.timeout", value_ms=15_000),
        FlinkSetting(ts_ms=5_000, cluster="b", host="jm", role="jobmanager", key="heartbeat.timeout", value_ms=7_000),
        DaemonStart(ts_ms=2_000, cluster="a", host="dn1", role="datanode", component="DataNode", version="3.2.1"),
    )
    assert facts.settings("a", 500) == {}
    assert facts.settings("a", 9_000) == {"heartbeat.timeout": 15_000}
    assert facts.settings("b", 9_000) == {"heartbeat.timeout": 7_000}
    assert facts.versions("a", 1_999) == {} and facts.versions("a", 2_000) == {("dn1", "datanode"): "3.2.1"}
    again = Facts.restore(json.loads(json.dumps(facts.snapshot())))
    assert again.settings("a", 9_000) == facts.settings("a", 9_000)
    assert again.versions("a", 9_000) == facts.versions("a", 9_000)


def test_a_snapshot_without_settings_restores() -> None:
    assert Facts.restore({"versions": [["a", "dn1", "datanode", "3.3.6", 1]]}).settings("a", 10) == {}


def test_a_lost_taskmanager_was_silent_for_the_heartbeat_timeout_its_jobmanager_logged() -> None:
    """The lab ran with `heartbeat.timeout: 15000` (Flink 1.20.1's JobManager logs it at start)."""
    [verdict] = analyze([str(LAB / "3.3.6-1.20.1" / "taskmanager-lost")])
    assert verdict.root_cause.code == "FLINK_TASKMANAGER_LOST"
    assert "(15.0 s, the heartbeat.timeout its configuration logged)" in verdict.root_cause.explanation


def test_a_restart_storm_keeps_where_the_first_failure_ran() -> None:
    """A job failing every checkpoint restarts every few seconds: three minutes of lookahead see dozens of
    deployments of a subtask, and a failure decided then still finds where it ran (the lab's 2.3 safe-mode run
    restarted seven times within a minute)."""
    facts = Facts()
    for n in range(40):  # a restart every 5 s for 200 s, the first 20 on one TaskManager, then another
        facts.learn(TaskDeployed(ts_ms=n * 5_000, cluster="a", host="jm", role="jobmanager", task="Writer",
                                 job_vertex_id="v", subtask=0, parallelism=1, attempt_id=f"x_{n}",
                                 taskmanager_id="tm-1" if n < 20 else "tm-2"))
    assert facts.placements("a", 2_000)[("v", 0)].taskmanager_id == "tm-1"
    assert facts.placements("a", 150_000)[("v", 0)].taskmanager_id == "tm-2"
