"""The ingest pipeline of one worker or one offline run: envelope → multi-line → prefilter → parse → events.

Nothing escapes :meth:`Ingest.feed` as an exception: bad input becomes a :class:`ParseError` with a stable reason
(the streaming layer dead-letters it), and anything unexpected becomes ``internal_error``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any

from correlator.core.events import Event, SourceProgress
from correlator.core.ingest.block_lines import block_pieces
from correlator.core.ingest.blocks import BlockReader
from correlator.core.ingest.config import BlockRead, IngestConfig, Output, SourceHint
from correlator.core.ingest.bursts import Bursts
from correlator.core.ingest.envelopes import Decoded, EnvelopeError, decode
from correlator.core.ingest.framing import is_cri, plain_lines, unframe_records
from correlator.core.ingest.patterns import TextLayout
from correlator.core.ingest.limits import out_of_range
from correlator.core.ingest.multiline import Closed, Pending, Stitcher, is_record_start
from correlator.core.ingest.parse import Rejected, SourceState, parse_record
from correlator.core.ingest.prefilter import TRIGGER, WRITE, ReScanner, Scanner
from correlator.core.ingest.progress import Progress
from correlator.core.ingest.progress import thin as thin_progress
from correlator.core.ingest.records import Origin, ParseError, parse_error, safe_excerpt
from correlator.core.ingest.ingest_stats import IngestStats
from correlator.core.ingest.origins import origin_of
from correlator.core.ingest.timestamps import LocalClock
from correlator.core.ingest.writes import Line, Materialise, WriteTracker



class Ingest:
    """Per-source reassembly state plus the parsers; feed it records, collect events and parse errors."""

    def __init__(self, config: IngestConfig, scanner: Scanner | None = None) -> None:
        self.config = config
        self.scanner: Scanner = scanner or ReScanner()
        self.clock = LocalClock(config.tz)
        self.text_layout = TextLayout.compile(config.layout, self.clock.zone) if config.layout else None
        self.bursts = Bursts()
        self._stitcher = Stitcher(max_lines=config.max_record_lines)
        self._sources: dict[str, SourceState] = {}
        self._stats = IngestStats()
        self._progress = Progress(self.clock, config.default_cluster)
        self._origins: dict[str, Origin] = {}
        self.writes = WriteTracker(self.clock, config.slow_write_ms,
                                   floor_bytes_per_ms=int(config.write_floor_mib_s * 1024 * 1024 / 1000),
                                   block_bytes=config.block_size_mib * 1024 * 1024)

    # --- public API ------------------------------------------------------------------------------------------

    def feed(
        self,
        value: bytes,
        *,
        ref: str,
        headers: Mapping[str, bytes] | None = None,
        hint: SourceHint | None = None,
        now_ms: int | None = None,
        key: bytes | None = None,
    ) -> list[Output]:
        """One Kafka record or file line. ``key`` (the Kafka key) separates sources when nothing names the host."""
        out: list[Output] = []
        try:
            self._feed(value, ref, headers, hint, now_ms, key, out)
        except Exception as exc:  # the last line of defence: a record never takes the worker down
            out.append(self._error("internal_error", f"{type(exc).__name__}: {exc}", ref, value))
        return out

    def feed_line(self, line: str, *, ref: str, hint: SourceHint, now_ms: int | None = None) -> list[Output]:
        """An already decoded line of a plain log file (the offline fast path: no envelope to look for)."""
        out: list[Output] = []
        try:
            origin = self._origin(Decoded(text=line), hint)
            if self.text_layout is not None:
                line = self.text_layout.line(line)
            self.take_line(origin, line, ref, now_ms, out)
        except Exception as exc:
            out.append(self._error("internal_error", f"{type(exc).__name__}: {exc}", ref, line))
        return out

    def feed_block(self, block: bytes, *, file_ref: str, first_line: int, hint: SourceHint) -> BlockRead:
        """Complete lines of a plain log file in bulk (the offline fast path).

        One prefilter scan over the whole block; only records around a hit are decoded, stitched and parsed.
        The other lines are counted as noise without being looked at one by one, which is what makes the offline
        path run near the speed of the scan. Refs are ``file_ref:line`` with ``first_line`` the block's first line.
        """
        out: list[Output] = []
        if self.text_layout is not None:
            block = self.text_layout.block(block)
        try:
            origin = self._origin(Decoded(text=""), hint)
            return BlockRead(out, self._read(block, file_ref, first_line, origin, out, None, None))
        except Exception as exc:
            out.append(self._error("internal_error", f"{type(exc).__name__}: {exc}", f"{file_ref}:{first_line}", block))
            return BlockRead(out, block.count(b"\n"))

    def feed_records(
        self,
        values: Sequence[bytes],
        offsets: Sequence[int],
        *,
        stream_ref: str,
        key: bytes | None = None,
        headers: Mapping[str, bytes] | None = None,
        now_ms: int | None = None,
    ) -> list[Output]:
        """Records of one source (one key and headers) of one topic-partition, in order, in one scan.

        Plain one-line values are joined and walked like a file block: only records around a hit are decoded and
        parsed. Envelopes, values holding newlines or control bytes, and oversized values go record by record
        through :meth:`feed`, which knows their error cases. Refs are ``stream_ref@offset``.
        """
        if not values:
            return []
        if is_cri(values[0]):
            values, offsets = unframe_records(values, offsets)
            if not values:
                return []
        if self.text_layout is not None:
            values = [self.text_layout.block(v) for v in values]
        joined = b"\n".join(values) + b"\n"
        if not plain_lines(values, joined, self.config.max_line_bytes):
            out = []
            for value, offset in zip(values, offsets):
                out += self.feed(value, ref=f"{stream_ref}@{offset}", headers=headers, key=key, now_ms=now_ms)
            return out
        out = []
        try:
            decoded = decode(values[0], headers, key, self.clock.zone)
            origin = self._origin(decoded, SourceHint(), key)
            self._read(joined, stream_ref, 0, origin, out, offsets, now_ms)
        except EnvelopeError as exc:
            out.append(self._error(exc.reason, exc.detail, f"{stream_ref}@{offsets[0]}", values[0]))
        except Exception as exc:
            out.append(self._error("internal_error", f"{type(exc).__name__}: {exc}", f"{stream_ref}@{offsets[0]}",
                                   values[0]))
        return out

    def _read(self, block: bytes, ref: str, first_line: int, origin: Origin, out: list[Output],
              offsets: Sequence[int] | None, now_ms: int | None) -> int:
        """A block's walk, piece by piece (``block_pieces``: around its replicas' ``Received`` lines and its clock's
        steps back), its outputs in ``out`` with each source's progress thinned (``progress.thin``); its newlines."""
        newlines = 0
        key = origin.key
        stamp_at = self.writes.stamps(key).stamp_at
        for start, end, planned in block_pieces(block, lambda: self.writes.clock_ms(key), stamp_at):
            at = newlines
            piece = block[start:end] if end - start < len(block) else block
            reader = BlockReader(self, piece, ref, first_line + at, origin, out, now_ms=now_ms, planned=planned,
                                 offsets=None if offsets is None else offsets[at:at + piece.count(b"\n") + 1])
            reader.run()
            newlines += reader.newlines
        thinned = thin_progress(out)
        if len(thinned) < len(out):  # the reports thinning dropped were counted as they were made: uncount them
            self._stats.events[SourceProgress.type] -= len(out) - len(thinned)
            out[:] = thinned
        return newlines

    def flush_idle(self, now_ms: int) -> list[Output]:
        out: list[Output] = []
        for closed in self._stitcher.close_idle(now_ms, self.config.idle_flush_ms):
            self._safe_record(closed, out)
        lines: list[Line] = []
        self.writes.flush_idle(now_ms, self.config.idle_flush_ms, lines)
        self.parse_lines(lines, out)
        self.emit(self.bursts.flush_idle(now_ms, self.config.idle_flush_ms), out)
        return out

    def restart_idle(self, now_ms: int) -> None:
        self._stitcher.restart_idle(now_ms)
        self.writes.restart_idle(now_ms)

    def flush_all(self) -> list[Output]:
        """End of input: close every open record and write, and report each source's last line time."""
        out: list[Output] = []
        for closed in self._stitcher.close_all():
            self._safe_record(closed, out)
        lines: list[Line] = []
        self.writes.flush_all(lines)
        self.parse_lines(lines, out)
        self.emit(self.bursts.flush_all(), out)
        found: list[Event] = []
        for key, state in sorted(self._sources.items()):
            origin = self._origins.get(key)
            if origin is not None:
                self._progress.flush(origin, state, f"{origin.file or key}:end", found)
        self._collect(found, out, "")
        return out

    @property
    def stats(self) -> dict[str, Any]:
        return {**self._stats.as_dict(), "routine_writes": self.writes.routine,
                "clock_steps_back": self.writes.steps_back, "guessed_times": dict(self.clock.guessed)}

    def snapshot(self) -> dict[str, Any]:
        return {
            "version": 1,
            "open": self._stitcher.snapshot(),
            "sources": {k: asdict(v) for k, v in self._sources.items()},
            "stats": self.stats,
            "writes": self.writes.snapshot(),
            "bursts": self.bursts.snapshot(),
        }

    @classmethod
    def restore(cls, config: IngestConfig, data: Mapping[str, Any], scanner: Scanner | None = None) -> Ingest:
        ingest = cls(config, scanner)
        ingest._stitcher = Stitcher.restore(dict(data.get("open", {})), config.max_record_lines)
        ingest._sources = {k: SourceState(**v) for k, v in dict(data.get("sources", {})).items()}
        ingest.writes.restore(data.get("writes", {}))
        ingest.bursts.restore(data.get("bursts", []))
        ingest._stats = IngestStats.restore(data.get("stats", {}))
        return ingest

    def _feed(
        self,
        value: bytes,
        ref: str,
        headers: Mapping[str, bytes] | None,
        hint: SourceHint | None,
        now_ms: int | None,
        record_key: bytes | None,
        out: list[Output],
    ) -> None:
        if len(value) > 4 * self.config.max_line_bytes:
            out.append(self._error("line_too_long", f"record of {len(value)} bytes", ref, value))
            return
        try:
            decoded = decode(value, headers, record_key, self.clock.zone)
        except EnvelopeError as exc:
            out.append(self._error(exc.reason, exc.detail, ref, value))
            return
        if decoded.invalid_utf8:
            self._stats.invalid_utf8 += 1
        origin = self._origin(decoded, hint or SourceHint(), record_key)
        text = decoded.text
        if text.endswith("\n"):
            text = text[:-1]
        for line in text.split("\n"):
            line = line.removesuffix("\r")
            self.take_line(origin, line if self.text_layout is None else self.text_layout.line(line), ref, now_ms, out)

    def take_line(self, origin: Origin, line: str, ref: str, now_ms: int | None,
                  out: list[Output], materialise: Materialise | None = None) -> None:
        """One line of the source ``origin`` names: a block-write line to the tracker, any other to its source's open
        record. ``materialise``: given by a block being read, it makes the lines of its open writes decided before it
        ends."""
        self._stats.lines += 1
        if len(line) > self.config.max_line_bytes:
            out.append(self._error("line_too_long", f"line of {len(line)} characters", ref, line))
            return
        kind = self.scanner.classify(line)
        start = is_record_start(line)
        if kind == WRITE and start:
            self._write_line(origin, line, ref, now_ms, out, materialise)
            return
        closed = self._stitcher.add(
            origin.key, line, ref=ref, origin=origin, start=start, candidate=kind == TRIGGER, now_ms=now_ms
        )
        if closed is not None:
            self._safe_record(closed, out, materialise)

    def take_record(self, origin: Origin, line: str, ref: str, out: list[Output],
                    materialise: Materialise | None = None) -> bool:
        """A trigger line that is a whole record (a block's walk saw the next line start another): as ``take_line``
        then the next start would close it, it ends the source's open record and is parsed now, without the stitcher.
        False, nothing done, when the line is too long (``take_line`` says so)."""
        if len(line) > self.config.max_line_bytes:
            return False
        self._stats.lines += 1
        self.end_open_record(origin.key, out, materialise)
        self._safe_record(Closed((line,), ref, origin, True), out, materialise)
        return True

    def take_write_line(self, origin: Origin, line: str, ref: str, now_ms: int | None,
                        out: list[Output], materialise: Materialise | None = None) -> None:
        """A block-write line a block's walk could not decide from its bytes: counted, then as ``take_line`` takes it."""
        self._stats.lines += 1
        self._write_line(origin, line, ref, now_ms, out, materialise)

    @property
    def max_line_bytes(self) -> int:
        """The longest line read (``IngestConfig.max_line_bytes``): a longer one is a dead letter."""
        return self.config.max_line_bytes

    def open_record(self, key: str) -> Pending | None:
        """The record of source ``key`` still open (its next line may continue it)."""
        return self._stitcher.open.get(key)

    def count_skipped(self, lines: int) -> None:
        """Lines a block's walk skipped as noise without looking at them one by one."""
        self._stats.lines += lines
        self._stats.noise += lines

    def report_progress(self, head: str, origin: Origin, ref: str, out: list[Output]) -> None:
        """A stamped line at a block's edge (``head``: its start) shows how far the source's log has got."""
        self._progress_line(head, origin, self._source(origin), ref, out)

    def continue_record(self, key: str, lines: list[str], now_ms: int | None) -> bool:
        """Continuation lines of a candidate record of ``key``, added as ``take_line`` would add each (a stack under a
        trigger line costs no step per frame); False, nothing done, when one is too long (``take_line`` says so)."""
        if max(map(len, lines), default=0) > self.config.max_line_bytes:
            return False
        self._stats.lines += len(lines)
        self._stitcher.extend(key, lines, now_ms)
        return True

    def _write_line(self, origin: Origin, line: str, ref: str, now_ms: int | None,
                    out: list[Output], materialise: Materialise | None) -> None:
        """A block-write line: it ends the source's open record, then the tracker decides whether it matters."""
        self.end_open_record(origin.key, out, materialise)
        self._stats.records += 1
        self._progress_line(line, origin, self._source(origin), ref, out)
        lines: list[Line] = []
        self.writes.line(origin, line, ref, now_ms, lines, materialise)
        if not lines:
            self._stats.noise += 1
        self.parse_lines(lines, out)

    def end_open_record(self, key: str, out: list[Output], materialise: Materialise | None = None) -> None:
        """A record start (here a write line) closes the source's open record first, so its time counts in file order."""
        if key in self._stitcher.open:
            closed = self._stitcher.close(key)
            if closed is not None:
                self._safe_record(closed, out, materialise)

    def parse_lines(self, lines: list[Line], out: list[Output]) -> None:
        for item in lines:
            self._safe_record(Closed((item.text,), item.ref, item.origin, True, True), out)

    def observe_clock(self, key: str, ts_ms: int | None, out: list[Output],
                      materialise: Materialise | None = None) -> None:
        """A source's log reached ``ts_ms`` (its last line): writes open too long by then become events."""
        if ts_ms is None:
            return
        lines: list[Line] = []
        self.writes.observe_key(key, ts_ms, lines, materialise)
        self.parse_lines(lines, out)

    def _origin(self, decoded: Decoded, hint: SourceHint, record_key: bytes | None = None) -> Origin:
        return origin_of(decoded, hint, self.config.default_cluster, record_key)

    def _safe_record(self, closed: Closed, out: list[Output], materialise: Materialise | None = None) -> None:
        try:
            self._record(closed, out, materialise)
        except Exception as exc:
            out.append(self._error("internal_error", f"{type(exc).__name__}: {exc}", closed.ref, closed.lines[0]))

    def _record(self, closed: Closed, out: list[Output], materialise: Materialise | None) -> None:
        self._stats.records += 1
        origin = closed.origin
        key = origin.key
        state = self._source(origin)
        self._progress_line(closed.lines[0], origin, state, closed.ref, out)
        if not closed.candidate:
            self._stats.noise += 1
            return
        if not (origin.host or origin.file or origin.stream):
            state.host = None  # an unkeyed partition mixes files: a banner on it names only its own record's host
        try:  # the parsers read the origin's dict form, the stamps by the source's own clock
            events = parse_record(closed.lines, closed.ref, origin, state, self.clock.of(key),
                                  min_gc_pause_ms=self.config.min_gc_pause_ms)
        except Rejected as exc:
            out.append(self._error(exc.reason, exc.detail, closed.ref, closed.lines[0]))
            return
        if state.progress_pending is not None:
            found: list[Event] = []
            self._progress.role_known(origin, state, closed.ref, found)
            self._collect(found, out, closed.lines[0])
        self._collect(events, out, closed.lines[0], key)
        if state.last_ts_ms is not None and not closed.handed_back and self.writes.clock_ms(key) is not None:
            self.observe_clock(key, state.last_ts_ms, out, materialise)

    def _source(self, origin: Origin) -> SourceState:
        key = origin.key
        state = self._sources.get(key)
        if state is None:
            state = self._sources[key] = SourceState()
        self._origins[key] = origin
        return state

    def _progress_line(self, line: str, origin: Origin, state: SourceState, ref: str,
                       out: list[Output]) -> None:
        if line[:18] == state.progress_bucket:  # the common case: same 10 s of log time as the last record
            state.progress_last = line[:23]
            return
        found: list[Event] = []
        self._progress.line(line, origin, state, ref, found)
        self._collect(found, out, line)

    def _collect(self, events: list[Event], out: list[Output], text: str, source: str = "") -> None:
        """``events`` less those out of range (each a dead letter), through the held bursts; ``source``: the one whose
        record made them, where they may start or join a burst (progress and flush events never do)."""
        kept = []
        for event in events:
            why = out_of_range(event)
            if why is not None:
                out.append(self._error("out_of_range", f"{event.type}: {why}", event.ref, text))
                continue
            kept.append(event)
        self.emit(self.bursts.take(kept, None, source), out)

    def emit(self, events: list[Event], out: list[Output]) -> None:
        for event in events:
            self._stats.events[event.type] += 1
            out.append(event)

    def reject(self, reason: str, detail: str, ref: str) -> ParseError:
        """Input the caller could not even read (a damaged compressed file), counted like any rejected record."""
        return self._error(reason, detail, ref, b"")

    def _error(self, reason: str, detail: str, ref: str, text: str | bytes) -> ParseError:
        self._stats.errors[reason] += 1
        return parse_error(reason, detail, ref, text)


__all__ = ["Ingest", "IngestConfig", "Output", "ParseError", "SourceHint", "safe_excerpt"]
