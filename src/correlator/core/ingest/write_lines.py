"""A block's block-write lines found and read in one go: where each is, which block it names, how long it took.

A busy DataNode's log is mostly the ``Receiving BP-…`` and the clienttrace ``op: HDFS_WRITE … duration(ns)`` of
routine writes; the block path (``write_batch``) pairs their ids as whole lists and never reads one alone. What it
needs of them is here, behind :class:`WriteReader`: the stdlib reader below is the reference, and a native twin
(``correlator.adapters.write_readers``) gives the same lists where it was built, without a regex pass per line.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from calendar import monthrange
from datetime import date
from dataclasses import dataclass
from typing import Protocol

from correlator.core.ingest.burst_lines import BurstRun, HeldBursts, burst_run
from correlator.core.ingest.writes import CLOSE_PHRASE, OPEN_PHRASE, bytes_at

OPEN_BYTES = OPEN_PHRASE.encode()
CLOSE_BYTES = CLOSE_PHRASE.encode()
# Each pattern starts with its phrase, so a phrase either starts a match or is a line the patterns do not explain.
OPEN_PATTERN = re.compile(rb"Receiving BP-[^:\n ]*+:(blk_\d++)_")
CLOSE_PATTERN = re.compile(
    rb"op: HDFS_WRITE, cliID: [^,\n]*+, offset: [^,\n]*+, srvID: [^,\n]*+, blockid: [^:\n ]*+:(blk_\d++)_\d++, "
    rb"duration(?:\(ns\))?+: (\d++)"
)
STAMP_TO_THE_SECOND = 19
"""``2020-01-02 08:00:00`` of ``2020-01-02 08:00:00,001``: lines that begin alike were logged in the same second."""


@dataclass(frozen=True, slots=True)
class WriteLines:
    """Every write phrase of a block, by kind and ascending offset, with what its pattern read there: ``None`` where
    the pattern does not explain the phrase (a wording we do not know, or a phrase inside another line's match)."""

    opens: list[int]
    open_ids: list[bytes | None]
    """``blk_<id>`` of each start, without its generation stamp (a recovery bumps it between start and end)."""
    closes: list[int]
    close_ids: list[bytes | None]
    durations: list[bytes | None]
    """The clienttrace ``duration(ns)`` digits of each end (digits, not a number: a 10 MB line may hold a million)."""

    def since(self, start: int) -> WriteLines:
        """The phrases at offset ``start`` or later."""
        if not start:
            return self
        o, c = bisect_left(self.opens, start), bisect_left(self.closes, start)
        return WriteLines(self.opens[o:], self.open_ids[o:], self.closes[c:], self.close_ids[c:], self.durations[c:])

    @property
    def all_read(self) -> bool:
        return None not in self.open_ids and None not in self.close_ids


NO_WRITE_LINES = WriteLines([], [], [], [], [])


class WriteReader(Protocol):
    """Reads the write lines of a block; implementations give equal results (a property test holds them so)."""

    name: str

    def find(self, block: bytes) -> WriteLines:
        """Every occurrence of ``OPEN_PHRASE`` and ``CLOSE_PHRASE``; each pattern is tried at each of its phrases that
        does not lie inside its previous match (``re.findall``'s rule)."""
        ...

    def in_second(self, block: bytes, first: int, offsets: list[int]) -> bool:
        """Whether the line holding each of ``offsets`` begins with the same stamp to the second as the line starting
        at ``first``; false when that line is shorter than a stamp."""
        ...

    def newlines(self, block: bytes, start: int, end: int) -> int:
        """The newlines of ``block[start:end]``: how a block's line numbers are counted."""
        ...

    def burst_run(self, block: bytes, hits: list[tuple[int, int]], first: int, bursts: HeldBursts) -> BurstRun:
        """``burst_lines.burst_run``: how far the hits from ``first`` on extend the held bursts."""
        ...

    def spans(self, block: bytes, opens: list[int], closes: list[int]) -> tuple[list[int | None], list[int]]:
        """Per pair of offsets: the ms from the stamp of the line holding the first to that of the line holding the
        second when both begin in the same minute (``None`` otherwise, or where either lacks a stamp's shape), and
        the second line's ``bytes`` (``writes.bytes_at``). What a slow write's size is judged on, in one call."""
        ...

    def step_back(self, block: bytes, offsets: list[int], back_ms: int) -> int:
        """The index of the first of ``offsets`` (ascending) whose line is stamped more than ``back_ms`` before the
        newest line before it, read as wall times (``wall_ms``; lines without a stamp are passed over); -1 if none."""
        ...


class StdlibWriteReader:
    """The reference: the two patterns with ``re``, the phrases with ``bytes.find``, each line's stamp compared."""

    name = "re"

    def find(self, block: bytes) -> WriteLines:
        opens, open_reads = _read(block, OPEN_BYTES, OPEN_PATTERN)
        closes, close_reads = _read(block, CLOSE_BYTES, CLOSE_PATTERN)
        close_ids = [read[0] if read else None for read in close_reads]
        durations = [read[1] if read else None for read in close_reads]
        return WriteLines(opens, [read[0] if read else None for read in open_reads], closes, close_ids, durations)

    def in_second(self, block: bytes, first: int, offsets: list[int]) -> bool:
        second = block[first:first + STAMP_TO_THE_SECOND] if first >= 0 else b""
        if len(second) < STAMP_TO_THE_SECOND or b"\n" in second:
            return False
        return all(0 <= at <= len(block) and block.startswith(second, block.rfind(b"\n", 0, at) + 1) for at in offsets)

    def burst_run(self, block: bytes, hits: list[tuple[int, int]], first: int, bursts: HeldBursts) -> BurstRun:
        return burst_run(block, hits, first, bursts)

    def newlines(self, block: bytes, start: int, end: int) -> int:
        return block.count(b"\n", start, end)

    def spans(self, block: bytes, opens: list[int], closes: list[int]) -> tuple[list[int | None], list[int]]:
        if len(opens) != len(closes):
            raise ValueError("opens and closes differ in length")
        gaps: list[int | None] = []
        sizes: list[int] = []
        for o, c in zip(opens, closes):
            if not (0 <= o <= len(block) and 0 <= c <= len(block)):
                raise IndexError("offset outside the block")
            o, c = block.rfind(b"\n", 0, o) + 1, block.rfind(b"\n", 0, c) + 1
            gaps.append(_gap(block[o:o + 23], block[c:c + 23]))
            sizes.append(bytes_at(block, c))
        return gaps, sizes

    def step_back(self, block: bytes, offsets: list[int], back_ms: int) -> int:
        newest: int | None = None
        for i, at in enumerate(offsets):
            if not 0 <= at <= len(block):
                raise IndexError("offset outside the block")
            line = block.rfind(b"\n", 0, at) + 1
            ts = wall_ms(block[line:line + 23])
            if ts is None:
                continue
            if newest is not None and ts < newest - back_ms:
                return i
            newest = ts if newest is None else max(newest, ts)
        return -1


_STAMP_SHAPE = re.compile(rb"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d[,.]\d{3}")


def wall_ms(stamp: bytes) -> int | None:
    """A ``yyyy-MM-dd HH:mm:ss,SSS`` stamp (the 23 bytes a line starts with) as ms of wall time, by no clock: how far
    apart two lines were stamped, whatever the zone (a DST fall-back is a step back in it). ``None`` where the bytes
    are not a stamp of a real minute."""
    if len(stamp) < 23 or _STAMP_SHAPE.match(stamp) is None:
        return None
    y, mo, d, h, mi = int(stamp[:4]), int(stamp[5:7]), int(stamp[8:10]), int(stamp[11:13]), int(stamp[14:16])
    if y < 1 or not 1 <= mo <= 12 or not 1 <= d <= monthrange(y, mo)[1] or h > 23 or mi > 59:
        return None
    return ((date(y, mo, d).toordinal() * 24 + h) * 60 + mi) * 60_000 + int(stamp[17:19]) * 1000 + int(stamp[20:23])


def _gap(one: bytes, two: bytes) -> int | None:
    """ms from stamp ``one`` to stamp ``two`` (each the 23 bytes a line starts with) of one minute, as ``stamp_at``
    reads each."""
    if len(one) < 23 or len(two) < 23 or one[:16] != two[:16]:
        return None
    for stamp in (one, two):
        if stamp[10] != 32 or stamp[19] not in (44, 46) or not (stamp[17:19] + stamp[20:23]).isdigit():
            return None
    return (int(two[17:19]) - int(one[17:19])) * 1000 + int(two[20:23]) - int(one[20:23])


def _read(block: bytes, phrase: bytes, pattern: re.Pattern[bytes]) -> tuple[list[int], list[tuple[bytes, ...] | None]]:
    """Offsets of every ``phrase``, and the pattern's groups read there (``None`` where it does not match)."""
    at: list[int] = []
    reads: list[tuple[bytes, ...] | None] = []
    matched_until = 0
    found = block.find(phrase)
    while found >= 0:
        match = pattern.match(block, found) if found >= matched_until else None
        if match is not None:
            matched_until = match.end()
        at.append(found)
        reads.append(match.groups() if match is not None else None)
        found = block.find(phrase, found + len(phrase))
    return at, reads
