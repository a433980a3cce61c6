"""Golden scenarios: checked-in simulator output through the whole offline pipeline (files → parse → engine).

Each scenario directory under ``scenarios/`` was written by ``correlator simulate <name> --out …`` (seed 0, scale 1);
the table below is what ``analyze`` must say about it.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from correlator.core.correlate.engine import Engine
from correlator.core.events import Event
from correlator.core.explain.verdict import Verdict, verdict_to_dict
from correlator.offline.analyze import analyze, collect_events
from correlator.simulate import SCENARIOS, generate

HERE = Path(__file__).parent / "scenarios"
JOB = "1a3bc71ac57f33961637adf340e9c28f"
JOB_B = "7e2f0c41d9b84a5c8f3e61a0b2c4d6e8"
SEED_CAUSE = ("HDFS_DIRECTORY_SCAN", ("dn02.example.com",), "HDFS-15415")
"""The seed's lock report names ``DirectoryScanner.scan`` on 3.1.0: the compare held under the lock, fixed by
HDFS-15415 (HDFS-14476, which the seed's team was pointed to, paces the reconcile that follows)."""

# scenario -> [(job, checkpoint, failure kind, code, cause hosts, known issue)]
EXPECTED: dict[str, list[tuple[str, int, str, str, tuple[str, ...], str | None]]] = {
    "seed": [(JOB, 60, "async_materialize", *SEED_CAUSE)],
    "clock-skew": [(JOB, 60, "async_materialize", *SEED_CAUSE)],
    "envelopes": [(JOB, 60, "async_materialize", *SEED_CAUSE)],
    "slow-disk": [(JOB, 60, "expired", "HDFS_SLOW_DISK", ("dn03.example.com",), None)],
    "slow-pipeline": [(JOB, 60, "expired", "HDFS_SLOW_PIPELINE", ("dn02.example.com",), None)],
    "datanode-gc": [(JOB, 60, "async_materialize", "DATANODE_JVM_PAUSE", ("dn04.example.com",), None)],
    "namenode-lock": [(JOB, 60, "expired", "NAMENODE_SLOW", ("nn01.example.com",), None)],
    "taskmanager-gc": [(JOB, 60, "expired", "TASKMANAGER_JVM_PAUSE", ("tm01.example.com",), None)],
    "taskmanager-lost": [(JOB, 60, "task_failure", "FLINK_TASKMANAGER_LOST", ("tm01.example.com",), None)],
    "unexplained": [(JOB, 60, "expired", "UNEXPLAINED",
                     ("dn02.example.com", "dn03.example.com", "dn04.example.com"), None)],
    "insufficient-data": [(JOB, 60, "async_materialize", "INSUFFICIENT_DATA",
                           ("10.20.30.42:9866", "10.20.30.43:9866", "10.20.30.44:9866"), None)],
    "scanner-far": [(JOB, 60, "async_materialize", "UNEXPLAINED",
                     ("dn02.example.com", "dn03.example.com", "dn04.example.com"), None)],
    "recurring": [
        (JOB, 54, "async_materialize", "HDFS_DIRECTORY_SCAN", ("dn02.example.com",), "HDFS-15415"),
        (JOB, 70, "async_materialize", "HDFS_DIRECTORY_SCAN", ("dn04.example.com",), "HDFS-15415"),
        (JOB, 81, "async_materialize", "HDFS_DIRECTORY_SCAN", ("dn03.example.com",), "HDFS-15415"),
        (JOB, 106, "async_materialize", "HDFS_DIRECTORY_SCAN", ("dn02.example.com",), "HDFS-15415"),
    ],
    "flink-1.15": [(JOB, 60, "expired", *SEED_CAUSE)],
    "flink-2": [(JOB, 60, "expired", "HDFS_DIRECTORY_SCAN", ("dn03.example.com",), "HDFS-15415")],
    "hadoop-3.3": [(JOB, 60, "expired", "HDFS_DIRECTORY_SCAN", ("dn02.example.com",), "HDFS-15415")],
    "hadoop-2.7": [(JOB, 60, "async_materialize", *SEED_CAUSE)],
    "hadoop-3.4": [(JOB, 60, "expired", "HDFS_SLOW_DISK", ("dn04.example.com",), None)],
    "two-jobs": [
        (JOB, 58, "async_materialize", *SEED_CAUSE),
        (JOB_B, 170, "async_materialize", "DATANODE_JVM_PAUSE", ("dn05.example.com",), None),
    ],
    "task-error": [(JOB, 60, "declined", "FLINK_TASK_ERROR", ("tm01.example.com",), None)],
    "no-failures": [],
}


def shape(v: Verdict) -> tuple[str | None, int | None, str, str, tuple[str, ...], str | None]:
    return (v.job_id, v.checkpoint_id, v.failure.kind, v.root_cause.code, v.root_cause.hosts,
            v.root_cause.known_issue)


def test_every_scenario_has_a_golden_case() -> None:
    """The table covers every scenario the simulator knows, and every scenario is checked in."""
    assert set(EXPECTED) == set(SCENARIOS)
    assert {p.name for p in HERE.iterdir() if p.is_dir()} == set(SCENARIOS)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_analyze_gives_the_expected_verdicts(name: str) -> None:
    """analyze(scenario directory) names exactly the expected causes, hosts, jobs, checkpoints and known issues."""
    assert [shape(v) for v in analyze([str(HERE / name)])] == EXPECTED[name]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_simulate_regenerates_the_same_bytes(name: str, tmp_path: Path) -> None:
    """The checked-in files are exactly what ``simulate`` writes with seed 0 and scale 1."""
    written = generate(name, tmp_path)
    assert sorted(p.relative_to(tmp_path).as_posix() for p in written) == sorted(
        p.relative_to(HERE / name).as_posix() for p in (HERE / name).rglob("*") if p.is_file())
    for path in written:
        assert path.read_bytes() == (HERE / name / path.relative_to(tmp_path)).read_bytes(), path.name


class TestSeedVerdict:
    def test_names_the_write_duration_and_remediation(self) -> None:
        """The seed verdict carries the 37.8 s write against the 10 s timeout and the scanner config keys."""
        [v] = analyze([str(HERE / "seed")])
        assert v.failure.timeout_ms == 10_000
        assert v.failure.duration_ms is not None and 37_000 <= v.failure.duration_ms <= 38_500
        assert v.failure.path is not None and f"/{JOB}/chk-60/" in v.failure.path
        settings = {step.setting for step in v.remediation}
        assert "dfs.datanode.directoryscan.interval" in settings
        # the throttle paces only the disk walk, outside the lock: it would not have shortened this stall
        assert not any("throttle" in step.text for step in v.remediation)
        assert any("HDFS-15415" in step.text and "3.2.2, 3.3.1" in step.text for step in v.remediation)
        assert any(e.type == "dn_lock_held" and e.host == "dn02.example.com" for e in v.evidence)

    def test_envelopes_take_the_given_cluster(self) -> None:
        """Shipper envelopes that name no cluster land in the one given, Flink and Hadoop lines together."""
        [v] = analyze([str(HERE / "envelopes")], cluster="prod")
        assert (v.cluster, v.root_cause.code) == ("prod", "HDFS_DIRECTORY_SCAN")
        assert v.root_cause.hosts == ("dn02.example.com",)

    def test_recurrence_every_10_to_30_minutes(self) -> None:
        """The recurring scenario's last verdict counts 4 failures with a typical interval of 10-30 minutes."""
        last = analyze([str(HERE / "recurring")])[-1]
        assert last.recurrence is not None and last.recurrence.count == 4
        assert 600_000 <= (last.recurrence.typical_interval_ms or 0) <= 1_800_000


def _streamed(events: list[Event], seed: int) -> list[Verdict]:
    """Feed like the worker: each source in its own order, sources interleaved at random, processing-time ticks."""
    by_source: dict[tuple[str, str], list[Event]] = {}
    for e in events:
        by_source.setdefault((e.host, e.role), []).append(e)
    queues = [q for _, q in sorted(by_source.items())]
    rng = random.Random(seed)
    engine = Engine()
    out: list[Verdict] = []
    now = 0
    while any(queues):
        queue = rng.choice([q for q in queues if q])
        for _ in range(rng.randint(1, 50)):
            if queue:
                out += engine.feed(queue.pop(0))
        now += 100
        out += engine.advance(now)
    return out + engine.finish()


@pytest.mark.parametrize("name", ["seed", "recurring", "two-jobs", "scanner-far"])
def test_streaming_order_gives_the_same_verdicts(name: str) -> None:
    """Sources interleaved differently (each in its own order) reach the same verdict ids and codes as analyze."""
    events, _ = collect_events([str(HERE / name)])
    expected = sorted(verdict_to_dict(v)["verdict_id"] + v.root_cause.code for v in analyze([str(HERE / name)]))
    for seed in (1, 2):
        got = sorted(verdict_to_dict(v)["verdict_id"] + v.root_cause.code for v in _streamed(events, seed))
        assert got == expected
