"""Which subtask held a failed checkpoint, on which TaskManager, and in which phase: from Flink's child spans.

With a span detail level that has children (2.x), a failed checkpoint's span carries a span per task and per subtask.
A subtask that never acknowledged has no span: the one missing beside its task's parallelism, as the JobManager
deployed it, held the checkpoint (a task none of whose subtasks acknowledged also has no end; one with some that did
ends at the last of them, so the parallelism is what tells). The spans cannot say where a subtask
that never acknowledged spent its time; the storage side can: a block of the checkpoint allocated means its upload
had begun (the async part), none while the NameNode's log covers the checkpoint means it never got that far (start
delay: barriers stuck behind buffered records, alignment, or the sync part), and its last acknowledged checkpoint
shows how its phases stood. A subtask that did acknowledge, last, is named with its longest phase.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from correlator.core.correlate.cases import path_ids
from correlator.core.correlate.context import Context
from correlator.core.correlate.scene import Reading
from correlator.core.correlate.explanation import and_join, seconds
from correlator.core.correlate.facts import Placement
from correlator.core.correlate.items import item
from correlator.core.correlate.ranking import Window
from correlator.core.events import BlockAllocated, CheckpointChildSpan, HdfsClientSlow
from correlator.core.explain.causes import Code

Phase = Literal["start_delay", "alignment", "sync", "async"]
PHASE_WORDS: dict[Phase, str] = {
    "start_delay": "start delay (barriers stuck behind buffered records)",
    "alignment": "alignment (waiting for the barriers of every input)",
    "sync": "synchronous part (the snapshot in the task thread)",
    "async": "asynchronous part (the upload of its state to the checkpoint storage)",
}
Upload = Literal["began", "never_began", "storage_held", "unknown"]
"""What the storage side shows of the checkpoint's upload: a block of it allocated; none while the NameNode's log
covers it; none while the verdict's storage cause held the storage (the upload waited on it); nothing known."""
STORAGE_CAUSES = frozenset(c for c in Code if not c.startswith("FLINK_")) - {
    Code.UNEXPLAINED, Code.INSUFFICIENT_DATA, Code.TASKMANAGER_JVM_PAUSE}
"""Codes that blame the storage: under one of them no block allocated is the storage's doing, not the task's."""


@dataclass(frozen=True, slots=True)
class Holder:
    """The subtask that held a checkpoint, where it ran, and what is known of its phases."""

    job_vertex_id: str
    subtasks: tuple[int, ...]
    """Its index (several when more than one never acknowledged); empty when the task's parallelism is unknown and
    more than one of its subtasks may be missing."""
    placements: tuple[Placement, ...]
    """Where those subtasks ran, as far as the JobManager's deployments say."""
    acknowledged: bool
    """It acknowledged, last; else it never did."""
    span: CheckpointChildSpan
    """Its own span (acknowledged), or its task's span without an end."""
    phase: Phase | None
    phase_ms: int | None
    upload: Upload
    others_ms: int | None
    """The latest acknowledgement of any other subtask, after the trigger (its earliest child span's start)."""
    earlier: CheckpointChildSpan | None = None
    """Its span in the job's last checkpoint before this one that it acknowledged (one that never did only)."""
    everyone: bool = False
    """No subtask of the job acknowledged (every task span without an end): all of them held it."""
    waited: tuple[str, tuple[str, ...]] | None = None
    """A block of the checkpoint its TaskManager's HDFS client waited on, and the DataNodes the NameNode placed it on
    (hosts where their own lines named their address)."""


def phases_of(span: CheckpointChildSpan) -> tuple[tuple[Phase, int], ...]:
    """The span's four phase durations that it reported, in checkpoint order."""
    pairs: tuple[tuple[Phase, int | None], ...] = (("start_delay", span.start_delay_ms),
                                                   ("alignment", span.alignment_ms), ("sync", span.sync_ms),
                                                   ("async", span.async_ms))
    return tuple((p, ms) for p, ms in pairs if ms is not None)


