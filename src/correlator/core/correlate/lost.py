"""A TaskManager the JobManager lost while a checkpoint ran: its heartbeat timed out, the job failed over and the
pending checkpoint was aborted.

The JobManager logs the loss when ``heartbeat.timeout`` has run out, so the TaskManager had been silent for that long
before the line. The loss explains a failure only when no storage stall is strong enough on its own (a stall the logs
show always wins); a JVM pause logged on the lost TaskManager over that silence is the root, the loss its effect.
"""

from __future__ import annotations

from dataclasses import dataclass

from correlator.core.correlate.cases import CaseSummary, is_consequence
from correlator.core.correlate.evidence import overlap_ms
from correlator.core.correlate.ranking import Window
from correlator.core.correlate.watermarks import SourceClock
from correlator.core.events import CheckpointFailed, Event, JvmPause, TaskManagerLost

HEARTBEAT_KEY = "heartbeat.timeout"
HEARTBEAT_TIMEOUT_MS = 50_000
"""Flink's default ``heartbeat.timeout``: how long the TaskManager was silent before the line when the JobManager's
configuration logged none."""
LOST_TAIL_MS = 60_000
"""How long after the failure a loss still counts: an expiry shorter than the heartbeat timeout comes first."""


@dataclass(frozen=True, slots=True)
class Lost:
    event: TaskManagerLost
    where: str
    """The TaskManager's host when its id names one, else its id."""
    pause: JvmPause | None
    """The longest JVM pause logged on it during its silence."""
    timeout_ms: int
    """How long it had been silent: the heartbeat timeout."""
    timeout_logged: bool
    """Whether that is the JobManager's logged ``heartbeat.timeout`` (else Flink's default)."""


def lost_taskmanager(summary: CaseSummary, window: Window, evidence: tuple[Event, ...], skew_ms: int,
                     sources: dict[tuple[str, str], SourceClock], heartbeat_timeout_ms: int | None = None,
                     ) -> Lost | None:
    """The first TaskManager of the job lost while its checkpoint ran, if any.

    A loss counts when the TaskManager's silence meets the checkpoint's window; one naming a TaskManager host whose
    logs were read but that ran none of the failed checkpoint's tasks (``known_taskmanagers`` minus the case's hosts)
    belongs to another job. An id that names an address, not a host whose logs were read (a TaskManager bound to an
    IP), is taken for the job's one TaskManager when only one TaskManager's log goes on past the trigger.
    """
    timeout = heartbeat_timeout_ms or HEARTBEAT_TIMEOUT_MS
    known_taskmanagers = frozenset(h for (h, r) in sources if r == "taskmanager")
    running = {h for (h, r), clock in sources.items()
               if r == "taskmanager" and clock.max_ts_ms >= window.start_ms - skew_ms}
    others = known_taskmanagers - set(summary.hosts) if summary.hosts else frozenset()
    found = [e for e in evidence if isinstance(e, TaskManagerLost)
             and window.start_ms - skew_ms <= e.ts_ms <= summary.failed_at_ms + LOST_TAIL_MS
             and e.ts_ms - timeout <= window.end_ms + skew_ms
             and e.taskmanager_host not in others]
    if not found:
        return None
    first = min(found, key=lambda e: (e.ts_ms, e.taskmanager_id))
    where = first.taskmanager_host or first.taskmanager_id
    only = set(summary.hosts) if summary.hosts else running
    if where not in known_taskmanagers and len(only) == 1:
        where = only.pop()
    silent_from = first.ts_ms - timeout
    pauses = [e for e in evidence if isinstance(e, JvmPause) and e.role == "taskmanager" and e.host == where
              and overlap_ms(e.ts_ms - e.pause_ms, e.ts_ms, silent_from, first.ts_ms, skew_ms) > 0]
    return Lost(first, where, max(pauses, key=lambda e: (e.pause_ms, e.ts_ms), default=None), timeout,
                bool(heartbeat_timeout_ms))


def aborted_after_loss(event: Event, evidence: list[Event]) -> bool:
    """Whether ``event`` is a checkpoint aborted by a restart (a consequence) shortly after the JobManager of its
    cluster lost a TaskManager: the abort follows the loss within the same failover."""
    if not isinstance(event, CheckpointFailed) or not is_consequence(event):
        return False
    return any(isinstance(e, TaskManagerLost) and e.cluster == event.cluster
               and event.ts_ms - LOST_TAIL_MS <= e.ts_ms <= event.ts_ms for e in evidence)
