"""Typed events: what a parsed log record says, in a shape the engine and the wire share.

Each event is a frozen, slotted dataclass whose class attribute ``type`` is its name on the wire (the event JSON's
``type``); defining one registers it (:func:`event_classes`), and ``event_dicts`` converts them to and from plain data,
one schema for every adapter. Code names an event type by its class (``SlowIo.type``), never by its string, and a
sub-kind's values are a ``Literal`` type here, so every producer and reader of a name is found by search and checked
by the type checker.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import ClassVar, Literal

CLIENT_ROLE = "client"
"""The HDFS client inside a Flink process (its own log lines, not the daemon's)."""
OBJECT_STORE_ROLE = "objectstore"
"""An object store's own request log (S3 server access logs): the storage side of a checkpoint to ``s3://``."""
ROLES = ("jobmanager", "taskmanager", "datanode", "namenode", CLIENT_ROLE, OBJECT_STORE_ROLE)
TEXT_LIMIT = 2000
"""Free text copied from a log (messages, causes) is cut here: a 10 MB stack must not become a 10 MB event."""


SlowIoKind = Literal["disk_write", "mirror_write", "flush_or_sync", "os_cache", "ack_upstream"]
"""Which DataNode write-path step was slow (``BlockReceiver`` to disk, to the mirror, ``flushOrSync``,
``manageWriterOsCache``, the ``PacketResponder``'s ack upstream)."""
PIPELINE_STEPS: tuple[SlowIoKind, ...] = ("mirror_write", "ack_upstream")
"""The slow steps that wait on another DataNode of the pipeline (the others are this DataNode's own disk)."""
RefusalKind = Literal["xceiver_limit", "no_datanodes", "pipeline_exhausted", "safe_mode", "directory_items",
                      "space_quota", "namespace_quota", "disk_full", "token_expired"]
"""Why HDFS refused a write, as its words say it."""
ClientErrorKind = Literal["create_block_output_stream", "abandon_block", "exclude_datanode", "aborting",
                          "streamer_exception", "sync_error"]
"""A write-path error of the HDFS client inside a Flink process."""
DnWriteErrorKind = Literal["dataxceiver_write_block", "op_write_block", "block_exception", "slow_nn_commands"]
"""A DataNode's own write-path error (or its slow processing of the NameNode's commands)."""
BlockWritePhase = Literal["receiving", "finished"]
NameNodeLockKind = Literal["read", "write"]
"""Which side of the NameNode's namesystem lock was held."""

_CLASSES: dict[str, type[Event]] = {}


def event_classes() -> dict[str, type[Event]]:
    """Every event class by its wire ``type``, in the order they are defined: the registry ``event_dicts`` reads."""
    return dict(_CLASSES)


def _clip(event: object, *names: str) -> None:
    for name in names:
        value = getattr(event, name)
        if isinstance(value, str) and len(value) > TEXT_LIMIT:
            object.__setattr__(event, name, value[: TEXT_LIMIT - 1] + "…")


def iso_ms(ts_ms: int) -> str:
    """Render epoch milliseconds as ISO-8601 UTC with millisecond precision and a ``Z`` suffix."""
    return datetime.fromtimestamp(ts_ms / 1000, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ts_ms % 1000:03d}Z"


@dataclass(frozen=True, slots=True, kw_only=True)
class Event:
    """Fields every event carries: when (UTC epoch ms), where (cluster, host, role) and which input line (ref)."""

    type: ClassVar[str] = "event"
    ts_ms: int
    cluster: str
    host: str
    role: str
    ref: str = ""

    def __init_subclass__(cls) -> None:
        """Register the class under its wire ``type`` (the slotted class ``dataclass`` makes replaces the first;
        no ``super()`` call: in a slotted dataclass its cell names the class before the copy)."""
        name = cls.__dict__.get("type")
        if not isinstance(name, str):
            raise TypeError(f"{cls.__qualname__} names no wire type (its class attribute ``type``)")
        known = _CLASSES.get(name)
        if known is not None and (known.__module__, known.__qualname__) != (cls.__module__, cls.__qualname__):
            raise TypeError(f"{cls.__qualname__} and {known.__qualname__} share the wire type {name!r}")
        _CLASSES[name] = cls

    @property
    def at(self) -> str:
        return iso_ms(self.ts_ms)


# --- Flink: checkpoint lifecycle -------------------------------------------------------------------------------


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
        _clip(self, "reason", "user_exception", "user_frame")


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
        _clip(self, "message", "operator", "path", "user_exception", "user_frame")


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
    type: ClassVar[str] = "task_status"
    job_id: str | None = None
    task: str | None = None
    attempt_id: str | None = None
    from_state: str
    to_state: str
    cause: str | None = None

    def __post_init__(self) -> None:
        _clip(self, "cause", "task")


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


# --- HDFS DataNode / NameNode ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class DatasetLockHeld(Event):
    """``Lock held time above threshold``: logged on release, so it covers ``[ts - held_ms, ts]``."""

    type: ClassVar[str] = "dn_lock_held"
    lock: str
    held_ms: int
    holder: str
    """First non-utility frame of the reported stack, e.g. ``DirectoryScanner.scan``."""
    stack: tuple[str, ...] = ()
    """Non-utility frames as ``Class.method``: a ``DirectoryScanner`` frame anywhere marks scanner evidence."""
    suppressed: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class DatasetLockWait(Event):
    type: ClassVar[str] = "dn_lock_wait"
    lock: str
    wait_ms: int
    waiter: str
    stack: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class DirectoryScanStats(Event):
    type: ClassVar[str] = "directory_scan_stats"
    block_pool: str
    total_blocks: int
    missing_meta: int
    missing_block: int
    missing_memory: int
    mismatched: int
    duplicate: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class DirectoryScanReconcile(Event):
    type: ClassVar[str] = "directory_scan_reconcile"
    action: str
    block: str | None = None
    count: int = 1
    """Reconcile warnings the scanner logged back to back (one per block it fixed); ``action`` and ``block`` are
    the first one's."""
    start_ts_ms: int | None = None
    """With ``count`` > 1: when the first of them was logged; ``ts_ms`` is when the last was."""


@dataclass(frozen=True, slots=True, kw_only=True)
class DirectoryScanConfig(Event):
    type: ClassVar[str] = "directory_scan_config"
    interval_ms: int | None = None
    throttle_ms_per_s: int | None = None
    enabled: bool = True
    first_scan_ms: int | None = None
    """Epoch ms of the first scan when the line gives it (absolute, or the line time plus ``starting in``)."""
    first_scan_to_minute: bool = False
    """``first_scan_ms`` is a wall time the line gave to the minute only (the JDK's short date format)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SlowIo(Event):
    """A DataNode write-path step over ``dfs.datanode.slow.io.warning.threshold.ms``; logged after it finished."""

    type: ClassVar[str] = "slow_io"
    kind: SlowIoKind
    duration_ms: int
    threshold_ms: int | None = None
    volume: str | None = None
    block_id: str | None = None
    downstream: tuple[str, ...] = ()
    count: int = 1
    """Warnings of this kind the source logged back to back (a burst, one per packet); the others' facts are the
    longest one's: ``duration_ms``, ``ref``, ``block_id``."""
    start_ts_ms: int | None = None
    """With ``count`` > 1: when the earliest of them began; ``ts_ms`` is when the last was logged."""


@dataclass(frozen=True, slots=True, kw_only=True)
class BlockWrite(Event):
    """A DataNode receiving a block (``Receiving``) or finishing it (clienttrace): links a client write to hosts."""

    type: ClassVar[str] = "block_write"
    block: str
    src: str
    dest: str
    duration_ms: int | None = None
    phase: BlockWritePhase = "receiving"
    """``receiving`` (write started) or ``finished`` (clienttrace, with the PacketResponder's duration)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class BlockAllocated(Event):
    """NameNode ``BLOCK* allocate``: the pipeline chosen for a new block of a file, in order (first = client's peer)."""

    type: ClassVar[str] = "block_allocated"
    path: str
    block: str
    replicas: tuple[str, ...] = ()
    """DataNode transfer addresses ``ip:port`` in pipeline order."""

    def __post_init__(self) -> None:
        _clip(self, "path")


@dataclass(frozen=True, slots=True, kw_only=True)
class HdfsRefusal(Event):
    """HDFS refused a write and said why: a limit reached, safe mode, no DataNode left, a full volume, an expired
    token. Logged by the daemon that refused or found in a client's cause chain (a Flink failure record)."""

    type: ClassVar[str] = "hdfs_refusal"
    kind: RefusalKind
    limit: int | None = None
    """The limit the message names (transfer threads, directory items, minReplication)."""
    value: int | None = None
    """The count that reached it (xceivers, items, DataNodes written to)."""
    path: str | None = None
    detail: str = ""
    """The refusing sentence as logged."""

    def __post_init__(self) -> None:
        _clip(self, "detail", "path")


@dataclass(frozen=True, slots=True, kw_only=True)
class HdfsClientError(Event):
    """A write-path error of the HDFS client (DataStreamer / DFSClient) inside a Flink process."""

    type: ClassVar[str] = "hdfs_client_error"
    kind: ClientErrorKind
    block: str | None = None
    path: str | None = None
    datanode: str | None = None
    """``ip:port`` the line names: the excluded DataNode, a ``firstBadLink``, or the ``remote=`` of a timeout."""
    exception: str | None = None

    def __post_init__(self) -> None:
        _clip(self, "exception", "path")


@dataclass(frozen=True, slots=True, kw_only=True)
class DnWriteError(Event):
    """A DataNode's own write-path error line (or slow command processing from the NameNode)."""

    type: ClassVar[str] = "dn_write_error"
    kind: DnWriteErrorKind
    block: str | None = None
    peer: str | None = None
    """``ip:port`` at the other end (``src:`` of a DataXceiver error)."""
    local: str | None = None
    """This DataNode's own ``ip:port`` when the line tells it (``dst:``)."""
    duration_ms: int | None = None
    exception: str | None = None

    def __post_init__(self) -> None:
        _clip(self, "exception")


@dataclass(frozen=True, slots=True, kw_only=True)
class DatanodeAddress(Event):
    """``Opened streaming server at /ip:port``: the DataNode's own transfer address, told once at start."""

    type: ClassVar[str] = "datanode_address"
    address: str


@dataclass(frozen=True, slots=True, kw_only=True)
class SourceProgress(Event):
    """A log source's own time moved on (noise lines included): coverage and watermarks follow every line.

    Emitted by the ingest for a source's first timestamped line and then at most once per ``PROGRESS_EVERY_MS``
    of its log time; it carries no finding.
    """

    type: ClassVar[str] = "source_progress"
    host_guessed: bool = False
    """The host was taken from a folder or a pod-like file name, not proved by the log or a daemon's file name."""


@dataclass(frozen=True, slots=True, kw_only=True)
class LogUnread(Event):
    """A source's log could not be read to its end: a compressed file cut off or corrupt (read up to the damage),
    or a file that could not be opened. ``ts_ms`` is its last line read (0: none). Coverage names it, so a verdict
    never takes the silence after the damage for a quiet host."""

    type: ClassVar[str] = "log_unread"
    why: str
    path: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class NameNodeLockHeld(Event):
    type: ClassVar[str] = "nn_lock_held"
    kind: NameNodeLockKind
    held_ms: int
    op: str | None = None
    start_ts_ms: int | None = None
    """3.3+ reports give the hold's start (``held at …+zone``); older ones are logged on release."""


@dataclass(frozen=True, slots=True, kw_only=True)
class JvmPause(Event):
    """A JVM or host pause (JvmPauseMonitor or a GC log); logged after it ended."""

    type: ClassVar[str] = "jvm_pause"
    pause_ms: int
    gc: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class DaemonStart(Event):
    type: ClassVar[str] = "daemon_start"
    component: str
    version: str | None = None


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


# --- Object stores: the store's own request log ----------------------------------------------------------------

@dataclass(frozen=True, slots=True, kw_only=True)
class CheckpointStorage(Event):
    """Where the cluster's checkpoints go, as the JobManager logged its configuration at start
    (``state.checkpoints.dir``; ``execution.checkpointing.dir`` since Flink 2.0): an ``hdfs://`` or object-store URI."""

    type: ClassVar[str] = "checkpoint_storage"
    uri: str


STORE_THROTTLE_CODES = frozenset({"SlowDown", "Throttling", "ThrottlingException", "RequestLimitExceeded",
                                  "TooManyRequests"})
"""Error codes with which an object store asks the client to slow down (S3's is ``SlowDown``, with 503)."""
STORE_CREDENTIAL_CODES = frozenset({"ExpiredToken", "TokenRefreshRequired", "InvalidToken", "InvalidAccessKeyId",
                                    "SignatureDoesNotMatch", "AccessDenied"})
"""Error codes with which an object store refuses a request's credentials: an expired session token, an unknown key,
a bad signature, or a principal without the permission."""
SLOW_STORE_REQUEST_MS = 1_000
"""A request the store took this long over is slow for a checkpoint's file (a few small requests each): kept at
ingest, evidence when it overlaps a failed checkpoint."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ObjectStoreRequest(Event):
    """One request as the object store logged it (an S3 server access log record): kept when the store refused it
    with a server error or a throttle, or took long over it. ``ts_ms`` is when the store received it (the record's
    time, to the second); the host is the store's log source, the bucket and key say what was written."""

    type: ClassVar[str] = "object_store_request"
    bucket: str
    key: str | None
    operation: str
    """The store's operation name (``REST.PUT.OBJECT``, ``REST.PUT.PART``, ``REST.POST.UPLOAD``…)."""
    status: int | None
    error_code: str | None = None
    """``SlowDown``, ``InternalError``…; ``None`` where the record says ``-``."""
    total_ms: int | None = None
    """The request's total time in the store (first byte received to last byte sent)."""
    request_id: str | None = None


# --- Kafka: an exactly-once sink's transactions ----------------------------------------------------------------

KAFKA_ROLE = "kafka"
"""A Kafka broker's own log (``server.log``): the side that aborts a transaction that outlived its timeout."""
CommitFailureKind = Literal["fenced"]
"""Why the Kafka sink's committer could not commit a transaction, as its words say it: its producer was fenced (the
broker aborted the transaction and bumped its epoch). The committer's other failures get kinds of their own once a
real log shows their wording."""


SINK_TRANSACTIONAL_ID = re.compile(r"^(?P<prefix>.+)-(?P<subtask>\d+)-(?P<checkpoint>\d+)$")
"""The Flink Kafka sink's transactional id: its prefix, the writer's subtask, the checkpoint it is committed with."""


def sink_checkpoint(transactional_id: str) -> int | None:
    """The checkpoint a Flink Kafka sink's transaction belongs to, where its id has the sink's shape."""
    m = SINK_TRANSACTIONAL_ID.match(transactional_id)
    return int(m["checkpoint"]) if m else None


def sink_prefix(transactional_id: str) -> str:
    """The sink's transactional id prefix (the whole id where it has another shape)."""
    m = SINK_TRANSACTIONAL_ID.match(transactional_id)
    return m["prefix"] if m else transactional_id


@dataclass(frozen=True, slots=True, kw_only=True)
class TransactionSetting(Event):
    """A transactional Kafka producer's configuration, as the Kafka client logs it when the producer is created (one
    per transaction of an exactly-once sink): how long the broker lets a transaction stay open."""

    type: ClassVar[str] = "kafka_transaction_setting"
    transactional_id: str
    timeout_ms: int
    prefix: str = ""
    """The sink's transactional id prefix (:func:`sink_prefix`): what its producers share."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TransactionAborted(Event):
    """The broker rolled back a transaction because it outlived its timeout: its records will never be read by a
    ``read_committed`` consumer, and the commit the sink attempts later fails. ``line`` is the broker's message."""

    type: ClassVar[str] = "kafka_transaction_aborted"
    transactional_id: str
    line: str

    def __post_init__(self) -> None:
        _clip(self, "line")


@dataclass(frozen=True, slots=True, kw_only=True)
class TransactionCommitFailed(Event):
    """The Kafka sink's committer could not commit a transaction when its checkpoint completed. The transaction is
    named only where the committer's request prints it; ``timeout_ms`` where the line quotes the producer's."""

    type: ClassVar[str] = "kafka_commit_failed"
    kind: CommitFailureKind
    transactional_id: str | None = None
    checkpoint_id: int | None = None
    timeout_ms: int | None = None
    message: str = ""

    def __post_init__(self) -> None:
        _clip(self, "message")
