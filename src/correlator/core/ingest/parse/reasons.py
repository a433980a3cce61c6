"""Flink checkpoint failure reasons (CheckpointFailureReason texts, 1.7/1.8 decline exceptions) → the verdict's failure kinds."""

from __future__ import annotations

_KINDS: tuple[tuple[str, str], ...] = (
    ("Could not materialize checkpoint", "async_materialize"),
    ("Asynchronous task checkpoint failed", "async_materialize"),
    ("Checkpoint expired before completing", "expired"),
    ("Failure to finalize checkpoint", "finalize"),
    ("Could not finalize the pending checkpoint", "finalize"),
    ("Checkpoint was declined", "declined"),
    ("Task received cancellation from one of its inputs", "declined"),
    ("barrier from newer checkpoint", "declined"),
    ("one input stream is finished", "declined"),
    ("alignment phase needed to buffer more", "declined"),
    ("was not running", "declined"),
    ("does not support checkpointing", "declined"),
    ("Trigger checkpoint failure", "trigger"),
    ("An Exception occurred while triggering the checkpoint", "trigger"),
    ("Not all required tasks are currently running", "trigger"),
    ("The minimum time between checkpoints is still pending", "trigger"),
    ("The maximum number of concurrent checkpoints is exceeded", "trigger"),
    ("The maximum number of queued checkpoint requests exceeded", "trigger"),
    ("Periodic checkpoint scheduler is shut down", "trigger"),
    ("Task has failed", "task_failure"),
    ("Task local checkpoint failure", "task_failure"),
    ("The job has failed", "task_failure"),
    ("FailoverRegion is restarting", "task_failure"),
)


def kind_of_reason(reason: str, *, default: str = "other") -> str:
    """The failure kind a reason text names (reference §4.4); the first matching phrase wins."""
    for phrase, kind in _KINDS:
        if phrase in reason:
            return kind
    return default
