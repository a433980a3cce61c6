"""FLINK_BACKPRESSURE: an expired checkpoint whose tasks never began their upload, as the NameNode's log shows it."""

from __future__ import annotations

from correlator.core.correlate.engine import Engine, EngineConfig
from correlator.core.events import (
    BlockAllocated,
    CheckpointCompleted,
    CheckpointExpired,
    CheckpointSpan,
    CheckpointTriggered,
    Event,
)
from correlator.core.explain.verdict import Verdict
from tests.core.correlate.factory import JOB, T0, ev, noise

STEP = 10_000
NN = "nn01.example.com"


def allocation(chk: int, at: int) -> Event:
    return ev(BlockAllocated, at, NN, "namenode", path=f"/flink/checkpoints/{JOB}/chk-{chk}/a1b2",
              block=f"blk_{1073741825 + chk}_{1001 + chk}", replicas=("10.20.30.42:9866",))


def checkpoints(failing: int = 10, allocate_failing: bool = False, allocate_earlier: bool = True) -> list[Event]:
    """Checkpoints 1..failing-1 complete (each file allocated on the NameNode); ``failing`` expires."""
    out: list[Event] = []
    for chk in range(1, failing + 1):
        at = T0 - (failing - chk) * STEP
        out.append(ev(CheckpointTriggered, at, "jm01", "jobmanager", job_id=JOB, checkpoint_id=chk, trigger_ts_ms=at))
        if chk < failing:
            if allocate_earlier:
                out.append(allocation(chk, at + 20))
            out.append(ev(CheckpointCompleted, at + 300, "jm01", "jobmanager", job_id=JOB, checkpoint_id=chk,
                          duration_ms=300, size_bytes=4_000_000))
    if allocate_failing:
        out.append(allocation(failing, T0 + 20))
    out.append(ev(CheckpointExpired, T0 + 10_000, "jm01", "jobmanager", job_id=JOB, checkpoint_id=failing))
    out.append(ev(CheckpointSpan, T0 + 10_005, "jm01", "jobmanager", job_id=JOB, checkpoint_id=failing,
                  status="FAILED", start_ms=T0, end_ms=T0 + 22, full_size=265, checkpointed_size=265))
    return out


def namenode_heartbeats(until: int) -> list[Event]:
    """The NameNode's log goes on around the checkpoint (any line: a block of another file)."""
    return [ev(BlockAllocated, t, NN, "namenode", path="/user/etl/part-0", block=f"blk_{t}_1")
            for t in range(T0 - 200_000, until, 15_000)]


def run(events: list[Event]) -> list[Verdict]:
    engine = Engine(EngineConfig())
    out: list[Verdict] = []
    for e in sorted(events, key=lambda e: e.ts_ms):
        out += engine.feed(e)
    return out + engine.finish()


def traffic() -> list[Event]:
    return [e for e in noise(T0 - 300_000, T0 + 300_000) if not isinstance(e, CheckpointCompleted)]


def test_no_upload_while_the_namenode_watched_is_backpressure() -> None:
    [v] = run(traffic() + namenode_heartbeats(T0 + 300_000) + checkpoints())
    assert v.root_cause.code == "FLINK_BACKPRESSURE", v.root_cause
    assert "allocated no block" in v.root_cause.explanation and "checkpoints 7, 8 and 9" in v.root_cause.explanation
    assert "22 ms after the trigger" in v.root_cause.explanation
    assert any(e.type == "checkpoint_span" for e in v.evidence)
    assert any("unaligned" in r.text for r in v.remediation)
    assert not v.root_cause.hosts


def test_an_upload_that_began_is_not_backpressure() -> None:
    [v] = run(traffic() + namenode_heartbeats(T0 + 300_000) + checkpoints(allocate_failing=True))
    assert v.root_cause.code != "FLINK_BACKPRESSURE", v.root_cause


def test_without_the_namenode_log_over_the_checkpoint_nothing_is_said() -> None:
    events = [e for e in traffic() + namenode_heartbeats(T0 - 5_000) + checkpoints()
              if not (e.role == "namenode" and e.ts_ms > T0 - 5_000)]
    [v] = run(events)
    assert v.root_cause.code != "FLINK_BACKPRESSURE", v.root_cause


def test_a_job_whose_checkpoints_write_no_files_is_not_judged_by_them() -> None:
    """State small enough to travel inside the checkpoint's metadata writes no file of its own: no allocation is
    then no sign of anything."""
    [v] = run(traffic() + namenode_heartbeats(T0 + 300_000) + checkpoints(allocate_earlier=False))
    assert v.root_cause.code != "FLINK_BACKPRESSURE", v.root_cause


def test_the_rest_statistics_name_the_task_that_never_acknowledged() -> None:
    """A span from `flink-stats` (REST) for the failed checkpoint: the task its barriers never got through is named."""
    events = [e for e in checkpoints() if not isinstance(e, CheckpointSpan)]
    events.append(ev(CheckpointSpan, T0 + 10_010, "jm01", "jobmanager", job_id=JOB, checkpoint_id=10, status="FAILED",
                     start_ms=T0, end_ms=T0 + 64, full_size=265, checkpointed_size=265,
                     phases=(("unacknowledgedSubtasks", 1),), waiting_on=("keyed-state -> discard: Writer",)))
    [v] = run(traffic() + namenode_heartbeats(T0 + 300_000) + events)
    assert v.root_cause.code == "FLINK_BACKPRESSURE"
    assert "keyed-state -> discard: Writer never acknowledged it" in v.root_cause.explanation
    assert "within 64 ms" in v.root_cause.explanation


def test_a_storage_verdict_carries_the_span_that_confirms_it() -> None:
    """The seed's scanner stall with the REST statistics of its checkpoint: the scanner stays the cause, and the
    span (a long async part, every task acknowledged but late) is in its evidence."""
    from tests.core.correlate.factory import seed

    span = ev(CheckpointSpan, T0 + 37_900, "jm01", "jobmanager", job_id=JOB, checkpoint_id=60, status="FAILED",
              start_ms=T0, end_ms=T0 + 37_850, full_size=8_761, checkpointed_size=8_761,
              phases=(("maxAsyncMs", 37_600), ("maxStartDelayMs", 12), ("unacknowledgedSubtasks", 0)))
    [v] = run(seed() + [span])
    assert v.root_cause.code == "HDFS_DIRECTORY_SCAN"
    [line] = [e.summary for e in v.evidence if e.type == "checkpoint_span"]
    assert "longest start delay 12 ms, async part 37600 ms" in line
