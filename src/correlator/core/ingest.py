"""The ingest pipeline of one worker or one offline run: envelope → multi-line → prefilter → parse → events.

Nothing escapes :meth:`Ingest.feed` as an exception: bad input becomes a :class:`ParseError` with a stable reason
(the streaming layer dead-letters it), and anything unexpected becomes ``internal_error``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from correlator.core.envelopes import Decoded, EnvelopeError, decode
from correlator.core.events import Event
from correlator.core.multiline import RECORD_START_BYTES, Closed, Stitcher, is_record_start
from correlator.core.parse import Rejected, SourceState, parse_record
from correlator.core.prefilter import TRIGGER, WRITE, WRITE_FROM, ReScanner, Scanner
from correlator.core.records import ParseError, parse_error, safe_excerpt
from correlator.core.sources import facts_from_path
from correlator.core.timestamps import LocalClock
from correlator.core.writes import Line, WriteTracker

Output = Event | ParseError


@dataclass(frozen=True, slots=True)
class SourceHint:
    """What the transport knows about a record's origin (any field may be None)."""

    cluster: str | None = None
    host: str | None = None
    file: str | None = None
    role: str | None = None
    family: str | None = None


@dataclass(frozen=True, slots=True)
class IngestConfig:
    tz: str = "UTC"
    default_cluster: str = "default"
    idle_flush_ms: int = 2000
    max_line_bytes: int = 1_048_576
    min_gc_pause_ms: int = 0
    max_record_lines: int = 2000
    slow_write_ms: int = 1000
    """A block write that ends within this of its start is routine: counted, not emitted."""


@dataclass(slots=True)
class _Stats:
    lines: int = 0
    records: int = 0
    noise: int = 0
    invalid_utf8: int = 0
    events: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)


