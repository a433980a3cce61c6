"""What a block's walk asks of the bytes around an offset: where a line ends, and what the line holds.

Plain functions of the block's bytes, so the walk (:mod:`correlator.core.ingest.blocks`) reads as the order of its
steps, not as byte arithmetic.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from correlator.core.ingest.bursts import FAST_PHRASES
from correlator.core.ingest.prefilter import RECEIVED_BYTES
from correlator.core.ingest.write_lines import CLOSE_BYTES, OPEN_BYTES, wall_ms
from correlator.core.ingest.writes import CLOCK_STEP_BACK_MS

BURST_BYTES = tuple(p.encode() for p in FAST_PHRASES)
_BURST_LINE = re.compile(b"|".join(re.escape(p) for p in BURST_BYTES))


def line_end(block: bytes, at: int) -> int:
    """The offset after the newline that ends the line holding ``at`` (the block's end if none does)."""
    end = block.find(b"\n", at)
    return len(block) if end < 0 else end + 1


def is_write_line(block: bytes, at: int) -> bool:
    """Whether the line at ``at`` holds a block-write phrase."""
    end = block.find(b"\n", at)
    end = len(block) if end < 0 else end
    return block.find(OPEN_BYTES, at, end) >= 0 or block.find(CLOSE_BYTES, at, end) >= 0


def is_burst_line(block: bytes, at: int) -> bool:
    """Whether the line at ``at`` holds a phrase of a burst kind: during a reconcile burst every line does, and
    feeding them on from a parsed one would keep the whole burst off the fast path."""
    end = block.find(b"\n", at)
    end = len(block) if end < 0 else end
    return _BURST_LINE.search(block, at, end) is not None


def no_hit_on_line(block: bytes, hits: list[tuple[int, int]], i: int, at: int) -> bool:
    """Whether the line at ``at`` holds no hit (``hits[i:]``: those not walked yet, in offset order)."""
    end = line_end(block, at)
    while i < len(hits) and hits[i][0] < at:
        i += 1
    return i >= len(hits) or hits[i][0] >= end


def line_fits(block: bytes, at: int, limit: int) -> bool:
    """Whether the line at ``at`` has at most ``limit`` bytes: a longer one ``take_line`` refuses, and a line it
    refuses does not end the record before it."""
    end = block.find(b"\n", at)
    return (len(block) if end < 0 else end) - at <= limit


def first_write(block: bytes, start: int, end: int) -> int:
    """Where the first write phrase of ``block[start:end]`` is, or -1."""
    found = [at for at in (block.find(OPEN_BYTES, start, end), block.find(CLOSE_BYTES, start, end)) if at >= 0]
    return min(found, default=-1)


def last_write(block: bytes, start: int, end: int) -> int:
    """Where the last write phrase wholly inside ``block[start:end]`` is, or -1."""
    return max(block.rfind(OPEN_BYTES, start, end), block.rfind(CLOSE_BYTES, start, end))


def replica_pieces(block: bytes) -> list[tuple[int, int]]:
    """``block`` as byte ranges read one after the other, so that a replica's ``Received`` line costs the plan of its
    own piece only: a block holding one has its writes decided line by line (the write readers do not read it), and
    on a real DataNode nearly every block of a file holds one. Each ``Received`` line ends a piece that begins after
    the last write line before it, and the write lines before that are a piece of their own. Every piece but the last
    ends on a write line, as the property tests cut blocks (the block path reads a source's clock off a block's last
    line, where the line-by-line path reads it off write lines only)."""
    at = block.find(RECEIVED_BYTES)
    if at < 0:
        return [(0, len(block))]
    pieces: list[tuple[int, int]] = []
    start = 0
    while at >= 0:
        line = block.rfind(b"\n", 0, at) + 1
        write = last_write(block, start, line)
        if write >= 0:
            cut = line_end(block, write)
            pieces.append((start, cut))
            start = cut
        end = line_end(block, at)
        pieces.append((start, end))
        start = end
        at = block.find(RECEIVED_BYTES, end)
    if start < len(block):
        pieces.append((start, len(block)))
    return pieces


def block_pieces(block: bytes, clock_ms: Callable[[], int | None],
                 stamp_at: Callable[[bytes, int], int | None]) -> Iterator[tuple[int, int, bool]]:
    """``block`` as the byte ranges to walk one after the other, each with whether its writes may be planned: around
    its replicas' ``Received`` lines (``replica_pieces``), its clock's steps back (``step_pieces``), and a first write
    line stamped far before the source's clock (``clock_ms``: asked as each piece comes, after the one before was
    read; see ``first_write_steps_back``)."""
    for a, b in replica_pieces(block):
        for start, end, planned in step_pieces(block, a, b):
            if planned and (cut := first_write_steps_back(block, start, end, clock_ms(), stamp_at)) is not None:
                yield start, cut, False
                start = cut
            if start < end:
                yield start, end, planned


STEP_SAMPLES = 16
"""Lines probed per piece for a clock stepping back; a step they miss leaves the piece to its plan's own check."""
STEP_MIN_BYTES = 1 << 16
"""A smaller piece is not probed: going line by line costs it little more than the probes."""
MAX_STEPS = 8
"""Steps cut out of one piece at most; a piece with more leaves its rest to its plan's own check."""


def step_pieces(block: bytes, start: int, end: int) -> list[tuple[int, int, bool]]:
    """``block[start:end]`` as pieces read one after the other, each with whether its writes may be planned, so that
    a clock stepping back (an NTP step, a DST fall-back) costs its own line only: a plan needs its write lines'
    stamps in order, and a piece holding a step has all its writes decided line by line. The piece before the step
    ends on the last write line before it, the next one ends on the first stepped-back write line and goes line by
    line (there the source's time runs on from the jump, as on the line path), and the rest is probed again.

    The probes read stamps as wall times (``write_lines.wall_ms``), by no clock: reading a source's stamps moves its
    clock's notion of the newest time, which must follow the lines' order. A DST fall-back is then a step too: its
    piece is cut the same way, which costs a plan, never a decision."""
    pieces: list[tuple[int, int, bool]] = []
    for _ in range(MAX_STEPS):
        found = None if end - start < STEP_MIN_BYTES else _step_back(block, start, end)
        if found is None:
            break
        before, after = last_write(block, start, found), first_write(block, found, end)
        if after < 0:
            break
        cut = line_end(block, before) if before >= 0 else start
        stepped = min(line_end(block, after), end)
        if cut > start:
            pieces.append((start, cut, True))
        pieces.append((cut, stepped, False))
        start = stepped
    if start < end:
        pieces.append((start, end, True))
    return pieces


def _step_back(block: bytes, start: int, end: int) -> int | None:
    """The start of the first line of ``block[start:end]`` stamped more than ``CLOCK_STEP_BACK_MS`` before a line
    above it, found between the probes that show it; ``None`` when the probes show none."""
    newest: int | None = None
    before = start
    for k in range(STEP_SAMPLES + 1):
        at = block.rfind(b"\n", start, start + (end - start - 1) * k // STEP_SAMPLES) + 1 if k else start
        at = max(at, start)
        ts = wall_ms(block[at:at + 23])
        if ts is None:
            continue
        if newest is not None and ts < newest - CLOCK_STEP_BACK_MS:
            return _first_step_back(block, before, at + 1)
        newest, before = (ts, at) if newest is None or ts >= newest else (newest, before)
    return None


def _first_step_back(block: bytes, start: int, end: int) -> int | None:
    """Line by line from ``start`` (a probe at the newest stamp yet): the first line that steps back."""
    newest: int | None = None
    at = start
    while at < end:
        ts = wall_ms(block[at:at + 23])
        if ts is not None:
            if newest is not None and ts < newest - CLOCK_STEP_BACK_MS:
                return at
            newest = ts if newest is None else max(newest, ts)
        at = block.find(b"\n", at, end) + 1
        if at <= 0:
            break
    return None


def first_write_steps_back(block: bytes, start: int, end: int, clock_ms: int | None,
                           stamp_at: Callable[[bytes, int], int | None]) -> int | None:
    """Where the first write line of ``block[start:end]`` ends, when it is stamped more than ``CLOCK_STEP_BACK_MS``
    before the source's clock (``clock_ms``, by ``stamp_at``): the clock stepped back between blocks, and the line
    path starts the source's time anew at that line, which a plan (blind to the clock) would not; else ``None``."""
    if clock_ms is None:
        return None
    found = first_write(block, start, end)
    if found < 0:
        return None
    ts = stamp_at(block, max(start, block.rfind(b"\n", start, found) + 1))
    return min(line_end(block, found), end) if ts is not None and ts < clock_ms - CLOCK_STEP_BACK_MS else None
