"""Failure cases: every line about one failed checkpoint, merged into one summary per (cluster, job, checkpoint).

Case events are kept raw and summarised only when the case is decided, restricted to event time at or before the
decision point, so the summary depends on event time only — never on which source's lines arrived first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from correlator.core.events import (
    CheckpointDeclined,
    CheckpointExpired,
    CheckpointFailed,
    CheckpointLateAck,
    CheckpointSpan,
    CheckpointTriggered,
    Event,
    HdfsClientSlow,
    TaskStatus,
)

CHECKPOINT_PATH = re.compile(r"/([0-9a-f]{32})/chk-(\d+)(?:/|$)")
CHECKPOINT_IN_TEXT = re.compile(r"checkpoint (\d+)")
STORAGE_MARKERS = (
    "could not flush",
    "output stream",
    "hdfs",
    "ioexception",
    "datanode",
    "expired before completing",
    "timeout",
    "timed out",
    "interruptedioexception",
    "cancellationexception",
    "io-problem detected",  # CheckpointFailureReason.IO_EXCEPTION: the trigger's own file system calls failed
)

CONSEQUENCES = (
    "was not running",
    "tasks not ready",
    "not being executed",
    "not in state running",
    "barrier from newer checkpoint",
    "has been subsumed",
    "coordinator shutdown",
    "coordinator is suspending",
    "the job has failed",
    "failoverregion is restarting",
    "task received cancellation",
    "task is closing",
    "partially closed",
)
"""Decline/failure reasons that are the consequence of a restart or shutdown, not a failure to explain."""

CaseKey = tuple[str, str, int]
"""(cluster, job id or "" when no line names it, checkpoint id)."""

FAILURE_SIGNALS = (CheckpointExpired, CheckpointDeclined, CheckpointFailed)


def path_ids(path: str | None) -> tuple[str, int] | None:
    """Job id and checkpoint number carried by a checkpoint path (``…/<job-id>/chk-<n>/…``)."""
    if not path:
        return None
    m = CHECKPOINT_PATH.search(path)
    return (m.group(1), int(m.group(2))) if m else None


def is_consequence(event: Event) -> bool:
    """A decline or failure caused by a restart/shutdown already under way (Flink logs one per task)."""
    text = ""
    if isinstance(event, CheckpointDeclined):
        text = event.reason or ""
    elif isinstance(event, CheckpointFailed):
        text = event.message
    lowered = text.lower()
    return bool(lowered) and any(c in lowered for c in CONSEQUENCES)


def case_key_of(event: Event, *, after_loss: bool = False) -> CaseKey | None:
    """The case an event belongs to, or ``None`` when it is not about a failed checkpoint (or only a consequence).

    ``after_loss``: the JobManager had just lost a TaskManager, so a checkpoint aborted by the restart that followed
    is a failure to explain: the loss is the cause of that restart, and no other line fails the checkpoint.
    """
    if is_consequence(event) and not (after_loss and isinstance(event, CheckpointFailed)):
        return None
    if isinstance(event, CheckpointFailed | CheckpointDeclined | CheckpointExpired | CheckpointLateAck):
        job = event.job_id
        if not job and isinstance(event, CheckpointFailed):
            ids = path_ids(event.path)
            job = ids[0] if ids else None
        return (event.cluster, job or "", event.checkpoint_id)
    if isinstance(event, CheckpointSpan) and event.status == "FAILED":
        return (event.cluster, event.job_id, event.checkpoint_id)
    if isinstance(event, TaskStatus) and event.to_state == "FAILED" and event.cause:
        m = CHECKPOINT_IN_TEXT.search(event.cause)
        if m:
            ids = path_ids(event.cause)
            return (event.cluster, event.job_id or (ids[0] if ids else ""), int(m.group(1)))
    return None


def is_failure_signal(event: Event) -> bool:
    return isinstance(event, FAILURE_SIGNALS) or (isinstance(event, TaskStatus) and event.to_state == "FAILED")


@dataclass(frozen=True, slots=True)
class CaseSummary:
    """What the Flink side says about one failed checkpoint."""

    kind: str
    failed_at_ms: int
    started_at_ms: int | None
    write_end_ms: int | None
    timeout_ms: int | None
    operator: str | None
    path: str | None
    hosts: tuple[str, ...]
    texts: tuple[str, ...]
    refs: tuple[Event, ...]

    @property
    def duration_ms(self) -> int | None:
        if self.started_at_ms is None:
            return None
        end = self.write_end_ms if self.write_end_ms is not None else self.failed_at_ms
        return max(0, end - self.started_at_ms)

    @property
    def storage_related(self) -> bool:
        """Whether storage may explain the failure: an expiry, a state file in the cause chain, or I/O words."""
        if self.kind == "expired" or self.path is not None:
            return True
        joined = " ".join(self.texts).lower()
        return not joined or any(marker in joined for marker in STORAGE_MARKERS)


def failure_at(events: list[Event]) -> int | None:
    times = [e.ts_ms for e in events if is_failure_signal(e)]
    return min(times) if times else None


def _kind(events: list[Event]) -> str:
    failed_kinds = [e.kind for e in events if isinstance(e, CheckpointFailed)]
    if "async_materialize" in failed_kinds:
        return "async_materialize"
    for kind in ("finalize", "trigger", "declined", "expired"):
        if kind in failed_kinds:
            return kind
    if any(isinstance(e, CheckpointDeclined) for e in events):
        return "declined"
    if any(isinstance(e, CheckpointExpired) for e in events):
        return "expired"
    if failed_kinds:
        return failed_kinds[0] if failed_kinds[0] in ("task_failure", "other") else "other"
    return "task_failure"


def _rounded_timeout(delta_ms: int) -> int:
    return int(round(delta_ms / 1000.0)) * 1000 if delta_ms >= 1000 else delta_ms


def _timeout(ordered: list[Event], trigger: CheckpointTriggered | None) -> int | None:
    """The checkpoint timeout a failure logged, or the one its expiry shows (rounded) after its trigger."""
    logged = next((e.timeout_ms for e in ordered if isinstance(e, CheckpointFailed) and e.timeout_ms), None)
    if logged is not None:
        return logged
    expiries = [e.ts_ms for e in ordered if isinstance(e, CheckpointExpired)]
    return _rounded_timeout(min(expiries) - trigger.ts_ms) if expiries and trigger is not None else None


def _write_end(ordered: list[Event], started: int | None, client_slow: list[HdfsClientSlow]) -> int | None:
    """When the checkpoint's write is last known to have gone on: a failed upload, a late acknowledgement, the client's
    slow-write lines, the failure's own duration; ``None`` when that lies before its start."""
    write_ends = [
        e.ts_ms
        for e in ordered
        if (isinstance(e, CheckpointFailed) and e.kind == "async_materialize") or isinstance(e, CheckpointLateAck)
    ]
    write_ends += [c.ts_ms for c in client_slow if c.path]
    for e in ordered:
        if isinstance(e, CheckpointFailed) and e.duration_ms is not None and started is not None:
            write_ends.append(started + e.duration_ms)
    write_end = max(write_ends) if write_ends else None
    return None if write_end is not None and started is not None and write_end < started else write_end