def longest_phase(span: CheckpointChildSpan) -> tuple[Phase, int] | None:
    known = phases_of(span)
    return max(known, key=lambda pm: pm[1]) if known else None


def held_by(ctx: Context, window: Window, code: Code) -> Holder | None:
    """The subtask that held the case's checkpoint, when its child spans were logged; else None. ``code``: the
    verdict's, which says whether a missing upload is the storage's doing."""
    if ctx.job_id is None or ctx.checkpoint_id is None:
        return None
    children = [e for e in ctx.evidence if isinstance(e, CheckpointChildSpan) and e.job_id == ctx.job_id
                and e.checkpoint_id == ctx.checkpoint_id]
    if not children:
        return None
    subtasks = [e for e in children if e.level == "subtask"]
    trigger = min(e.start_ms for e in children)
    tasks = [e for e in children if e.level == "task"]
    if tasks and not subtasks and all(t.end_ms is None for t in tasks):
        return _nobody(ctx, window, tasks, code)
    for task in tasks:
        missing = _missing(ctx, task, subtasks)
        if missing is not None:
            return _never_acknowledged(ctx, window, task, missing, subtasks, trigger, code)
    acked = [e for e in subtasks if e.end_ms is not None]
    if not acked:
        return None
    last = max(acked, key=lambda e: (e.end_ms or 0, e.job_vertex_id, e.subtask or 0))
    longest = longest_phase(last)
    others = [e.end_ms - trigger for e in acked if e is not last and e.end_ms is not None]
    index = last.subtask or 0
    return Holder(last.job_vertex_id, (index,), _placed(ctx, last.job_vertex_id, (index,)), True, last,
                  longest[0] if longest else None, longest[1] if longest else None, "unknown",
                  max(others) if others else None)


def _missing(ctx: Context, task: CheckpointChildSpan, subtasks: list[CheckpointChildSpan]) -> tuple[int, ...] | None:
    """The task's subtasks that never acknowledged (empty: some, which is unknown); None when all did. A task span
    ends at its last acknowledged subtask's end, so only one none of whose subtasks acknowledged has no end: the
    others are told by the task's parallelism, as the JobManager deployed it."""
    vertex = task.job_vertex_id
    reported = {e.subtask for e in subtasks if e.job_vertex_id == vertex}
    parallelism = next((p.parallelism for (v, _), p in ctx.placements.items() if v == vertex), None)
    if parallelism is not None:
        missing = tuple(i for i in range(parallelism) if i not in reported)
        return missing or None
    if task.end_ms is not None:
        return None
    return (0,) if not reported else ()


def _never_acknowledged(ctx: Context, window: Window, task: CheckpointChildSpan, indices: tuple[int, ...],
                        subtasks: list[CheckpointChildSpan], trigger: int, code: Code) -> Holder:
    vertex = task.job_vertex_id
    others = [e.end_ms - trigger for e in subtasks if e.end_ms is not None]
    upload = _upload(ctx, window, code)
    earlier = _earlier(ctx, vertex, indices[0]) if len(indices) == 1 else None
    placed = _placed(ctx, vertex, indices)
    waited = _client_waited(ctx, window, placed[0].taskmanager_host) if len(placed) == 1 else None
    return Holder(vertex, indices, placed, False, task, "async" if upload in ("began", "storage_held") else None,
                  None, upload, max(others) if others else None, earlier=earlier, waited=waited)


def _nobody(ctx: Context, window: Window, tasks: list[CheckpointChildSpan], code: Code) -> Holder:
    """Every task of the checkpoint without an end: no subtask acknowledged, wherever it ran."""
    placed = tuple(p for t in tasks for (v, _), p in sorted(ctx.placements.items()) if v == t.job_vertex_id)
    upload = _upload(ctx, window, code)
    hosts = {p.taskmanager_host for p in placed}
    waited = _client_waited(ctx, window, next(iter(hosts))) if len(hosts) == 1 else None
    return Holder(tasks[0].job_vertex_id, (), placed, False, tasks[0],
                  "async" if upload in ("began", "storage_held") else None, None, upload, None, everyone=True,
                  waited=waited)


