"""Reject noise before any per-line regex: one multi-pattern scan for the fixed phrases every useful record contains.

The core ships a stdlib scanner (one combined ``re`` alternation); faster engines (hyperscan, Aho-Corasick) live
in adapters and are injected through :class:`Scanner`, keeping the core free of third-party imports.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from correlator.core.ingest.parse.flink import RULES as FLINK_RULES
from correlator.core.ingest.parse.gc import RULES as GC_RULES
from correlator.core.ingest.parse.hdfs import RULES as HDFS_RULES
from correlator.core.ingest.parse.hdfs_client import RULES as CLIENT_RULES
from correlator.core.ingest.parse.kafka import BROKER_RULES as KAFKA_BROKER_RULES
from correlator.core.ingest.parse.kafka import CLIENT_RULES as KAFKA_CLIENT_RULES
from correlator.core.ingest.parse.refusals import REFUSALS
from correlator.core.ingest.parse.s3_access import PHRASES as ACCESS_PHRASES
from correlator.core.ingest.parse.wording import triggers
from correlator.core.ingest.write_lines import NO_WRITE_LINES, StdlibWriteReader, WriteLines, WriteReader
from correlator.core.ingest.writes import CLOSE_PHRASE, OPEN_PHRASE, RECEIVED_PHRASE

FLINK_TRIGGERS = triggers(FLINK_RULES + CLIENT_RULES)
"""Generated from the Flink and HDFS client wording tables, as every trigger of a parser's table below: a wording a
parser reads is never filtered out before it is read."""
HDFS_TRIGGERS = triggers(HDFS_RULES)
"""The HDFS parser's wordings, block-write lines aside (``WRITE_PHRASES``)."""
REFUSAL_TRIGGERS = triggers(REFUSALS)
"""HDFS refusing a write (a limit, safe mode, no DataNode left), in a daemon's record or a client's cause chain."""
GC_TRIGGERS = triggers(GC_RULES)
"""A JVM's collections and safepoint stops, in its GC log."""
ACCESS_TRIGGERS = ACCESS_PHRASES
"""An object store's access log records: its writes (for their time) and its throttles."""
KAFKA_TRIGGERS = triggers(KAFKA_CLIENT_RULES + KAFKA_BROKER_RULES)
"""An exactly-once Kafka sink's transactions: the producer's configuration, the committer's failures, the broker's
aborts."""
TRIGGERS: tuple[str, ...] = (FLINK_TRIGGERS + HDFS_TRIGGERS + REFUSAL_TRIGGERS + GC_TRIGGERS + ACCESS_TRIGGERS
                             + KAFKA_TRIGGERS)
WRITE_PHRASES = (OPEN_PHRASE, CLOSE_PHRASE, RECEIVED_PHRASE)
"""Block-write lines: decided by the ``WriteTracker`` (mostly counted), not parsed as triggers."""
PHRASES: tuple[str, ...] = TRIGGERS + WRITE_PHRASES
"""Everything a scanner looks for; a hit's phrase index ``>= WRITE_FROM`` is a block-write line."""
WRITE_FROM = len(TRIGGERS)

OPEN_INDEX = WRITE_FROM
"""Phrase index of ``Receiving BP-``; ``CLOSE_INDEX`` (the clienttrace ``op: HDFS_WRITE``) follows it."""
CLOSE_INDEX = WRITE_FROM + 1
RECEIVED_INDEX = WRITE_FROM + 2
"""``Received BP-``: a replica copied in from another DataNode ends (rare: a block holding one goes line by line)."""
RECEIVED_BYTES = RECEIVED_PHRASE.encode()

NOTHING, TRIGGER, WRITE = 0, 1, 2


