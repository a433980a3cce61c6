"""The ingest pipeline of one worker or one offline run: envelope → multi-line → prefilter → parse → events.

Nothing escapes :meth:`Ingest.feed` as an exception: bad input becomes a :class:`ParseError` with a stable reason
(the streaming layer dead-letters it), and anything unexpected becomes ``internal_error``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from correlator.core.envelopes import Decoded, EnvelopeError, decode
from correlator.core.events import Event
from correlator.core.limits import out_of_range
from correlator.core.multiline import RECORD_START_BYTES, Closed, Stitcher, is_record_start
from correlator.core.parse import Rejected, SourceState, parse_record
from correlator.core.prefilter import ReScanner, Scanner
from correlator.core.progress import Progress, local_stamp
from correlator.core.records import ParseError, parse_error, safe_excerpt
from correlator.core.sources import facts_from_path
from correlator.core.timestamps import LocalClock

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
        self._progress = Progress(self.clock, config.default_cluster)
        self._origins: dict[str, dict[str, Any]] = {}

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
        return out

    def restart_idle(self, now_ms: int) -> None:
        self._stitcher.restart_idle(now_ms)

    def flush_all(self) -> list[Output]:
        """End of input: close every open record, and report each source's last line time."""
        out: list[Output] = []
        for closed in self._stitcher.close_all():
            self._safe_record(closed, out)
        found: list[Event] = []
        for key, state in sorted(self._sources.items()):
            origin = self._origins.get(key)
            if origin is not None:
                self._progress.flush(origin, state, f"{origin.get('file') or key}:end", found)
        self._collect(found, out, "")
        return out

    @property
    def stats(self) -> dict[str, Any]:
        s = self._stats
        return {
            "lines": s.lines,
            "records": s.records,
            "noise": s.noise,
            "invalid_utf8": s.invalid_utf8,
            "events": dict(s.events),
            "errors": dict(s.errors),
        }

    def snapshot(self) -> dict[str, Any]:
        return {
            "version": 1,
            "open": self._stitcher.snapshot(),
            "sources": {k: asdict(v) for k, v in self._sources.items()},
            "stats": self.stats,
        }

    @classmethod
    def restore(cls, config: IngestConfig, data: Mapping[str, Any], scanner: Scanner | None = None) -> Ingest:
        ingest = cls(config, scanner)
        ingest._stitcher = Stitcher.restore(dict(data.get("open", {})), config.max_record_lines)
        ingest._sources = {k: SourceState(**v) for k, v in dict(data.get("sources", {})).items()}
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
            decoded = decode(value, headers, record_key)
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
        closed = self._stitcher.add(
            key,
            line,
            ref=ref,
            origin=origin,
            start=is_record_start(line),
            candidate=self.scanner.matches(line),
            now_ms=now_ms,
        )
        if closed is not None:
            self._safe_record(closed, out)

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
        state = self._source(closed.origin)
        self._progress_line(closed.lines[0], closed.origin, state, closed.ref, out)
        if not closed.candidate:
            self._stats.noise += 1
            return
        if not (closed.origin["host"] or closed.origin["file"] or closed.origin.get("stream")):
            state.host = None  # an unkeyed partition mixes files: a banner on it names only its own record's host
        try:
            events = parse_record(
                closed.lines, closed.ref, closed.origin, state, self.clock, min_gc_pause_ms=self.config.min_gc_pause_ms
            )
        except Rejected as exc:
            out.append(self._error(exc.reason, exc.detail, closed.ref, closed.lines[0]))
            return
        if state.progress_pending is not None:
            found: list[Event] = []
            self._progress.role_known(closed.origin, state, closed.ref, found)
            self._collect(found, out, closed.lines[0])
        self._collect(events, out, closed.lines[0])

    def _source(self, origin: dict[str, Any]) -> SourceState:
        key = _key(origin)
        state = self._sources.get(key)
        if state is None:
            state = self._sources[key] = SourceState()
        self._origins[key] = origin
        return state

    def _progress_line(self, line: str, origin: dict[str, Any], state: SourceState, ref: str,
                       out: list[Output]) -> None:
        if line[:18] == state.progress_bucket:  # the common case: same 10 s of log time as the last record
            state.progress_last = line[:23]
            return
        found: list[Event] = []
        self._progress.line(line, origin, state, ref, found)
        self._collect(found, out, line)

    def _collect(self, events: list[Event], out: list[Output], text: str) -> None:
        for event in events:
            why = out_of_range(event)
            if why is not None:
                out.append(self._error("out_of_range", f"{event.type}: {why}", event.ref, text))
                continue
            self._stats.events[event.type] += 1
            out.append(event)

    def _error(self, reason: str, detail: str, ref: str, text: str | bytes) -> ParseError:
        self._stats.errors[reason] += 1
        return parse_error(reason, detail, ref, text)


class _BlockReader:
    """Walks one block: skip noise between hits, feed each hit's whole record (and the line that closes it)."""

    def __init__(self, ingest: Ingest, block: bytes, file_ref: str, first_line: int, hint: SourceHint, out: list[Output]):
        self.ingest = ingest
        self.block = block
        self.file_ref = file_ref
        self.line_no = first_line
        self.origin = ingest._origin(Decoded(text=""), hint)
        self.key = _key(self.origin)
        self.out = out
        self.pos = 0

    def run(self) -> None:
        block, n = self.block, len(self.block)
        self._edge_progress(first=True)
        if self.key in self.ingest._stitcher.open:
            while self.pos < n and not RECORD_START_BYTES.match(block, self.pos):
                self._feed_to(self._line_end(self.pos))
        for hit in self.ingest.scanner.offsets(block):
            if hit < self.pos:
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
        self._edge_progress(first=False)

    def _edge_progress(self, *, first: bool, tries: int = 64) -> None:
        """The block's first and last stamped lines report the source's time even when all between is skipped."""
        block, n = self.block, len(self.block)
        at = 0 if first else block.rfind(b"\n", 0, max(0, n - 1)) + 1
        for _ in range(tries):
            head = block[at:at + 32].decode("utf-8", errors="replace")
            if local_stamp(head):
                state = self.ingest._source(self.origin)
                self.ingest._progress_line(head, self.origin, state, f"{self.file_ref}:{self.line_no}", self.out)
                return
            if first:
                at = block.find(b"\n", at) + 1
                if at <= 0 or at >= n:
                    return
            else:
                if at == 0:
                    return
                at = block.rfind(b"\n", 0, at - 1) + 1

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
            self.ingest._line(self.key, self.origin, line, f"{self.file_ref}:{self.line_no}", None, self.out)
            self.line_no += 1
        self.pos = end


def _key(origin: Mapping[str, Any]) -> str:
    return "\x1f".join(str(origin.get(k) or "") for k in ("cluster", "host", "file", "family", "stream"))


__all__ = ["Ingest", "IngestConfig", "Output", "ParseError", "SourceHint", "safe_excerpt"]