def _client_waited(ctx: Context, window: Window, host: str | None) -> tuple[str, tuple[str, ...]] | None:
    """The block of the checkpoint that the TaskManager's own HDFS client waited on longest, and where the NameNode
    placed it: the subtask's write joined with its DataNodes."""
    if host is None or ctx.summary.kind != "expired":
        return None
    placed = {e.block: e.replicas for e in ctx.evidence if isinstance(e, BlockAllocated)
              and path_ids(e.path) == (ctx.job_id, ctx.checkpoint_id)}
    waits = [e for e in ctx.evidence if isinstance(e, HdfsClientSlow) and e.host == host and e.block
             and window.start_ms - ctx.skew_ms <= e.ts_ms <= window.end_ms + ctx.skew_ms]
    for wait in sorted(waits, key=lambda e: -e.duration_ms):
        block = (wait.block or "").rsplit(":", 1)[-1]
        if block in placed:
            return block, tuple(ctx.ip_hosts.get(a, a) for a in placed[block])
    return None


def _placed(ctx: Context, vertex: str, indices: tuple[int, ...]) -> tuple[Placement, ...]:
    return tuple(p for i in indices if (p := ctx.placements.get((vertex, i))) is not None)


def _upload(ctx: Context, window: Window, code: Code) -> Upload:
    """Whether the checkpoint's upload had begun, as the storage side shows it: a block of it allocated, or none
    while the NameNode's log covers the checkpoint (under a storage cause: the storage held it). Only a checkpoint
    that ran out of time has a phase that took it (its TaskManager may have said so: a failed asynchronous part once
    the job tolerates the expiry); one declined or aborted is told by its cause."""
    assert ctx.job_id is not None and ctx.checkpoint_id is not None
    if ctx.summary.kind not in ("expired", "async_materialize"):
        return "unknown"
    for e in ctx.evidence:
        if isinstance(e, BlockAllocated) and e.ts_ms <= window.end_ms + ctx.skew_ms \
                and path_ids(e.path) == (ctx.job_id, ctx.checkpoint_id):
            return "began"
    covered = any(role == "namenode" and clock.first_ts_ms <= window.start_ms and clock.max_ts_ms >= window.end_ms
                  for (_, role), clock in ctx.sources.items())
    if not covered:
        return "unknown"
    return "storage_held" if code in STORAGE_CAUSES else "never_began"


def _earlier(ctx: Context, vertex: str, index: int | None) -> CheckpointChildSpan | None:
    """The subtask's span in the latest earlier checkpoint it acknowledged."""
    if index is None:
        return None
    mine = [e for e in ctx.evidence if isinstance(e, CheckpointChildSpan) and e.level == "subtask"
            and e.job_id == ctx.job_id and e.job_vertex_id == vertex and e.subtask == index
            and e.end_ms is not None and e.checkpoint_id < (ctx.checkpoint_id or 0)]
    return max(mine, key=lambda e: e.checkpoint_id) if mine else None


def who(holder: Holder) -> str:
    """The subtask in words: its index of the parallelism, its task, its TaskManager and that TaskManager's log."""
    placed = holder.placements
    task = f"'{placed[0].task}'" if placed else f"job vertex {holder.job_vertex_id}"
    if holder.everyone:
        task = and_join(dict.fromkeys(f"'{p.task}'" for p in placed)) if placed else "the job"
    index = "no subtask" if holder.everyone else _indices(holder)
    tms = list(dict.fromkeys(p.taskmanager_id + (f" ({p.taskmanager_host})" if p.taskmanager_host
                                                  and p.taskmanager_host != p.taskmanager_id else "")
                             for p in placed))
    where = f" on TaskManager{'s' if len(tms) > 1 else ''} {' and '.join(tms)}" if tms else ""
    return f"{index} of {task}{where}"


