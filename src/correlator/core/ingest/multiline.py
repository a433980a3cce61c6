"""Multi-line reassembly: lines of one source stream grouped into records (header line + continuation lines).

A record starts at a line that looks like a log header (a timestamp, a GC stamp or decoration, or a level word for
timestamp-less layouts); every other line — stack frames, ``Caused by:``, lock-report frames without ``at``,
JvmPauseMonitor GC-pool lines, tab-led NameNode report lines, STARTUP_MSG banners — continues the open record;
an object store's access log record (its owner's id, bucket and time) is a record of its own. A
record closes when the next header of the same source arrives, after an idle bound, or at the end of input.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from correlator.core.ingest.records import Origin

ACCESS_START = r"[0-9a-f]{64} \S+ \[\d\d/[A-Z][a-z]{2}/\d{4}:"
"""How an S3 server access log record begins (its bucket owner's canonical id, the bucket, the time)."""

_START = (
    r"(?:\d{4}-\d\d-\d\d[ T]\d\d:\d\d|\d\d/\d\d/\d\d \d\d:\d\d:\d\d |\d\d:\d\d:\d\d[,.]\d{3} |\d+\.\d{3}: \[|\[\d"
    r"|\[?(?:TRACE|DEBUG|INFO|WARN|WARNING|ERROR|FATAL)\]? |" + ACCESS_START + ")"
)
RECORD_START = re.compile(_START)
RECORD_START_BYTES = re.compile(_START.encode())
NEXT_RECORD_BYTES = re.compile(b"\n(?=" + _START.encode() + b")")
"""The newline that ends a record's last continuation line: the next line starts a record."""


def is_record_start(line: str) -> bool:
    return RECORD_START.match(line) is not None


@dataclass(slots=True)
class Pending:
    """The open record of one source: its lines so far, whether any line hit the prefilter, when it last grew."""

    lines: list[str]
    ref: str
    origin: Origin
    candidate: bool
    touched_ms: int | None
    truncated: int = 0


@dataclass(frozen=True, slots=True)
class Closed:
    lines: tuple[str, ...]
    ref: str
    origin: Origin
    candidate: bool
    handed_back: bool = False
    """A write line the tracker handed back to be parsed: its time is the write's, not the log's progress."""


@dataclass(slots=True)
class Stitcher:
    """Holds at most one open record per source key; a noise record keeps no lines beyond its first."""

    max_lines: int = 2000
    open: dict[str, Pending] = field(default_factory=dict)

    def add(
        self,
        key: str,
        line: str,
        *,
        ref: str,
        origin: Origin,
        start: bool,
        candidate: bool,
        now_ms: int | None,
    ) -> Closed | None:
        """Append ``line``; returns the record it closed, if it started a new one."""
        current = self.open.get(key)
        if current is None or start:
            self.open[key] = Pending([line], ref, origin, candidate, now_ms)
            return _close(current) if current is not None else None
        if len(current.lines) < self.max_lines:
            current.lines.append(line)
        else:
            current.truncated += 1
        current.candidate = current.candidate or candidate
        if now_ms is not None:
            current.touched_ms = now_ms
        return None

    def extend(self, key: str, lines: list[str], now_ms: int | None) -> None:
        """Continuation lines of the open record of ``key``, appended at once (``add`` of each, none a start)."""
        current = self.open[key]
        room = max(0, self.max_lines - len(current.lines))
        current.lines.extend(lines[:room])
        current.truncated += max(0, len(lines) - room)
        if now_ms is not None:
            current.touched_ms = now_ms

    def close(self, key: str) -> Closed | None:
        """Close the open record of ``key`` now (a line that is not part of it has arrived)."""
        pending = self.open.pop(key, None)
        return _close(pending) if pending is not None else None

    def close_idle(self, now_ms: int, idle_ms: int) -> list[Closed]:
        idle = [k for k, p in self.open.items() if p.touched_ms is None or now_ms - p.touched_ms > idle_ms]
        return [_close(self.open.pop(k)) for k in idle]

    def restart_idle(self, now_ms: int) -> None:
        """Open records wait a full idle bound again (their next line may be in a backlog not read yet)."""
        for pending in self.open.values():
            pending.touched_ms = now_ms

    def close_all(self) -> list[Closed]:
        closed = [_close(p) for p in self.open.values()]
        self.open.clear()
        return closed

    def snapshot(self) -> dict[str, Any]:
        return {
            key: {
                "lines": p.lines,
                "ref": p.ref,
                "origin": p.origin.as_dict(),
                "candidate": p.candidate,
                "touched_ms": p.touched_ms,
                "truncated": p.truncated,
            }
            for key, p in self.open.items()
        }

    @classmethod
    def restore(cls, data: dict[str, Any], max_lines: int) -> Stitcher:
        stitcher = cls(max_lines=max_lines)
        for key, p in data.items():
            origin = Origin.from_dict(p["origin"])
            stitcher.open[key] = Pending(list(p["lines"]), p["ref"], origin, bool(p["candidate"]), p["touched_ms"],
                                         p["truncated"])
        return stitcher


def _close(p: Pending) -> Closed:
    return Closed(tuple(p.lines), p.ref, p.origin, p.candidate)
