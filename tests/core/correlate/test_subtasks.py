"""The subtask that held a failed checkpoint, its TaskManager and phase, from Flink's per-subtask child spans.

Synthetic cases around the shapes the lab's Flink 2.3.0 logged (tests/data/lab/3.4.1-2.3.0/): a task span with no
end and no subtask child for the subtasks that never acknowledged, a subtask span with its four phases for each that
did. Whatever the verdict's cause, its explanation then ends with the subtask's words.
"""

from __future__ import annotations

from correlator.core.correlate.cases import CaseSummary
from correlator.core.correlate.context import Context
from correlator.core.correlate.facts import Facts, Placement
from correlator.core.correlate.ranking import Window
from correlator.core.correlate.subtasks import held_by, holder_sentence
from correlator.core.correlate.watermarks import SourceClock
from correlator.core.events import CheckpointChildSpan, Event, HdfsClientSlow, TaskDeployed, TaskManagerStarted
from correlator.core.explain.causes import Code
from tests.core.correlate.factory import JOB, T0, ev
from tests.core.correlate.test_anatomy import checkpoints, namenode_heartbeats, run, traffic

WRITER = "90bea66de1c231edf33913ecd54406c1"
SOURCE = "cbc357ccb763df2852fee8c4fc7d55f2"
FAILING = 10


def placements() -> list[Event]:
    """The source on tm-a; the writer's two subtasks on tm-a and tm-b, whose logs name their resource ids."""
    at = T0 - 200_000
    out: list[Event] = [ev(TaskManagerStarted, at - 5_000, "tm-a", "taskmanager", resource_id="10.0.0.1:40001-aaaaaa"),
                        ev(TaskManagerStarted, at - 5_000, "tm-b", "taskmanager", resource_id="10.0.0.2:40002-bbbbbb")]
    for vertex, task, index, tm in ((SOURCE, "Source: generator", 0, "10.0.0.1:40001-aaaaaa"),
                                    (WRITER, "Writer", 0, "10.0.0.1:40001-aaaaaa"),
                                    (WRITER, "Writer", 1, "10.0.0.2:40002-bbbbbb")):
        out.append(ev(TaskDeployed, at, "jm01", "jobmanager", task=task, job_vertex_id=vertex, subtask=index,
                      parallelism=1 if vertex == SOURCE else 2, attempt_id=f"e_{vertex}_{index}_0",
                      taskmanager_id=tm, taskmanager_address="localhost"))
    return out


def child(chk: int, vertex: str, index: int | None, start: int, end: int | None, status: str = "FAILED",
          **phases: int) -> Event:
    return ev(CheckpointChildSpan, (end or start) + 10_000, "jm01", "jobmanager", job_id=JOB, checkpoint_id=chk,
              status=status, level="task" if index is None else "subtask", job_vertex_id=vertex, subtask=index,
              start_ms=start, end_ms=end, **phases)


def failed_spans(writer_acked: bool = False) -> list[Event]:
    """The failing checkpoint's children: the source acknowledged in 20 ms; the writer's subtask 1 acknowledged,
    its subtask 2 did not (or both did, the second after 9.5 s)."""
    out = [child(FAILING, SOURCE, None, T0, T0 + 20), child(FAILING, SOURCE, 0, T0, T0 + 20, start_delay_ms=2,
                                                             alignment_ms=0, sync_ms=3, async_ms=5),
           child(FAILING, WRITER, 0, T0, T0 + 300, start_delay_ms=40, alignment_ms=0, sync_ms=10, async_ms=250)]
    if writer_acked:
        out += [child(FAILING, WRITER, None, T0, T0 + 9_600),
                child(FAILING, WRITER, 1, T0, T0 + 9_600, start_delay_ms=30, alignment_ms=0, sync_ms=20,
                      async_ms=9_500)]
    else:
        out.append(child(FAILING, WRITER, None, T0, None))
    return out


def earlier_span() -> Event:
    """The writer's subtask 2 in checkpoint 9, which completed: a long start delay already."""
    start = T0 - 10_000
    return child(FAILING - 1, WRITER, 1, start, start + 4_600, status="COMPLETED", start_delay_ms=4_200,
                 alignment_ms=0, sync_ms=15, async_ms=300)


