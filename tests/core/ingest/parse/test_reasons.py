"""Every CheckpointFailureReason message of Flink 1.9-2.x has its row: the failure kind, and whether Flink counts it
against the tolerable failures (the enum's own rule in 2.x)."""

from __future__ import annotations

import pytest

from correlator.core.explain.verdict import FAILURE_KINDS
from correlator.core.ingest.parse.reasons import REASONS, kind_of_reason, reason_of

ENUM_2X = {
    # message as the enum words it -> (kind, counted)
    "Periodic checkpoint scheduler is shut down.": ("trigger", False),
    "The maximum number of queued checkpoint requests exceeded": ("trigger", False),
    "The minimum time between checkpoints is still pending. Checkpoint will be triggered after the minimum time.":
        ("trigger", False),
    "Not all required tasks are currently running.": ("trigger", False),
    "An Exception occurred while triggering the checkpoint. IO-problem detected.": ("trigger", True),
    "Blocking output edge exists in running tasks.": ("trigger", False),
    "Asynchronous task checkpoint failed.": ("async_materialize", True),
    "The checkpoint was aborted due to exception of other subtasks sharing the ChannelState file.":
        ("async_materialize", False),
    "Checkpoint expired before completing.": ("expired", True),
    "Checkpoint has been subsumed.": ("other", False),
    "Checkpoint was declined.": ("declined", True),
    "Checkpoint was declined (tasks not ready)": ("declined", False),
    "Checkpoint was declined (task is closing)": ("declined", False),
    "Checkpoint was canceled because a barrier from newer checkpoint was received.": ("declined", False),
    "Task received cancellation from one of its inputs": ("declined", False),
    "Checkpoint was declined because one input stream is finished": ("declined", False),
    "CheckpointCoordinator shutdown.": ("other", False),
    "Checkpoint Coordinator is suspending.": ("other", False),
    "FailoverRegion is restarting.": ("task_failure", False),
    "Task has failed.": ("task_failure", False),
    "Task local checkpoint failure.": ("task_failure", False),
    "Unknown task for the checkpoint to notify.": ("task_failure", False),
    "Failure to finalize checkpoint.": ("finalize", True),
    "Trigger checkpoint failure.": ("trigger", False),
}


@pytest.mark.parametrize("message", sorted(ENUM_2X))
def test_every_enum_message_has_its_kind_and_count(message: str) -> None:
    found = reason_of(f"Failed to trigger or complete checkpoint 7 for job 1a3b. Failure reason: {message}")
    assert found is not None, message
    assert (found.kind, found.counted) == ENUM_2X[message]


def test_rows_are_valid_and_none_is_shadowed() -> None:
    assert all(r.kind in FAILURE_KINDS for r in REASONS)
    for row in REASONS:
        assert reason_of(row.phrase) is row, f"{row.phrase!r} is taken by an earlier row"
    assert kind_of_reason("something else entirely", default="declined") == "declined"