def summarize(
    events: list[Event], trigger: CheckpointTriggered | None, client_slow: list[HdfsClientSlow]
) -> CaseSummary:
    """Merge a case's raw events (already cut at the decision time) into one summary."""
    ordered = sorted(events, key=lambda e: (e.ts_ms, e.type, e.host, e.ref))
    failed_at = failure_at(ordered)
    if failed_at is None:
        failed_at = ordered[0].ts_ms
    started: int | None = None
    if trigger is not None:
        exact = trigger.trigger_ts_ms
        started = exact if exact is not None and abs(exact - trigger.ts_ms) <= 1000 else trigger.ts_ms
    timeout = _timeout(ordered, trigger)
    write_end = _write_end(ordered, started, client_slow)
    operator = next((e.operator for e in ordered if isinstance(e, CheckpointFailed) and e.operator), None)
    if operator is None:
        operator = next((e.task for e in ordered if isinstance(e, CheckpointDeclined) and e.task), None)
    path = next((e.path for e in ordered if isinstance(e, CheckpointFailed) and e.path), None)
    if path is None:
        path = next((c.path for c in client_slow if c.path), None)
    hosts = sorted({e.host for e in ordered if e.role == "taskmanager"} | {c.host for c in client_slow})
    texts: list[str] = []
    for e in ordered:
        if isinstance(e, CheckpointFailed) and e.message:
            texts.append(e.message)
        elif isinstance(e, CheckpointDeclined) and e.reason:
            texts.append(e.reason)
        elif isinstance(e, TaskStatus) and e.cause:
            texts.append(e.cause)
    refs = tuple(([trigger] if trigger is not None else []) + ordered)
    return CaseSummary(
        kind=_kind(ordered),
        failed_at_ms=failed_at,
        started_at_ms=started,
        write_end_ms=write_end,
        timeout_ms=timeout,
        operator=operator,
        path=path,
        hosts=tuple(hosts),
        texts=tuple(texts),
        refs=refs,
    )