def explanation(events: list[Event]) -> tuple[str, str, list[str]]:
    [v] = run(events)
    return v.root_cause.code, v.root_cause.explanation, [e.summary for e in v.evidence]


def test_the_subtask_that_never_acknowledged_is_named_with_its_taskmanager() -> None:
    """No block of the checkpoint while the NameNode watched: the upload never began, and its last acknowledged
    checkpoint shows where its time went then."""
    events = traffic() + namenode_heartbeats(T0 + 300_000) + checkpoints() + placements() + failed_spans()
    code, text, evidence = explanation(events + [earlier_span()])
    assert code == "FLINK_BACKPRESSURE"
    assert ("subtask 2/2 of 'Writer' on TaskManager 10.0.0.2:40002-bbbbbb (tm-b) never acknowledged the checkpoint, "
            "while every other subtask acknowledged within 300 ms of the trigger") in text
    assert "its upload never began" in text and "start delay (barriers stuck behind buffered records)" in text
    assert "In checkpoint 9, the last it acknowledged, it took start delay 4.2 s, alignment 0 ms" in text
    assert any("task 'Writer' in checkpoint 10 (FAILED): no end" in e for e in evidence)


def test_an_upload_that_began_puts_the_time_in_the_async_part() -> None:
    events = traffic() + namenode_heartbeats(T0 + 300_000) + checkpoints(allocate_failing=True) + placements() \
        + failed_spans()
    _, text, _ = explanation(events)
    assert "subtask 2/2 of 'Writer' on TaskManager 10.0.0.2:40002-bbbbbb (tm-b)" in text
    assert "its upload had begun: the time went in its asynchronous part (the upload of its state" in text


def test_a_task_whose_other_subtask_acknowledged_still_shows_the_missing_one() -> None:
    """The shape Flink 2.3.0 logged with two TaskManagers: the writer's task span ends at its one acknowledged
    subtask, and the other subtask has no span; the parallelism deployed tells which is missing. Its TaskManager's
    own HDFS client waited on a block of the checkpoint: the NameNode placed it on dn02."""
    spans = [e for e in failed_spans() if not (isinstance(e, CheckpointChildSpan) and e.job_vertex_id == WRITER
                                               and e.level == "task")]
    spans.append(child(FAILING, WRITER, None, T0, T0 + 300))
    wait = ev(HdfsClientSlow, T0 + 4_000, "tm-b", "client", op="readAck", duration_ms=4_000, threshold_ms=300,
              block="BP-1-10.20.30.40-1:blk_1073741835_1011", datanodes=("10.20.30.42:9866",))
    events = traffic() + namenode_heartbeats(T0 + 300_000) + checkpoints(allocate_failing=True) + placements() \
        + spans + [wait]
    _, text, _ = explanation(events)
    assert ("subtask 2/2 of 'Writer' on TaskManager 10.0.0.2:40002-bbbbbb (tm-b) never acknowledged the checkpoint"
            in text), text
    assert ("its TaskManager's HDFS client waited on blk_1073741835_1011 of the checkpoint, which the NameNode placed "
            "on dn02") in text, text


def test_when_every_subtask_acknowledged_the_last_one_is_named_with_its_longest_phase() -> None:
    events = traffic() + namenode_heartbeats(T0 + 300_000) + checkpoints(allocate_failing=True) + placements() \
        + failed_spans(writer_acked=True)
    _, text, evidence = explanation(events)
    assert ("subtask 2/2 of 'Writer' on TaskManager 10.0.0.2:40002-bbbbbb (tm-b) acknowledged last, 9.6 s after its "
            "span began, while every other subtask acknowledged within 300 ms of the trigger: its asynchronous part "
            "(the upload of its state to the checkpoint storage) took 9.5 s") in text
    assert any("start delay 30 ms, alignment 0 ms, sync 20 ms, async 9.5 s" in e for e in evidence)


def test_two_subtasks_that_never_acknowledged_are_named_with_both_taskmanagers() -> None:
    spans = [e for e in failed_spans() if not (isinstance(e, CheckpointChildSpan) and e.job_vertex_id == WRITER
                                               and e.level == "subtask")]
    events = traffic() + namenode_heartbeats(T0 + 300_000) + checkpoints(allocate_failing=True) + placements() + spans
    _, text, _ = explanation(events)
    assert ("subtasks 1/2 and 2/2 of 'Writer' on TaskManagers 10.0.0.1:40001-aaaaaa (tm-a) and "
            "10.0.0.2:40002-bbbbbb (tm-b) never acknowledged the checkpoint, while every other subtask acknowledged "
            "within 20 ms of the trigger") in text


