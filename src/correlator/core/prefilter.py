"""Reject noise before any per-line regex: one multi-pattern scan for the fixed phrases every useful record contains.

The core ships a stdlib scanner (one combined ``re`` alternation); faster engines (hyperscan, Aho-Corasick) live
in adapters and are injected through :class:`Scanner`, keeping the core free of third-party imports.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol

FLINK_TRIGGERS = (
    "Triggering checkpoint ",
    "Triggering Checkpoint ",
    "Completed checkpoint ",
    " expired before completing",
    "Decline checkpoint ",
    "Discarding checkpoint ",
    "Received late message for now expired checkpoint",
    "Could not materialize checkpoint ",
    "asynchronous part of checkpoint ",
    "Failed to trigger or complete checkpoint ",
    "Failed to trigger checkpoint ",
    "Could not finalize the pending checkpoint ",
    "Could not complete the pending checkpoint ",
    "Could not complete snapshot ",
    "Could not perform checkpoint ",
    ") switched from ",
    " (Version: ",
    "Slow waitForAckedSeqno",
    "Slow ReadProcessor read fields",
    "No ack received, took ",
    "Exception in createBlockOutputStream",
    "Abandoning ",
    "Excluding datanode ",
    "Could not get block locations.",
    "DataStreamer Exception",
    "Error while syncing",
)
HDFS_TRIGGERS = (
    "Lock held time above threshold",
    "Waited above threshold",
    " Total blocks: ",
    "Periodic Directory Tree Verification scan",
    "Deleted a metadata file ",
    "from memory with missing block file",
    "Added missing block to memory",
    "Deleting missing provided block",
    "Will retry on next scan",
    "does not exist. Updating it to the file found during scan",
    "Updating generation stamp for block",
    "does not match file found by scan",
    "Updating size of block",
    " is not a regular file.",
    "as corrupt due to length mismatch",
    "Slow BlockReceiver write ",
    "Slow flushOrSync took ",
    "Slow manageWriterOsCache took ",
    "Slow PacketResponder send ack",
    "Receiving BP-",
    "op: HDFS_WRITE",
    " lock held for ",
    "-lock reports: ",
    "Detected pause in JVM",
    "STARTUP_MSG: ",
    "BLOCK* allocate",
    "Opened streaming server at ",
    "DataXceiver error processing WRITE_BLOCK",
    "opWriteBlock ",
    "Exception for ",
    " commands from NN",
)
GC_TRIGGERS = (
    "[GC ",
    "[Full GC",
    ") Pause ",
    " Pause Full",
    " Pause Young",
    " Pause Remark",
    " Pause Cleanup",
    " Pause Initial Mark",
    "application threads were stopped",
    'Safepoint "',
)
TRIGGERS: tuple[str, ...] = FLINK_TRIGGERS + HDFS_TRIGGERS + GC_TRIGGERS


class Scanner(Protocol):
    """Finds whether any trigger phrase occurs in a text, and where in a byte block."""

    def matches(self, text: str) -> bool: ...

    def offsets(self, block: bytes) -> list[int]:
        """Start offsets (ascending, possibly with repeats) of trigger occurrences in ``block``."""
        ...


class ReScanner:
    """The stdlib engine: one compiled alternation of the escaped phrases, for text and for bytes."""

    name = "re"

    def __init__(self, phrases: Sequence[str] = TRIGGERS) -> None:
        ordered = sorted(set(phrases), key=len, reverse=True)
        alternation = "|".join(re.escape(p) for p in ordered)
        self._text = re.compile(alternation)
        self._bytes = re.compile(alternation.encode())

    def matches(self, text: str) -> bool:
        return self._text.search(text) is not None

    def offsets(self, block: bytes) -> list[int]:
        return [m.start() for m in self._bytes.finditer(block)]


def grep_pattern(phrases: Sequence[str] = TRIGGERS) -> str:
    """The same phrases as one POSIX ERE, for ``grep -E`` baselines."""
    special = set("\\.[]()*+?{}|^$")
    return "|".join("".join("\\" + c if c in special else c for c in p) for p in phrases)
