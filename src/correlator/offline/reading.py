"""Reading files of any size in bounded memory: line-aligned blocks, and lines cut at a limit.

A line longer than the limit (a 300 MB single-line file, a binary blob without newlines) is kept only up to just
beyond the limit — enough for the ingest to reject it as too long — and the rest is skipped unread into memory.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO


@dataclass
class Overlong:
    """How many lines were cut at the limit, and how many bytes were read in all."""

    lines: int = 0
    bytes_read: int = 0


def _skip_line(handle: BinaryIO, chunk: int) -> bytes:
    """Read up to and including the next newline, keeping nothing; returns what follows it in the last read."""
    while True:
        data = handle.read(chunk)
        if not data:
            return b""
        cut = data.find(b"\n")
        if cut >= 0:
            return data[cut + 1:]


def line_blocks(handle: BinaryIO, block_bytes: int, max_line: int, seen: Overlong | None = None) -> Iterator[bytes]:
    """Blocks of whole lines (each ending in a newline) of about ``block_bytes``; over-long lines cut."""
    seen = seen if seen is not None else Overlong()
    keep = max_line * 4 + 4
    carry = b""
    while True:
        chunk = handle.read(block_bytes)
        seen.bytes_read += len(chunk)
        if not chunk:
            break
        cut = chunk.rfind(b"\n") + 1
        if cut:  # one copy of the block: the carry and the chunk's lines joined, not the whole chunk twice
            block, carry = carry + memoryview(chunk)[:cut], chunk[cut:]
        else:  # the carry may hold lines of its own (what followed a skipped over-long line)
            data = carry + chunk
            cut = data.rfind(b"\n") + 1
            block, carry = data[:cut], data[cut:]
        if block:
            yield _cut_long(block, keep, seen)
        if len(carry) > keep:
            seen.lines += 1
            rest = _skip_line(handle, block_bytes)
            yield carry[:keep] + b"\n"
            carry = rest
    if carry:
        yield _cut_long(carry + b"\n", keep, seen)


def _cut_long(block: bytes, keep: int, seen: Overlong) -> bytes:
    """Cuts lines beyond ``keep``; a line that long leaves some stride-aligned window of keep/2 bytes without a
    newline, so a few ``find`` calls clear the usual block without splitting it."""
    stride = max(1, keep // 2)
    if all(block.find(b"\n", at, at + stride) >= 0 for at in range(0, max(0, len(block) - stride), stride)):
        return block
    lines = block.split(b"\n")
    out = []
    for line in lines:
        if len(line) > keep:
            seen.lines += 1
            line = line[:keep]
        out.append(line)
    return b"\n".join(out)


def bounded_lines(handle: BinaryIO, limit: int, seen: Overlong | None = None) -> Iterator[bytes]:
    """Lines (with their newline) of at most ``limit + 1`` bytes; the rest of a longer line is skipped."""
    seen = seen if seen is not None else Overlong()
    while True:
        line = handle.readline(limit + 1)
        seen.bytes_read += len(line)
        if not line:
            return
        if len(line) > limit and not line.endswith(b"\n"):
            seen.lines += 1
            while True:
                rest = handle.readline(1 << 20)
                seen.bytes_read += len(rest)
                if not rest or rest.endswith(b"\n"):
                    break
        yield line