def test_without_deployments_the_subtask_is_named_by_its_vertex() -> None:
    events = traffic() + namenode_heartbeats(T0 + 300_000) + checkpoints(allocate_failing=True) + failed_spans()
    _, text, _ = explanation(events)
    assert f"a subtask of job vertex {WRITER} never acknowledged" in text and " on TaskManager" not in text


def test_without_child_spans_nothing_is_added() -> None:
    events = traffic() + namenode_heartbeats(T0 + 300_000) + checkpoints() + placements()
    _, text, _ = explanation(events)
    assert "per-subtask" not in text


def test_a_redeployment_after_the_trigger_does_not_move_the_subtask() -> None:
    """The restart after the failure deploys the subtask again, elsewhere: the checkpoint ran where it was before."""
    moved = ev(TaskDeployed, T0 + 12_000, "jm01", "jobmanager", task="Writer", job_vertex_id=WRITER, subtask=1,
               parallelism=2, attempt_id=f"e_{WRITER}_1_1", taskmanager_id="10.0.0.1:40001-aaaaaa")
    events = traffic() + namenode_heartbeats(T0 + 300_000) + checkpoints() + placements() + failed_spans()
    _, text, _ = explanation(events + [moved])
    assert "on TaskManager 10.0.0.2:40002-bbbbbb (tm-b)" in text


def test_placements_survive_a_snapshot() -> None:
    facts = Facts()
    for e in placements():
        facts.learn(e)
    again = Facts.restore(facts.snapshot())
    assert again.placements("default", T0) == facts.placements("default", T0)
    assert again.placements("default", T0)[(WRITER, 1)] == Placement("Writer", 2, "10.0.0.2:40002-bbbbbb", "tm-b")



def _context(events: list[Event]) -> Context:
    """A decision's context over the failing checkpoint: its child spans and placements, the NameNode's log
    covering it."""
    facts = Facts()
    for e in events:
        facts.learn(e)
    summary = CaseSummary("expired", T0 + 10_000, T0, None, 10_000, None, None, ("tm-a",), (), ())
    return Context("default", JOB, FAILING, summary, tuple(e for e in events if isinstance(e, CheckpointChildSpan)),
                   {}, {("nn01", "namenode"): SourceClock(T0 - 60_000, T0 + 60_000)}, {}, T0 + 20_000, 2_000,
                   placements=facts.placements("default", T0))


def test_no_block_under_a_storage_cause_is_the_storages_doing() -> None:
    """A NameNode that stalled allocates nothing: under a storage verdict that is the upload waiting on storage (the
    async part), not a task that never got to its upload."""
    ctx = _context(placements() + failed_spans())
    window = Window(T0, T0 + 10_000, 10_000)
    held = held_by(ctx, window, Code.NAMENODE_SLOW)
    assert held is not None and (held.upload, held.phase, held.subtasks) == ("storage_held", "async", (1,))
    assert "while the storage cause above held it: the time went in its asynchronous part" in holder_sentence(held)
    alone = held_by(ctx, window, Code.FLINK_BACKPRESSURE)
    assert alone is not None and (alone.upload, alone.phase) == ("never_began", None)


def test_when_no_subtask_acknowledged_every_task_and_its_taskmanager_is_named() -> None:
    spans = [child(FAILING, WRITER, None, T0, None), child(FAILING, SOURCE, None, T0, None)]
    ctx = _context(placements() + spans)
    held = held_by(ctx, Window(T0, T0 + 10_000, 10_000), Code.NAMENODE_SLOW)
    assert held is not None and held.everyone
    assert holder_sentence(held).startswith(
        "Flink's per-subtask spans show no subtask of 'Writer' and 'Source: generator' on TaskManagers "
        "10.0.0.1:40001-aaaaaa (tm-a) and 10.0.0.2:40002-bbbbbb (tm-b) acknowledged the checkpoint; no block of the "
        "checkpoint was allocated while the storage cause above held it: the time went in their asynchronous part")
