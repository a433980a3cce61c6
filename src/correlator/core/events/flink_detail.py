"""Flink's detail on a checkpoint: its trace spans, where each subtask runs, the settings it logs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from correlator.core.events.base import TEXT_LIMIT, Event


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckpointSpan(Event):
    """Flink's trace span of one checkpoint (1.19+, ``traces.reporter.*``: the Slf4j reporter logs it). Its end is
    the last acknowledgement received, so a failed checkpoint's span says how far acknowledgements got."""

    type: ClassVar[str] = "checkpoint_span"
    job_id: str
    checkpoint_id: int
    status: str
    start_ms: int
    end_ms: int
    full_size: int | None = None
    checkpointed_size: int | None = None
    phases: tuple[tuple[str, int], ...] = ()
    """Further numeric attributes as Flink names them (later versions add per-phase sums and maxima)."""
    waiting_on: tuple[str, ...] = ()
    """Tasks (job vertices, by name) with subtasks that never acknowledged it: from the REST statistics."""

    def __post_init__(self) -> None:  # pairs arrive as lists from JSON and snapshots
        object.__setattr__(self, "phases", tuple((str(k), int(v)) for k, v in self.phases))
        object.__setattr__(self, "waiting_on", tuple(str(w)[:TEXT_LIMIT] for w in self.waiting_on))


SpanLevel = Literal["task", "subtask"]
"""Which child of a checkpoint's span (``traces.checkpoint.span-detail-level``): one task (job vertex) with its
subtasks' maxima, or one subtask."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckpointChildSpan(Event):
    """One task's or subtask's part of a checkpoint, a child of its span (2.x with a span detail level that has
    children). A task whose subtasks never acknowledged has no end (``end_ms`` None) and no subtask children: which
    part of the job held a failed checkpoint, and, for those that did acknowledge, where their time went."""

    type: ClassVar[str] = "checkpoint_child_span"
    job_id: str
    checkpoint_id: int
    status: str
    """The checkpoint's status (its span's ``checkpointStatus``)."""
    level: SpanLevel
    job_vertex_id: str
    subtask: int | None
    """The subtask's index (``subtaskId``); None for a task's span."""
    start_ms: int
    end_ms: int | None
    start_delay_ms: int | None = None
    """From the trigger to the barrier's arrival: barriers stuck behind buffered records."""
    alignment_ms: int | None = None
    sync_ms: int | None = None
    async_ms: int | None = None
    """The asynchronous part: the upload of the snapshot to the checkpoint storage."""
    checkpointed_bytes: int | None = None
    persisted_bytes: int | None = None
    processed_bytes: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskDeployed(Event):
    """The JobManager deployed one subtask (a job vertex's ``index``/``parallelism``) to a TaskManager: where a
    subtask of a checkpoint's spans ran. The line names no job; a vertex id is one job graph's."""

    type: ClassVar[str] = "task_deployed"
    task: str
    job_vertex_id: str
    subtask: int
    parallelism: int
    attempt_id: str
    taskmanager_id: str
    """The TaskManager's resource id (``127.0.0.1:40223-fc5358``, a pod name, a YARN container)."""
    taskmanager_address: str | None = None
    """The host part Flink printed after ``@``."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskManagerStarted(Event):
    """A TaskManager's own log names its resource id at start: which log (host) a deployment's TaskManager is."""

    type: ClassVar[str] = "taskmanager_started"
    resource_id: str


@dataclass(frozen=True, slots=True, kw_only=True)
class FlinkSetting(Event):
    """A duration setting as Flink logged its configuration at start: the timeout a checkpoint trend is judged
    against before any checkpoint has expired to show it, the heartbeat timeout a lost TaskManager was silent for."""

    type: ClassVar[str] = "flink_setting"
    key: str
    value_ms: int
    job_id: str | None = None
    """Set for one job (its own checkpoint configuration, as the REST API's ``/jobs/<id>/checkpoints/config`` gives
    it, which covers a timeout set in the job's code); ``None``: the cluster's configuration."""
