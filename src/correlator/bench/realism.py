"""How hard a DataNode corpus is on the reader, in the measures that make real logs slow: so a generated corpus can
be held to be no kinder than the lab's real logs (``tests/bench/test_corpus_realism.py``).

* writes open when a new one starts (a busy DataNode serves several at once: their lines interleave);
* the share of writes that are small and still took a second or more (paced by their writer, or stuck): the writes
  a byte-rate rule cannot excuse, each of which the reader must look at;
* the share of continuation lines (stack traces, replica descriptions): lines that belong to another line's record.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from correlator.core.ingest.multiline import RECORD_START_BYTES
from correlator.core.ingest.writes import FLOOR_BYTES_PER_MS

_OPEN = re.compile(rb"Receiving BP-[^:\n ]*:(blk_\d+)_")
_CLOSE = re.compile(rb"op: HDFS_WRITE, .*blockid: [^:\n ]*:(blk_\d+)_\d+, duration(?:\(ns\))?: (\d+)")
_BYTES = re.compile(rb"bytes: (\d+)")
_STAMP = re.compile(rb"\d{4}-\d\d-\d\d (\d\d):(\d\d):(\d\d),(\d{3})")
OPEN_FOR_MS = 60_000
"""A write with no end line this long after its start is no longer counted open (its end was cut from the log, or
it was a transfer that ends with another wording)."""


@dataclass(frozen=True, slots=True)
class Shape:
    open_at_start: float
    """Mean writes open when a write starts."""
    small_and_slow: float
    """Share of ended writes that took 1 s or more and moved fewer bytes than the floor rate would in that time."""
    continuation: float
    """Share of lines that continue a record."""
    writes: int
    lines: int

    def kinder_than(self, real: Shape) -> list[str]:
        """The measures on which this corpus is easier than ``real``."""
        return [name for name in ("open_at_start", "small_and_slow", "continuation")
                if getattr(self, name) < getattr(real, name)]

    def __str__(self) -> str:
        return (f"{self.open_at_start:.1f} writes open at a start, {self.small_and_slow:.1%} of writes small and"
                f" >= 1 s, {self.continuation:.1%} continuation lines")


def _ms(m: re.Match[bytes]) -> int:
    return ((int(m[1]) * 60 + int(m[2])) * 60 + int(m[3])) * 1000 + int(m[4])


def shape_of(lines: Iterable[bytes]) -> Shape:
    """The measures over ``lines`` (each a DataNode log line, newline or not)."""
    open_: dict[bytes, int] = {}
    at_start = slow = ended = continuation = count = 0
    starts = 0
    for line in lines:
        count += 1
        if RECORD_START_BYTES.match(line) is None:
            continuation += 1
            continue
        if (opened := _OPEN.search(line)) is not None and (stamp := _STAMP.match(line)) is not None:
            now = _ms(stamp)
            open_ = {block: since for block, since in open_.items() if 0 <= now - since < OPEN_FOR_MS}
            at_start += len(open_)
            starts += 1
            open_[opened[1]] = now
        elif (closed := _CLOSE.search(line)) is not None:
            open_.pop(closed[1], None)
            ended += 1
            took = int(closed[2]) // 1_000_000
            size = _BYTES.search(line)
            slow += took >= 1000 and took * FLOOR_BYTES_PER_MS > (int(size[1]) if size else 0)
    return Shape(at_start / max(1, starts), slow / max(1, ended), continuation / max(1, count), ended, count)