class Ingest:
    """Per-source reassembly state plus the parsers; feed it records, collect events and parse errors."""

    def __init__(self, config: IngestConfig, scanner: Scanner | None = None) -> None:
        self.config = config
        self.scanner: Scanner = scanner or ReScanner()
        self.clock = LocalClock(config.tz)
        self._stitcher = Stitcher(max_lines=config.max_record_lines)
        self._sources: dict[str, SourceState] = {}
        self._stats = _Stats()
        self.writes = WriteTracker(self.clock, config.slow_write_ms)

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
            self._line(_key(origin), origin, line, ref, now_ms, out)
        except Exception as exc:
            out.append(self._error("internal_error", f"{type(exc).__name__}: {exc}", ref, line))
        return out

    def feed_block(self, block: bytes, *, file_ref: str, first_line: int, hint: SourceHint) -> list[Output]:
        """Complete lines of a plain log file in bulk (the offline fast path).

        One prefilter scan over the whole block; only records around a hit are decoded, stitched and parsed.
        The other lines are counted as noise without being looked at one by one, which is what makes the offline
        path run near the speed of the scan. Refs are ``file_ref:line`` with ``first_line`` the block's first line.
        """
        out: list[Output] = []
        try:
            _BlockReader(self, block, file_ref, first_line, hint, out).run()
        except Exception as exc:
            out.append(self._error("internal_error", f"{type(exc).__name__}: {exc}", f"{file_ref}:{first_line}", block))
        return out

    def flush_idle(self, now_ms: int) -> list[Output]:
        out: list[Output] = []
        for closed in self._stitcher.close_idle(now_ms, self.config.idle_flush_ms):
            self._safe_record(closed, out)
        lines: list[Line] = []
        self.writes.flush_idle(now_ms, self.config.idle_flush_ms, lines)
        self._parse_lines(lines, out)
        return out

    def flush_all(self) -> list[Output]:
        out: list[Output] = []
        for closed in self._stitcher.close_all():
            self._safe_record(closed, out)
        lines: list[Line] = []
        self.writes.flush_all(lines)
        self._parse_lines(lines, out)
        return out

    @property
    def stats(self) -> dict[str, Any]:
        s = self._stats
        return {
            "lines": s.lines,
            "records": s.records,
            "noise": s.noise,
            "invalid_utf8": s.invalid_utf8,
            "routine_writes": self.writes.routine,
            "events": dict(s.events),
            "errors": dict(s.errors),
        }

    def snapshot(self) -> dict[str, Any]:
        return {
            "version": 1,
            "open": self._stitcher.snapshot(),
            "sources": {k: asdict(v) for k, v in self._sources.items()},
            "stats": self.stats,
            "writes": self.writes.snapshot(),
        }

    @classmethod
    def restore(cls, config: IngestConfig, data: Mapping[str, Any], scanner: Scanner | None = None) -> Ingest:
        ingest = cls(config, scanner)
        ingest._stitcher = Stitcher.restore(dict(data.get("open", {})), config.max_record_lines)
        ingest._sources = {k: SourceState(**v) for k, v in dict(data.get("sources", {})).items()}
        ingest.writes.restore(data.get("writes", {}))
        stats = data.get("stats", {})
        ingest._stats = _Stats(
            lines=int(stats.get("lines", 0)),
            records=int(stats.get("records", 0)),
            noise=int(stats.get("noise", 0)),
            invalid_utf8=int(stats.get("invalid_utf8", 0)),
            events=Counter(stats.get("events", {})),
            errors=Counter(stats.get("errors", {})),
        )
        return ingest

    # --- stages ----------------------------------------------------------------------------------------------

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
            decoded = decode(value, headers)
        except EnvelopeError as exc:
            out.append(self._error(exc.reason, exc.detail, ref, value))
            return
        if decoded.invalid_utf8:
            self._stats.invalid_utf8 += 1
        origin = self._origin(decoded, hint or SourceHint())
        if record_key and not (origin["host"] and origin["file"]):
            origin["stream"] = record_key.decode("utf-8", errors="replace")
        key = _key(origin)
        text = decoded.text
        if text.endswith("\n"):
            text = text[:-1]
        for line in text.split("\n"):
            self._line(key, origin, line.removesuffix("\r"), ref, now_ms, out)

    def _line(self, key: str, origin: dict[str, Any], line: str, ref: str, now_ms: int | None, out: list[Output]) -> None:
        self._stats.lines += 1
        if len(line) > self.config.max_line_bytes:
            out.append(self._error("line_too_long", f"line of {len(line)} characters", ref, line))
            return
        kind = self.scanner.classify(line)
        start = is_record_start(line)
        if kind == WRITE and start:
            self._write_line(key, origin, line, ref, now_ms, out)
            return
        closed = self._stitcher.add(
            key, line, ref=ref, origin=origin, start=start, candidate=kind == TRIGGER, now_ms=now_ms
        )
        if closed is not None:
            self._safe_record(closed, out)

    def _write_line(self, key: str, origin: dict[str, Any], line: str, ref: str, now_ms: int | None,
                    out: list[Output]) -> None:
        """A block-write line: it ends the source's open record, then the tracker decides whether it matters."""
        pending = self._stitcher.open.get(key)
        if pending is not None and pending.candidate:
            closed = self._stitcher.close(key)
            if closed is not None:
                self._safe_record(closed, out)
        self._stats.records += 1
        lines: list[Line] = []
        self.writes.line(key, origin, line, ref, now_ms, lines)
        if not lines:
            self._stats.noise += 1
        self._parse_lines(lines, out)

    def _parse_lines(self, lines: list[Line], out: list[Output]) -> None:
        for item in lines:
            self._safe_record(Closed((item.text,), item.ref, item.origin, True), out)

    def observe_clock(self, key: str, ts_ms: int | None, out: list[Output]) -> None:
        """A source's log reached ``ts_ms`` (its last line): writes open too long by then become events."""
        if ts_ms is None:
            return
        lines: list[Line] = []
        self.writes.observe_key(key, ts_ms, lines)
        self._parse_lines(lines, out)

    def _origin(self, decoded: Decoded, hint: SourceHint) -> dict[str, Any]:
        file = decoded.file or hint.file
        facts = facts_from_path(file) if file else None
        return {
            "cluster": decoded.cluster or hint.cluster or self.config.default_cluster,
            "host": decoded.host or hint.host or (facts.host if facts else None),
            "role": decoded.role or hint.role or (facts.role if facts else None),
            "family": hint.family or (facts.family if facts else None),
            "file": file,
            "shipper_ts_ms": decoded.shipper_ts_ms,
        }

    def _safe_record(self, closed: Closed, out: list[Output]) -> None:
        try:
            self._record(closed, out)
        except Exception as exc:
            out.append(self._error("internal_error", f"{type(exc).__name__}: {exc}", closed.ref, closed.lines[0]))

    def _record(self, closed: Closed, out: list[Output]) -> None:
        self._stats.records += 1
        if not closed.candidate:
            self._stats.noise += 1
            return
        state = self._sources.setdefault(_key(closed.origin), SourceState())
        try:
            events = parse_record(
                closed.lines, closed.ref, closed.origin, state, self.clock, min_gc_pause_ms=self.config.min_gc_pause_ms
            )
        except Rejected as exc:
            out.append(self._error(exc.reason, exc.detail, closed.ref, closed.lines[0]))
            return
        self._collect(events, out)
        if state.last_ts_ms is not None and self.writes.clock_ms(_key(closed.origin)) is not None:
            self.observe_clock(_key(closed.origin), state.last_ts_ms, out)

    def _collect(self, events: list[Event], out: list[Output]) -> None:
        for event in events:
            self._stats.events[event.type] += 1
        out.extend(events)

    def _error(self, reason: str, detail: str, ref: str, text: str | bytes) -> ParseError:
        self._stats.errors[reason] += 1
        return parse_error(reason, detail, ref, text)


