"""What every event is: its fields, its wire name's registry, the roles and sub-kinds the families share."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
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


def clip_text(event: object, *names: str) -> None:
    for name in names:
        value = getattr(event, name)
        if isinstance(value, str) and len(value) > TEXT_LIMIT:
            object.__setattr__(event, name, value[: TEXT_LIMIT - 1] + "…")


def iso_ms(ts_ms: int) -> str:
    """Render epoch milliseconds as ISO-8601 UTC with millisecond precision and a ``Z`` suffix."""
    return _iso_second(ts_ms // 1000) + f"{ts_ms % 1000:03d}Z"


@lru_cache(maxsize=4096)
def _iso_second(second: int) -> str:
    """The second's part, remembered: every printed event renders its time, and a log's events share their seconds."""
    return datetime.fromtimestamp(second, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.")


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
