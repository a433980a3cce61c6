"""HDFS: what the DataNodes and the NameNode say of the write path, and each source's progress."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from correlator.core.events.base import (
    SlowIoKind, RefusalKind, ClientErrorKind, DnWriteErrorKind, BlockWritePhase, NameNodeLockKind, clip_text, Event,
)


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
        clip_text(self, "path")


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
        clip_text(self, "detail", "path")


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
        clip_text(self, "exception", "path")


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
        clip_text(self, "exception")


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