def _indices(holder: Holder) -> str:
    """``subtask 2/2``, ``subtasks 1/2 and 2/2``, or ``a subtask`` when which is unknown."""
    if not holder.subtasks:
        return "a subtask"
    of = f"/{holder.placements[0].parallelism}" if holder.placements else ""
    return ("subtask " if len(holder.subtasks) == 1 else "subtasks ") + \
        " and ".join(f"{i + 1}{of}" for i in holder.subtasks)


def duration(ms: int) -> str:
    return f"{ms} ms" if ms < 1000 else seconds(ms)


def phase_list(span: CheckpointChildSpan) -> str:
    return ", ".join(f"{p.replace('_', ' ')} {duration(ms)}" for p, ms in phases_of(span))


def holder_sentence(holder: Holder) -> str:
    """The verdict's words on the subtask that held the checkpoint and where its time went."""
    others = (f", while every other subtask acknowledged within {duration(holder.others_ms)} of the trigger"
              if holder.others_ms is not None else "")
    if holder.acknowledged:
        span = holder.span
        took = duration((span.end_ms or span.start_ms) - span.start_ms)
        said = f"Flink's per-subtask spans show {who(holder)} acknowledged last, {took} after its span began{others}"
        if holder.phase is not None and holder.phase_ms is not None:
            said += f": its {PHASE_WORDS[holder.phase]} took {duration(holder.phase_ms)} ({phase_list(span)})"
        return said + "."
    said = f"Flink's per-subtask spans show {who(holder)} " + (
        "acknowledged the checkpoint" if holder.everyone else f"never acknowledged the checkpoint{others}")
    if holder.waited is not None:
        block, datanodes = holder.waited
        said += (f"; its TaskManager's HDFS client waited on {block} of the checkpoint, which the NameNode placed on "
                 f"{and_join(datanodes)}: the time went in its {PHASE_WORDS['async']}")
    elif holder.upload == "began":
        said += ("; a block of the checkpoint was allocated, so its upload had begun: the time went in its "
                 f"{PHASE_WORDS['async']}")
    elif holder.upload == "storage_held":
        said += ("; no block of the checkpoint was allocated while the storage cause above held it: the time went in "
                 f"its {PHASE_WORDS['async']}")
    elif holder.upload == "never_began":
        said += ("; no block of the checkpoint was allocated, so its upload never began: the time went in its "
                 f"{PHASE_WORDS['start_delay']}, alignment or synchronous part")
    if holder.everyone:
        said = said.replace(" in its ", " in their ").replace(" of its state", " of their state")
    said += "."
    if holder.earlier is not None:
        said += (f" In checkpoint {holder.earlier.checkpoint_id}, the last it acknowledged, it took "
                 f"{phase_list(holder.earlier)}.")
    return said


def holder_line(holder: Holder) -> str:
    """The span as evidence."""
    span = holder.span
    if holder.acknowledged:
        return f"Flink's span of {who(holder)} in checkpoint {span.checkpoint_id}: {phase_list(span)}"
    task = f"'{holder.placements[0].task}'" if holder.placements else f"job vertex {holder.job_vertex_id}"
    said = f"Flink's span of task {task} in checkpoint {span.checkpoint_id} ({span.status}): "
    if span.end_ms is None:
        return said + "no end, none of its subtasks acknowledged"
    return said + (f"its last acknowledgement {duration(span.end_ms - span.start_ms)} after it began, none from "
                   f"{_indices(holder)}")


def subtask_reading(ctx: Context, window: Window, code: Code) -> Reading:
    """What the child spans add to any verdict (its ``code``): the subtask that held the checkpoint, its TaskManager
    and phase."""
    holder = held_by(ctx, window, code)
    if holder is None:
        return Reading()
    span = holder.span
    measured = (span.start_ms, span.end_ms) if span.end_ms is not None and span.end_ms > span.start_ms else None
    return Reading(closing=(holder_sentence(holder),), evidence=(item(span, holder_line(holder), measured),))
