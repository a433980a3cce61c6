"""What a block's walk (:mod:`correlator.core.ingest.blocks`) asks of the ingest it feeds, and nothing more."""

from __future__ import annotations

from typing import Protocol

from correlator.core.events import Event
from correlator.core.ingest.bursts import Bursts
from correlator.core.ingest.config import Output
from correlator.core.ingest.multiline import Pending
from correlator.core.ingest.prefilter import Scanner
from correlator.core.ingest.records import Origin
from correlator.core.ingest.writes import Line, Materialise, WriteTracker


class BlockIngest(Protocol):
    """What a block's walk asks of the ingest it feeds (:class:`correlator.core.ingest.ingest.Ingest`): the shared
    per-source parts, and the steps it hands lines to. Nothing else of the ingest is reached from here."""

    scanner: Scanner
    writes: WriteTracker
    bursts: Bursts

    @property
    def max_line_bytes(self) -> int: ...
    def open_record(self, key: str) -> Pending | None: ...
    def take_line(self, origin: Origin, line: str, ref: str, now_ms: int | None,
                  out: list[Output], materialise: Materialise | None = None) -> None: ...
    def take_record(self, origin: Origin, line: str, ref: str, out: list[Output],
                    materialise: Materialise | None = None) -> bool: ...
    def take_write_line(self, origin: Origin, line: str, ref: str, now_ms: int | None,
                        out: list[Output], materialise: Materialise | None = None) -> None: ...
    def continue_record(self, key: str, lines: list[str], now_ms: int | None) -> bool: ...
    def end_open_record(self, key: str, out: list[Output], materialise: Materialise | None = None) -> None: ...
    def parse_lines(self, lines: list[Line], out: list[Output]) -> None: ...
    def emit(self, events: list[Event], out: list[Output]) -> None: ...
    def count_skipped(self, lines: int) -> None: ...
    def report_progress(self, head: str, origin: Origin, ref: str, out: list[Output]) -> None: ...
    def observe_clock(self, key: str, ts_ms: int | None, out: list[Output],
                      materialise: Materialise | None = None) -> None: ...
