"""What each event type is called where people read it (the text verdict, the timeline's legend): one place, so the
words agree and no internal name (``dn_lock_held``) reaches a reader."""

from __future__ import annotations

from collections.abc import Mapping

from correlator.core.events import (
    BlockAllocated,
    BlockWrite,
    CheckpointChildSpan,
    CheckpointCompleted,
    CheckpointDeclined,
    CheckpointExpired,
    CheckpointFailed,
    CheckpointLateAck,
    CheckpointSpan,
    CheckpointTriggered,
    DatasetLockHeld,
    DatasetLockWait,
    DirectoryScanReconcile,
    DirectoryScanStats,
    DnWriteError,
    HdfsClientError,
    HdfsClientSlow,
    HdfsRefusal,
    JobStatus,
    JvmPause,
    NameNodeLockHeld,
    SlowIo,
    TaskManagerLost,
    TaskStatus,
)

EVENT_LABELS: Mapping[str, str] = {
    DatasetLockHeld.type: "DataNode lock held",
    DatasetLockWait.type: "DataNode lock wait",
    DirectoryScanReconcile.type: "scanner reconcile",
    DirectoryScanStats.type: "scanner totals",
    SlowIo.type: "slow disk/mirror/ack",
    BlockWrite.type: "block write",
    BlockAllocated.type: "block allocated",
    JvmPause.type: "JVM pause",
    NameNodeLockHeld.type: "NameNode lock held",
    HdfsClientSlow.type: "client slow ack",
    HdfsClientError.type: "client error",
    DnWriteError.type: "DataNode write error",
    HdfsRefusal.type: "HDFS refused the write",
    CheckpointSpan.type: "checkpoint duration",
    CheckpointChildSpan.type: "subtask's checkpoint",
    CheckpointTriggered.type: "checkpoint triggered",
    CheckpointCompleted.type: "checkpoint completed",
    CheckpointExpired.type: "checkpoint expired",
    CheckpointFailed.type: "checkpoint failed",
    CheckpointDeclined.type: "checkpoint declined",
    CheckpointLateAck.type: "late acknowledgement",
    TaskStatus.type: "task status",
    JobStatus.type: "job status",
    TaskManagerLost.type: "TaskManager lost",
}


def event_label(kind: str) -> str:
    """A type this table does not know yet is said under its own name, its underscores as spaces."""
    return EVENT_LABELS.get(kind) or kind.replace("_", " ")
