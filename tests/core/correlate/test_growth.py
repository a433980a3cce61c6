"""FLINK_STATE_GROWTH: the state's steady growth explains an expiry the storage logs do not, and never outranks a stall."""

from __future__ import annotations

import random

from correlator.core.correlate.engine import Engine, EngineConfig
from correlator.core.events import CheckpointCompleted, Event
from correlator.core.explain.verdict import Verdict
from tests.core.correlate.factory import JOB, T0, SlowIo, ev, failure, noise, read_too, scanner, seed

STEP_MS = 20_000


def completions(sizes: list[int], durations: list[int]) -> list[Event]:
    """Completed checkpoints every 20 s up to just before the failure at T0."""
    n = len(sizes)
    return [ev(CheckpointCompleted, T0 - (n - i) * STEP_MS, "jm01.example.com", "jobmanager", job_id=JOB,
               checkpoint_id=20 + i, size_bytes=sizes[i], duration_ms=durations[i]) for i in range(n)]


def growing(n: int = 30) -> list[Event]:
    rng = random.Random(3)
    return completions([4_000_000 + i * 1_000_000 + rng.randint(-50_000, 50_000) for i in range(n)],
                       [1_000 + i * 280 + rng.randint(-150, 150) for i in range(n)])


def run(events: list[Event], engine: Engine | None = None) -> list[Verdict]:
    engine = engine or Engine(EngineConfig())
    out: list[Verdict] = []
    for e in sorted(events, key=lambda e: e.ts_ms):
        out += engine.feed(e)
    return out + engine.finish()


def traffic() -> list[Event]:
    """Healthy block writes, without the factory's own completed checkpoints (these tests give the job's), and a
    NameNode log over the same time: "nothing abnormal" needs it read."""
    return [e for e in noise(T0 - 900_000, T0 + 300_000) if not isinstance(e, CheckpointCompleted)] + read_too(
        T0 - 900_000, T0 + 300_000)


def quiet_failure() -> list[Event]:
    return traffic() + failure(write_ms=12_000, with_client=False)


def test_growth_explains_an_expiry_the_storage_logs_do_not() -> None:
    [v] = run(quiet_failure() + growing())
    assert v.root_cause.code == "FLINK_STATE_GROWTH", v.root_cause
    assert "grew" in v.root_cause.explanation and "10.0 s timeout" in v.root_cause.explanation
    assert [e.type for e in v.evidence if e.type == "checkpoint_completed"] == ["checkpoint_completed"] * 2
    assert any("execution.checkpointing.incremental" in step.text for step in v.remediation)


def test_a_flat_state_leaves_it_unexplained() -> None:
    rng = random.Random(5)
    flat = completions([9_000_000 + rng.randint(-300_000, 300_000) for _ in range(30)],
                       [8_000 + rng.randint(-900, 900) for _ in range(30)])
    [v] = run(quiet_failure() + flat)
    assert v.root_cause.code == "UNEXPLAINED", v.root_cause


def test_growth_far_below_the_timeout_is_not_the_cause() -> None:
    small = completions([1_000_000 * (i + 1) for i in range(30)], [100 + 10 * i for i in range(30)])
    [v] = run(quiet_failure() + small)
    assert v.root_cause.code == "UNEXPLAINED", v.root_cause


def test_a_stall_in_the_logs_outranks_the_growth() -> None:
    """A 37 s scanner hold against the 9 s the trend predicts: the stall is the cause, the growth a note."""
    [v] = run([e for e in seed() if not isinstance(e, CheckpointCompleted)] + growing())
    assert v.root_cause.code == "HDFS_DIRECTORY_SCAN"
    assert "FLINK_STATE_GROWTH" not in {a.code for a in v.alternatives}, "not a candidate beside a longer stall"
    assert "the stall is the cause, the state's growth a note" in v.root_cause.explanation


def test_a_short_stall_at_the_end_of_a_grown_checkpoint_only_tips_it_over() -> None:
    """The time budget: the trend predicts about 9.4 s of the 10 s; a 0.8 s slow flush on dn03 near the end took it
    past the timeout. The growth is the cause, the flush a contributing factor, both with their figures."""
    flush = ev(SlowIo, T0 + 9_600, "dn03.example.com", "datanode", kind="flush_or_sync", duration_ms=800)
    [v] = run(quiet_failure() + growing() + [flush])
    assert v.root_cause.code == "FLINK_STATE_GROWTH", v.root_cause
    assert v.root_cause.hosts == ()
    assert "HDFS_SLOW_DISK" in {a.code for a in v.alternatives}
    said = v.root_cause.explanation
    assert "predicted 9." in said and "took 0.8 s of it" in said and "a contributing factor, not the cause" in said
    assert "no HDFS log shows a stall" not in said


def test_a_restored_engine_still_knows_the_completions() -> None:
    events = sorted(quiet_failure() + growing(), key=lambda e: e.ts_ms)
    cut = next(i for i, e in enumerate(events) if e.ts_ms >= T0 - 5 * STEP_MS)
    first = Engine(EngineConfig())
    for e in events[:cut]:
        first.feed(e)
    restored = Engine.restore(EngineConfig(), first.snapshot())
    assert [v.root_cause.code for v in run(events[cut:], restored)] == ["FLINK_STATE_GROWTH"]


def test_scanner_helper_still_blames_the_scanner_without_growth() -> None:
    [v] = run(noise(T0 - 900_000, T0 + 300_000) + failure() + scanner("dn02.example.com", T0 + 37_617, 37_400))
    assert v.root_cause.code != "FLINK_STATE_GROWTH"
