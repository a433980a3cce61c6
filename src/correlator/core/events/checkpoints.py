"""Flink: a checkpoint's lifecycle, its job and tasks, as the JobManager and TaskManagers log them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from correlator.core.events.base import clip_text, Event


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckpointTriggered(Event):
    type: ClassVar[str] = "checkpoint_triggered"
    job_id: str
    checkpoint_id: int
    trigger_ts_ms: int | None = None
    """The trigger's own epoch ms from ``@ <ms>``: exact, unlike the line's wall-clock timestamp."""
    checkpoint_type: str | None = None
    """``type=`` of 1.11+ (``CHECKPOINT``, ``SAVEPOINT``, ``CheckpointType{…}``); savepoints share the line."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckpointCompleted(Event):
    type: ClassVar[str] = "checkpoint_completed"
    job_id: str
    checkpoint_id: int
    duration_ms: int | None = None
    size_bytes: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckpointExpired(Event):
    type: ClassVar[str] = "checkpoint_expired"
    job_id: str
    checkpoint_id: int


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckpointDeclined(Event):
    type: ClassVar[str] = "checkpoint_declined"
    job_id: str | None = None
    checkpoint_id: int
    task: str | None = None
    attempt_id: str | None = None
    reason: str | None = None
    user_exception: str | None = None
    """The innermost cause, when it is not an I/O or HDFS exception and was thrown from user code."""
    user_frame: str | None = None
    """The first frame of that cause outside the JDK, Flink, Hadoop and Scala (``Class.method(File.java:N)``)."""
    store_error: str | None = None
    """The object store's error code the cause chain carries (the S3 client's ``Error Code: ExpiredToken``)."""

    def __post_init__(self) -> None:
        clip_text(self, "reason", "user_exception", "user_frame")


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckpointFailed(Event):
    """A checkpoint failed; ``kind`` is one of the verdict schema's failure kinds."""

    type: ClassVar[str] = "checkpoint_failed"
    job_id: str | None = None
    checkpoint_id: int
    kind: str
    operator: str | None = None
    path: str | None = None
    message: str = ""
    attempt_id: str | None = None
    timeout_ms: int | None = None
    duration_ms: int | None = None
    user_exception: str | None = None
    user_frame: str | None = None
    store_error: str | None = None
    """As :class:`CheckpointDeclined`'s."""

    def __post_init__(self) -> None:
        clip_text(self, "message", "operator", "path", "user_exception", "user_frame")


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckpointLateAck(Event):
    """A task acknowledged an already-expired checkpoint: the slow write did finish, at this time."""

    type: ClassVar[str] = "checkpoint_late_ack"
    job_id: str
    checkpoint_id: int
    attempt_id: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class JobStatus(Event):
    type: ClassVar[str] = "job_status"
    job_id: str | None = None
    job_name: str | None = None
    from_state: str
    to_state: str


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskStatus(Event):
    """A subtask attempt switched to FAILED. Flink logs every subtask's every transition; the routine ones
    (deploying, initializing, running, cancelling) are most of a job start's or restart's lines and nothing a verdict
    reads, so only failures are parsed."""

    type: ClassVar[str] = "task_status"
    job_id: str | None = None
    task: str | None = None
    attempt_id: str | None = None
    from_state: str
    to_state: str
    cause: str | None = None

    def __post_init__(self) -> None:
        clip_text(self, "cause", "task")


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskManagerLost(Event):
    """The JobManager heard no heartbeat from a TaskManager for ``heartbeat.timeout`` and let it go (its tasks fail,
    the job fails over). Logged when the timeout ran out, so the TaskManager was silent for that long before it."""

    type: ClassVar[str] = "taskmanager_lost"
    taskmanager_id: str
    taskmanager_host: str | None = None
    """The TaskManager's host where its id names one (``host:port-suffix``, a container's ``(host:port)``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class HdfsClientSlow(Event):
    """The HDFS client inside a Flink process waited long for a DataNode (slow ack, slow read of an ack)."""

    type: ClassVar[str] = "hdfs_client_slow"
    op: str
    duration_ms: int
    threshold_ms: int | None = None
    path: str | None = None
    block: str | None = None
    datanodes: tuple[str, ...] = ()
