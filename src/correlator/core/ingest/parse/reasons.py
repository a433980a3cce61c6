"""Flink's checkpoint failure reasons (``CheckpointFailureReason`` messages of 1.9-2.x, the decline exceptions of
1.7/1.8) → the verdict's failure kinds, and whether Flink counts the failure against
``execution.checkpointing.tolerable-failed-checkpoints``.

One row per message, as the enum words it; the first row whose phrase the reason contains wins. ``counted`` is the
enum's own rule (``isCountedAgainstFailureThreshold`` of the 2.x enum; older releases are not checked here): only
I/O exceptions while triggering, asynchronous failures, declines, expiries and finalize failures bring a job closer to
its restart.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Reason:
    phrase: str
    kind: str
    counted: bool


REASONS: tuple[Reason, ...] = (
    Reason("Could not materialize checkpoint", "async_materialize", True),
    Reason("Asynchronous task checkpoint failed", "async_materialize", True),
    Reason("sharing the ChannelState file", "async_materialize", False),
    Reason("Checkpoint expired before completing", "expired", True),
    Reason("Failure to finalize checkpoint", "finalize", True),
    Reason("Could not finalize the pending checkpoint", "finalize", True),
    Reason("Checkpoint was declined (tasks not ready)", "declined", False),
    Reason("Checkpoint was declined (task is closing)", "declined", False),
    Reason("Checkpoint was declined because one input stream is finished", "declined", False),
    Reason("Checkpoint was declined", "declined", True),
    Reason("Task received cancellation from one of its inputs", "declined", False),
    Reason("barrier from newer checkpoint", "declined", False),
    Reason("alignment phase needed to buffer more", "declined", True),
    Reason("was not running", "declined", False),
    Reason("does not support checkpointing", "declined", True),
    Reason("Trigger checkpoint failure", "trigger", False),
    Reason("IO-problem detected", "trigger", True),
    Reason("An Exception occurred while triggering the checkpoint", "trigger", True),
    Reason("Not all required tasks are currently running", "trigger", False),
    Reason("Blocking output edge exists in running tasks", "trigger", False),
    Reason("The minimum time between checkpoints is still pending", "trigger", False),
    Reason("The maximum number of concurrent checkpoints is exceeded", "trigger", False),
    Reason("The maximum number of queued checkpoint requests exceeded", "trigger", False),
    Reason("Periodic checkpoint scheduler is shut down", "trigger", False),
    Reason("Task has failed", "task_failure", False),
    Reason("Task local checkpoint failure", "task_failure", False),
    Reason("Unknown task for the checkpoint to notify", "task_failure", False),
    Reason("The job has failed", "task_failure", False),
    Reason("FailoverRegion is restarting", "task_failure", False),
    Reason("Checkpoint has been subsumed", "other", False),
    Reason("CheckpointCoordinator shutdown", "other", False),
    Reason("Checkpoint Coordinator is suspending", "other", False),
)


def reason_of(text: str) -> Reason | None:
    """The row whose phrase ``text`` contains, the first in table order."""
    return next((r for r in REASONS if r.phrase in text), None)


def kind_of_reason(reason: str, *, default: str = "other") -> str:
    """The failure kind a reason text names; ``default`` when no row matches."""
    found = reason_of(reason)
    return found.kind if found is not None else default
