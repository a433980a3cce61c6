"""What each event type is called where people read it (the text verdict, the timeline's legend): one place, so the
words agree and no internal name (``dn_lock_held``) reaches a reader."""

from __future__ import annotations

from collections.abc import Mapping

EVENT_LABELS: Mapping[str, str] = {
    "dn_lock_held": "DataNode lock held",
    "dn_lock_wait": "DataNode lock wait",
    "directory_scan_reconcile": "scanner reconcile",
    "directory_scan_stats": "scanner totals",
    "slow_io": "slow disk/mirror/ack",
    "block_write": "block write",
    "block_allocated": "block allocated",
    "jvm_pause": "JVM pause",
    "nn_lock_held": "NameNode lock held",
    "hdfs_client_slow": "client slow ack",
    "hdfs_client_error": "client error",
    "dn_write_error": "DataNode write error",
    "hdfs_refusal": "HDFS refused the write",
    "checkpoint_span": "checkpoint duration",
    "checkpoint_triggered": "checkpoint triggered",
    "checkpoint_completed": "checkpoint completed",
    "checkpoint_expired": "checkpoint expired",
    "checkpoint_failed": "checkpoint failed",
    "checkpoint_declined": "checkpoint declined",
    "checkpoint_late_ack": "late acknowledgement",
    "task_status": "task status",
    "job_status": "job status",
    "taskmanager_lost": "TaskManager lost",
}


def event_label(kind: str) -> str:
    """A type this table does not know yet is said under its own name, its underscores as spaces."""
    return EVENT_LABELS.get(kind) or kind.replace("_", " ")
