"""Flink's checkpoint spans with per-task and per-subtask children, and where subtasks ran, on real lines.

The lines are the lab's (Flink 2.3.0 standalone on Hadoop 3.4.1, `traces.checkpoint.span-detail-level:
CHILDREN_SPANS_PER_SUBTASK`, the Slf4j trace reporter; tests/data/lab/3.4.1-2.3.0/, README there), read from the
captured logs as they are, and Flink 1.20.1's span without children (tests/data/lab/3.3.6-1.20.1/backpressure/).
"""

from __future__ import annotations

from pathlib import Path

from sample_cases import run

from correlator.core.events import CheckpointChildSpan, CheckpointSpan, Event, TaskDeployed, TaskManagerStarted
from correlator.core.ingest.ingest import SourceHint

LAB = Path(__file__).resolve().parents[3] / "data" / "lab"
SLOW_DISK = LAB / "3.4.1-2.3.0" / "slow-disk"
JOB = "ae98bc9094d0fd7e1a497c93475e1c0f"
WRITER = "90bea66de1c231edf33913ecd54406c1"
SOURCE = "cbc357ccb763df2852fee8c4fc7d55f2"


def lines_of(path: Path, *phrases: str) -> list[str]:
    """The log's lines holding every phrase, as captured."""
    return [ln for ln in path.read_text(encoding="utf-8").splitlines() if all(p in ln for p in phrases)]


def parsed(lines: list[str], role: str) -> list[Event]:
    out = run(lines, hint=SourceHint(host="lab-jm" if role == "jobmanager" else "lab-tm", role=role))
    return [e for e in out if isinstance(e, Event)]


def test_a_failed_checkpoints_span_names_the_task_that_never_acknowledged() -> None:
    """Checkpoint 3 expired while lab-dn2's disk crawled: the Writer's task span has no end (``endTsMillis=-1``) and
    no subtask child; the source's task and its one subtask acknowledged with their phases."""
    [line] = lines_of(SLOW_DISK / "flink-root-standalonesession-0-lab-jm.log", "Reported span:", "checkpointId=3,",
                      "name=Checkpoint,")
    events = parsed([line], "jobmanager")
    [span] = [e for e in events if isinstance(e, CheckpointSpan)]
    assert (span.job_id, span.checkpoint_id, span.status, span.end_ms - span.start_ms) == (JOB, 3, "FAILED", 43)
    children = [e for e in events if isinstance(e, CheckpointChildSpan)]
    assert [(c.level, c.job_vertex_id, c.subtask, c.end_ms is None) for c in children] == [
        ("task", WRITER, None, True), ("task", SOURCE, None, False), ("subtask", SOURCE, 0, False)]
    sub = children[2]
    assert (sub.start_delay_ms, sub.alignment_ms, sub.sync_ms, sub.async_ms) == (17, 0, 2, 3)
    assert (sub.checkpointed_bytes, sub.persisted_bytes, sub.processed_bytes) == (265, 0, 0)
    assert all(c.status == "FAILED" and c.checkpoint_id == 3 and c.job_id == JOB for c in children)


def test_a_completed_checkpoints_subtask_span_carries_its_phases_and_bytes() -> None:
    [line] = lines_of(SLOW_DISK / "flink-root-standalonesession-0-lab-jm.log", "Reported span:", "checkpointId=2,",
                      "name=Checkpoint,")
    writer = [e for e in parsed([line], "jobmanager") if isinstance(e, CheckpointChildSpan)
              and e.level == "subtask" and e.job_vertex_id == WRITER]
    assert [(w.subtask, w.start_delay_ms, w.sync_ms, w.async_ms, w.checkpointed_bytes) for w in writer] == [
        (0, 17, 11, 173, 4153056)]
    assert writer[0].end_ms is not None and writer[0].end_ms - writer[0].start_ms == 192


def test_the_2_3_task_span_reads_its_slowest_subtasks_maxima() -> None:
    [line] = lines_of(SLOW_DISK / "flink-root-standalonesession-0-lab-jm.log", "Reported span:", "checkpointId=2,",
                      "name=Checkpoint,")
    [task] = [e for e in parsed([line], "jobmanager") if isinstance(e, CheckpointChildSpan) and e.level == "task"
              and e.job_vertex_id == WRITER]
    assert (task.subtask, task.async_ms, task.sync_ms, task.start_delay_ms) == (None, 173, 11, 17)


def test_a_span_without_children_reads_as_before() -> None:
    """Flink 1.20.1's span (no detail level): one checkpoint span, no child."""
    path = LAB / "3.3.6-1.20.1" / "backpressure" / "flink-root-standalonesession-0-lab-jm.log"
    lines = lines_of(path, "Reported span:", "name=Checkpoint,")
    events = parsed(lines, "jobmanager")
    spans = [e for e in events if isinstance(e, CheckpointSpan)]
    assert spans and not any(isinstance(e, CheckpointChildSpan) for e in events)
    assert all(s.phases == () and s.full_size is not None for s in spans)


def test_the_jobmanager_says_which_taskmanager_runs_each_subtask() -> None:
    lines = lines_of(SLOW_DISK / "flink-root-standalonesession-0-lab-jm.log", "Deploying ")
    deployed = [e for e in parsed(lines, "jobmanager") if isinstance(e, TaskDeployed)]
    assert len(deployed) == 4  # deployed at the start, and again by the restart after checkpoint 3 expired
    assert [(d.task, d.job_vertex_id, d.subtask, d.parallelism, d.taskmanager_id) for d in deployed[:2]] == [
        ("Source: generator -> snapshot-trigger", SOURCE, 0, 1, "127.0.0.1:48563-c7ca34"),
        ("keyed-state -> discard: Writer", WRITER, 0, 1, "127.0.0.1:48563-c7ca34")]
    assert deployed[0].taskmanager_address == "localhost"


def test_a_taskmanager_names_its_own_resource_id() -> None:
    lines = lines_of(SLOW_DISK / "flink-root-taskexecutor-0-lab-tm.log", "Starting TaskManager with ResourceID")
    [started] = [e for e in parsed(lines, "taskmanager") if isinstance(e, TaskManagerStarted)]
    assert (started.resource_id, started.host) == ("127.0.0.1:48563-c7ca34", "lab-tm")


def test_a_checkpoint_nothing_acknowledged_has_no_span_of_its_own_but_its_tasks_are_read() -> None:
    """The NameNode paused: checkpoint 4's span has ``endTsMillis=-1`` (no acknowledgement at all); it gives no
    checkpoint span (an end is what one says), while both task spans, without an end, are read."""
    run_dir = LAB / "3.4.1-2.3.0" / "namenode-pause"
    [line] = lines_of(run_dir / "flink-root-standalonesession-0-lab-jm.log", "Reported span:", "checkpointId=4,",
                      "name=Checkpoint,")
    events = parsed([line], "jobmanager")
    assert not any(isinstance(e, CheckpointSpan) for e in events)
    children = [e for e in events if isinstance(e, CheckpointChildSpan)]
    assert [(c.level, c.job_vertex_id, c.end_ms) for c in children] == [("task", WRITER, None), ("task", SOURCE, None)]
