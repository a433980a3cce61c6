"""What the ingest is told: its settings, what the transport knows of a record's origin, and what a block gave."""

from __future__ import annotations

from dataclasses import dataclass

from correlator.core.events import Event
from correlator.core.ingest.records import ParseError

Output = Event | ParseError


@dataclass(frozen=True, slots=True)
class SourceHint:
    """What the transport knows about a record's origin (any field may be None)."""

    cluster: str | None = None
    host: str | None = None
    file: str | None = None
    role: str | None = None
    family: str | None = None


@dataclass(frozen=True, slots=True)
class BlockRead:
    """What :meth:`Ingest.feed_block` made of a block: its outputs, and how many lines it held (so the caller's next
    block starts at the right line without counting them again)."""

    outputs: list[Output]
    newlines: int


@dataclass(frozen=True, slots=True)
class IngestConfig:
    tz: str = "UTC"
    default_cluster: str = "default"
    idle_flush_ms: int = 2000
    max_line_bytes: int = 1_048_576
    min_gc_pause_ms: int = 0
    max_record_lines: int = 2000
    slow_write_ms: int = 3000
    """A block write that ends within this of its start is routine: counted, not emitted. A write is evidence when a
    checkpoint could feel it. About a tenth of the lab's real DataNode writes are small ones taking a second or more;
    the log does not say why, and a writer sending as it produces (a checkpoint stream, a sink) would look so. The
    DataNode's own slow steps are logged on their own (``Slow BlockReceiver …``, lock and pause warnings, 300 ms
    thresholds), so a higher threshold here loses no stall the DataNode saw."""
    write_floor_mib_s: float = 32.0
    """A longer write is routine too when its bytes needed the time at this rate (a big block, not a stall)."""
    block_size_mib: int = 128
    """The cluster's ``dfs.blocksize``: an open write is evidence once a full block would have been written."""
    layout: str | None = None
    """A log4j pattern (``--layout``) whose lines are rewritten into the layout the parsers read before anything
    else; lines it does not match pass unchanged."""