@dataclass(frozen=True, slots=True)
class BlockHits:
    """Where a block's phrases are, kept apart by kind: a busy DataNode's block holds a hundred write phrases for
    every trigger, and the block path reads the write lines as whole lists, never one hit at a time."""

    triggers: list[tuple[int, int]] = field(default_factory=list)
    """``(offset, phrase index)`` of every trigger phrase, by ascending offset."""
    writes: WriteLines = NO_WRITE_LINES
    """Every write phrase, and what its pattern read there (a ``WriteReader``'s)."""
    received: list[int] = field(default_factory=list)
    """Offsets of every ``Received BP-`` (see :func:`with_received`)."""

    def __len__(self) -> int:
        return len(self.triggers) + len(self.writes.opens) + len(self.writes.closes) + len(self.received)

    @property
    def opens(self) -> list[int]:
        """Offsets of every write-start phrase, ascending."""
        return self.writes.opens

    @property
    def closes(self) -> list[int]:
        """Offsets of every write-end phrase, ascending."""
        return self.writes.closes

    def merged(self) -> list[tuple[int, int]]:
        """All hits as ``(offset, phrase index)`` by ascending offset (for a block whose writes go line by line)."""
        return sorted([*self.triggers, *((o, OPEN_INDEX) for o in self.opens),
                       *((c, CLOSE_INDEX) for c in self.closes), *((r, RECEIVED_INDEX) for r in self.received)])


def with_received(found: BlockHits, block: bytes) -> BlockHits:
    """``found`` and the block's replica-transfer ends: the write readers do not read them (a plan pairs clienttraces
    only), so a block holding one has its writes decided line by line."""
    at = block.find(RECEIVED_BYTES)
    if at < 0:
        return found
    received = []
    while at >= 0:
        received.append(at)
        at = block.find(RECEIVED_BYTES, at + len(RECEIVED_BYTES))
    return BlockHits(found.triggers, found.writes, received)


class Scanner(Protocol):
    """Finds the phrases of :data:`PHRASES` in a line, and where (with which phrase) in a byte block."""

    write_reader: WriteReader

    def classify(self, text: str) -> int:
        """``TRIGGER`` if a trigger phrase occurs, else ``WRITE`` if a block-write phrase does, else ``NOTHING``."""
        ...

    def hits(self, block: bytes) -> BlockHits:
        """Every phrase occurrence in ``block`` (an offset within the phrase's line), by kind; the write phrases as
        the scanner's ``WriteReader`` reads them."""
        ...


class ReScanner:
    """The stdlib engine: one compiled alternation of the escaped phrases (no groups: they defeat ``re``'s literal
    search); the phrase a match found is looked up by its text. In blocks it looks for triggers only: the write
    phrases are its ``WriteReader``'s."""

    name = "re"

    def __init__(self, phrases: Sequence[str] = PHRASES, write_reader: WriteReader | None = None) -> None:
        ordered = sorted(set(phrases), key=len, reverse=True)
        alternation = "|".join(re.escape(p) for p in ordered)
        self._index = {p: phrases.index(p) for p in ordered}
        self._bytes_index = {p.encode(): i for p, i in self._index.items() if i < WRITE_FROM}
        self._text = re.compile(alternation)
        self._bytes = re.compile("|".join(re.escape(p) for p in ordered if self._index[p] < WRITE_FROM).encode())
        self.write_reader: WriteReader = write_reader or StdlibWriteReader()

    def classify(self, text: str) -> int:
        return classify_hits(self._index[m.group()] for m in self._text.finditer(text))

    def hits(self, block: bytes) -> BlockHits:
        index = self._bytes_index
        return BlockHits([(m.start(), index[m.group()]) for m in self._bytes.finditer(block)],
                         self.write_reader.find(block))


def classify_hits(ids: Iterable[int]) -> int:
    found = NOTHING
    for index in ids:
        if index < WRITE_FROM:
            return TRIGGER
        found = WRITE
    return found


def grep_pattern(phrases: Sequence[str] = PHRASES) -> str:
    """The same phrases as one POSIX ERE, for ``grep -E`` baselines."""
    special = set("\\.[]()*+?{}|^$")
    return "|".join("".join("\\" + c if c in special else c for c in p) for p in phrases)
