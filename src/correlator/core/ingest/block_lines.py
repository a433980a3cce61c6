"""What a block's walk asks of the bytes around an offset: where a line ends, and what the line holds.

Plain functions of the block's bytes, so the walk (:mod:`correlator.core.ingest.blocks`) reads as the order of its
steps, not as byte arithmetic.
"""

from __future__ import annotations

import re

from correlator.core.ingest.bursts import FAST_PHRASES
from correlator.core.ingest.prefilter import RECEIVED_BYTES
from correlator.core.ingest.write_lines import CLOSE_BYTES, OPEN_BYTES

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
        last_write = max(block.rfind(OPEN_BYTES, start, line), block.rfind(CLOSE_BYTES, start, line))
        if last_write >= 0:
            cut = line_end(block, last_write)
            pieces.append((start, cut))
            start = cut
        end = line_end(block, at)
        pieces.append((start, end))
        start = end
        at = block.find(RECEIVED_BYTES, end)
    if start < len(block):
        pieces.append((start, len(block)))
    return pieces