class _BlockReader:
    """Walks one block: skip noise between hits, feed each hit's whole record (and the line that closes it).

    Block-write lines go to the write tracker one by one (most are counted there); after the block, the source's
    clock is the time of its last line. Refs are ``file_ref:line``, or ``file_ref@offset`` when each line of the block
    is one Kafka record and ``offsets`` lists their offsets.
    """

    def __init__(self, ingest: Ingest, block: bytes, file_ref: str, first_line: int, hint: SourceHint,
                 out: list[Output], *, offsets: Sequence[int] | None = None, origin: dict[str, Any] | None = None,
                 now_ms: int | None = None):
        self.ingest = ingest
        self.block = block
        self.file_ref = file_ref
        self.first_line = first_line
        self.line_no = first_line
        self.offsets = offsets
        self.now_ms = now_ms
        self.origin = origin if origin is not None else ingest._origin(Decoded(text=""), hint)
        self.key = _key(self.origin)
        self.out = out
        self.pos = 0

    def run(self) -> None:
        block, n = self.block, len(self.block)
        if self.key in self.ingest._stitcher.open:
            while self.pos < n and not RECORD_START_BYTES.match(block, self.pos):
                self._feed_to(self._line_end(self.pos))
        for hit, index in self.ingest.scanner.hits(block):
            if hit < self.pos:
                continue
            if index >= WRITE_FROM:
                self._write_at(hit)
                continue
            self._skip_to(self._record_start(hit))
            self._feed_to(self._line_end(hit))
            while self.pos < n:
                starts = RECORD_START_BYTES.match(block, self.pos) is not None
                self._feed_to(self._line_end(self.pos))
                if starts and not self._open_is_candidate():
                    break
        if self.pos < n:
            self._skip_to(self._record_start(n - 1))
            self._feed_to(n)
        self._observe_clock()

    def _ref(self, line_no: int) -> str:
        if self.offsets is None:
            return f"{self.file_ref}:{line_no}"
        return f"{self.file_ref}@{self.offsets[line_no - self.first_line]}"

    def _write_at(self, hit: int) -> None:
        """A block-write line (if the hit starts a record): straight to the tracker, never stitched."""
        start = self.block.rfind(b"\n", 0, hit) + 1
        if start < self.pos or RECORD_START_BYTES.match(self.block, start) is None:
            return
        self._skip_to(start)
        end = self._line_end(hit)
        line = self.block[start:end].rstrip(b"\n").decode("utf-8", errors="replace").removesuffix("\r")
        self.ingest._stats.lines += 1
        self.ingest._write_line(self.key, self.origin, line, self._ref(self.line_no), self.now_ms, self.out)
        self.line_no += 1
        self.pos = end

    def _observe_clock(self) -> None:
        """The block's last line dates the source's progress (cheaply: one stamp per block)."""
        writes = self.ingest.writes
        if writes.clock_ms(self.key) is None:
            return
        end = len(self.block) - 1
        start = self.block.rfind(b"\n", 0, end) + 1
        head = self.block[start:start + 32].decode("ascii", errors="replace")
        self.ingest.observe_clock(self.key, writes.stamp_ms(head), self.out)

    def _open_is_candidate(self) -> bool:
        """Whether the record just opened needs its continuation lines too (it holds a hit of its own)."""
        pending = self.ingest._stitcher.open.get(self.key)
        return pending is not None and pending.candidate

    def _line_end(self, at: int) -> int:
        end = self.block.find(b"\n", at)
        return len(self.block) if end < 0 else end + 1

    def _record_start(self, at: int) -> int:
        """Start of the record holding offset ``at``: back over continuation lines, never before ``pos``."""
        start = self.block.rfind(b"\n", 0, at) + 1
        while start > self.pos and RECORD_START_BYTES.match(self.block, start) is None:
            start = self.block.rfind(b"\n", 0, start - 1) + 1
        return max(start, self.pos)

    def _skip_to(self, end: int) -> None:
        skipped = self.block.count(b"\n", self.pos, end)
        self.line_no += skipped
        self.ingest._stats.lines += skipped
        self.ingest._stats.noise += skipped
        self.pos = end

    def _feed_to(self, end: int) -> None:
        chunk = self.block[self.pos:end]
        if chunk.endswith(b"\n"):
            chunk = chunk[:-1]
        for raw in chunk.split(b"\n"):
            line = raw.decode("utf-8", errors="replace").removesuffix("\r")
            self.ingest._line(self.key, self.origin, line, self._ref(self.line_no), self.now_ms, self.out)
            self.line_no += 1
        self.pos = end


def _key(origin: Mapping[str, Any]) -> str:
    return "\x1f".join(str(origin.get(k) or "") for k in ("cluster", "host", "file", "family", "stream"))


__all__ = ["Ingest", "IngestConfig", "Output", "ParseError", "SourceHint", "safe_excerpt"]
