"""The native ``WriteReader``: the core's stdlib reader's twin in C (``_write_lines.c``), built with the package.

It reads a busy DataNode's write lines without a regex pass per line (``correlator bench parse`` prints both
readers' rates). The C module is optional at install time: where no compiler built it, the stdlib reader serves
and ``correlator bench parse`` says so.
"""

from __future__ import annotations

from correlator.core.ingest.burst_lines import BurstRun, HeldBursts
from correlator.core.ingest.write_lines import StdlibWriteReader, WriteLines, WriteReader


class NativeWriteReader:
    """memchr for an uncommon byte of each phrase, the patterns read by hand at each one; no regex engine, no callback per
    line."""

    name = "native"

    def __init__(self) -> None:
        from correlator.adapters import _write_lines  # type: ignore[attr-defined]

        self._find = _write_lines.find_write_lines
        self._in_second = _write_lines.in_second
        self._burst_run = _write_lines.burst_run
        self._spans = _write_lines.spans
        self._step_back = _write_lines.step_back
        self.newlines = _write_lines.newlines  # asked for every line number a block's refs need: no wrapper

    def find(self, block: bytes) -> WriteLines:
        return WriteLines(*self._find(block))

    def in_second(self, block: bytes, first: int, offsets: list[int]) -> bool:
        return bool(self._in_second(block, first, offsets))

    def burst_run(self, block: bytes, hits: list[tuple[int, int]], first: int, bursts: HeldBursts) -> BurstRun:
        b = bursts
        held = tuple((h.last_ts_ms, h.start_ms, h.longest_ms, h.gap_ms, h.timed) for h in b.held)
        return BurstRun(*self._burst_run(block, hits, first, held, b.kinds, b.prefix, b.second_ms, b.max_span_ms,
                                         b.until_ts_ms, b.step_at, b.decided_until, b.write_from))

    def spans(self, block: bytes, opens: list[int], closes: list[int]) -> tuple[list[int | None], list[int]]:
        gaps, sizes = self._spans(block, opens, closes)
        return gaps, sizes

    def step_back(self, block: bytes, offsets: list[int], back_ms: int) -> int:
        return int(self._step_back(block, offsets, back_ms))


def fastest_write_reader() -> WriteReader:
    try:
        return NativeWriteReader()
    except ImportError:  # built without a C compiler
        return StdlibWriteReader()
