"""Typed events: what a parsed log record says, in a shape the engine and the wire share.

Each event is a frozen, slotted dataclass whose class attribute ``type`` is its name on the wire (the event JSON's
``type``); defining one registers it (:func:`event_classes`), and ``event_dicts`` converts them to and from plain data,
one schema for every adapter. Code names an event type by its class (``SlowIo.type``), never by its string, and a
sub-kind's values are a ``Literal`` type here, so every producer and reader of a name is found by search and checked
by the type checker.

The events live in one module per family (``checkpoints``, ``hdfs``, ``flink_detail``, ``objectstore``, ``kafka``)
on a shared ``base``, imported here in the order they register (the registry's order) and re-exported: code imports
them from ``correlator.core.events``.
"""

from __future__ import annotations

from correlator.core.events.base import (
    CLIENT_ROLE as CLIENT_ROLE,
    OBJECT_STORE_ROLE as OBJECT_STORE_ROLE,
    ROLES as ROLES,
    TEXT_LIMIT as TEXT_LIMIT,
    SlowIoKind as SlowIoKind,
    PIPELINE_STEPS as PIPELINE_STEPS,
    RefusalKind as RefusalKind,
    ClientErrorKind as ClientErrorKind,
    DnWriteErrorKind as DnWriteErrorKind,
    BlockWritePhase as BlockWritePhase,
    NameNodeLockKind as NameNodeLockKind,
    event_classes as event_classes,
    iso_ms as iso_ms,
    Event as Event,
)
from correlator.core.events.checkpoints import (
    CheckpointTriggered as CheckpointTriggered,
    CheckpointCompleted as CheckpointCompleted,
    CheckpointExpired as CheckpointExpired,
    CheckpointDeclined as CheckpointDeclined,
    CheckpointFailed as CheckpointFailed,
    CheckpointLateAck as CheckpointLateAck,
    JobStatus as JobStatus,
    TaskStatus as TaskStatus,
    TaskManagerLost as TaskManagerLost,
    HdfsClientSlow as HdfsClientSlow,
)
from correlator.core.events.hdfs import (
    DatasetLockHeld as DatasetLockHeld,
    DatasetLockWait as DatasetLockWait,
    DirectoryScanStats as DirectoryScanStats,
    DirectoryScanReconcile as DirectoryScanReconcile,
    DirectoryScanConfig as DirectoryScanConfig,
    SlowIo as SlowIo,
    BlockWrite as BlockWrite,
    BlockAllocated as BlockAllocated,
    HdfsRefusal as HdfsRefusal,
    HdfsClientError as HdfsClientError,
    DnWriteError as DnWriteError,
    DatanodeAddress as DatanodeAddress,
    SourceProgress as SourceProgress,
    LogUnread as LogUnread,
    NameNodeLockHeld as NameNodeLockHeld,
    JvmPause as JvmPause,
    DaemonStart as DaemonStart,
)
from correlator.core.events.flink_detail import (
    CheckpointSpan as CheckpointSpan,
    SpanLevel as SpanLevel,
    CheckpointChildSpan as CheckpointChildSpan,
    TaskDeployed as TaskDeployed,
    TaskManagerStarted as TaskManagerStarted,
    FlinkSetting as FlinkSetting,
)
from correlator.core.events.objectstore import (
    CheckpointStorage as CheckpointStorage,
    STORE_THROTTLE_CODES as STORE_THROTTLE_CODES,
    STORE_CREDENTIAL_CODES as STORE_CREDENTIAL_CODES,
    STORE_WRITES as STORE_WRITES,
    HELD_STORE_REQUEST_MS as HELD_STORE_REQUEST_MS,
    SLOW_STORE_REQUEST_MS as SLOW_STORE_REQUEST_MS,
    ObjectStoreRequest as ObjectStoreRequest,
)
from correlator.core.events.kafka import (
    KAFKA_ROLE as KAFKA_ROLE,
    CommitFailureKind as CommitFailureKind,
    SINK_TRANSACTIONAL_ID as SINK_TRANSACTIONAL_ID,
    sink_checkpoint as sink_checkpoint,
    sink_prefix as sink_prefix,
    TransactionSetting as TransactionSetting,
    TransactionAborted as TransactionAborted,
    TransactionCommitFailed as TransactionCommitFailed,
)
