"""What an offline run read, so that it never ends silently: files skipped and why, lines, records, rejections.

A run that recognised no log record at all is a failure (exit 1): binary files, an empty directory, an unknown
layout or lines beyond the length limit must not look like "no failed checkpoints".
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from correlator.offline.reading import Overlong


@dataclass
class Summary:
    files: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    """Files not read, by why: ``binary``, ``unrecognised layout``, ``empty``, ``unreadable``."""
    lines: int = 0
    too_long: int = 0
    events: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    bytes_read: int = 0
    notes: list[tuple[str, str]] = field(default_factory=list)
    """(path, what happened to it): every file given, read or skipped, in order."""
    remarks: list[str] = field(default_factory=list)
    """Decisions about the whole input the user should know of (clusters told apart or not)."""
    guessed_hosts: int = 0
    """Files whose host was taken from a folder or a pod-like name rather than proved by content or a stock name."""
    steps_back: int = 0
    """Times a DataNode's clock jumped back (its write timing restarts there)."""
    guessed_times: Counter[str] = field(default_factory=Counter)
    """Local stamps the zone alone could not place: ``dst_repeated_hour`` (placed by their source's order),
    ``dst_gap`` (a wall time the spring-forward skipped, read with the offset before it)."""

    def read(self, path: str, how: str, host: str, host_from: str, guessed: bool, stats: dict[str, Any]) -> None:
        """One file read: how, whose it is and where that came from, its lines and events."""
        self.guessed_hosts += guessed
        events = sum(stats.get("events", {}).values())
        who = f"host {host} from its {host_from}" + (" (a guess: name the host in the file name or a shipper field)"
                                                      if guessed else "")
        if host == "unknown":
            who = "host from its lines"
        unread = int(stats.get("errors", {}).get("unknown_layout", 0))
        hint = (f"; {unread:,} records in a layout it cannot read (if its lines do not start with their date, give "
                "their log4j pattern with --layout)" if unread else "")
        self.notes.append((path, f"{how}; {who}; {int(stats.get('lines', 0)):,} lines, {events:,} events{hint}"))

    def per_file(self, command: str, limit: int = 40) -> list[str]:
        """The per-file lines every file-reading command ends with on stderr."""
        notes = sorted(self.notes)
        out = [f"correlator: {command}: {path}: {note}" for path, note in notes[:limit]]
        if len(self.notes) > limit:
            out.append(f"correlator: {command}: … and {len(self.notes) - limit} more files")
        return out + [f"correlator: {command}: {remark}" for remark in self.remarks]

    def add_ingest(self, stats: dict[str, Any], overlong: Overlong) -> None:
        """One ingest's counters; lines too long are counted where they were read (the fast path skips noise)."""
        errors = stats.get("errors", {})
        self.lines += int(stats.get("lines", 0))
        self.too_long += max(overlong.lines, int(errors.get("line_too_long", 0)))
        self.bytes_read += overlong.bytes_read
        self.events += sum(stats.get("events", {}).values())
        self.errors.update(errors)
        self.guessed_times.update(stats.get("guessed_times", {}))
        self.steps_back += int(stats.get("clock_steps_back", 0))

    @property
    def recognised(self) -> int:
        """Lines read from files of a known layout, within the length limit (noise included: it is a log)."""
        return max(0, self.lines - self.too_long)

    def line(self, command: str) -> str:
        skipped = ", ".join(f"{n} {why}" for why, n in sorted(self.skipped.items()))
        parts = [f"{self.files} file{'s' if self.files != 1 else ''} read"]
        if skipped:
            parts.append(f"{sum(self.skipped.values())} skipped ({skipped})")
        parts.append(f"{self.recognised} log lines recognised")
        if self.too_long:
            parts.append(f"{self.too_long} lines too long")
        if self.guessed_hosts:
            parts.append(f"{self.guessed_hosts} file{'s' if self.guessed_hosts != 1 else ''} with a guessed host")
        if self.guessed_times["dst_repeated_hour"]:
            parts.append(f"{self.guessed_times['dst_repeated_hour']} stamps in the hour the DST fall-back repeats, "
                         "placed by their file's order")
        if self.guessed_times["dst_gap"]:
            parts.append(f"{self.guessed_times['dst_gap']} stamps in the hour the DST spring-forward skips, "
                         "read with the offset before it")
        if self.steps_back:
            parts.append(f"{self.steps_back} clock step{'s' if self.steps_back != 1 else ''} back (write timing "
                         "restarted there)")
        parts.append(f"{self.events} events")
        rejected = {r: n for r, n in self.errors.items() if r != "line_too_long"}
        if rejected:
            parts.append("rejected: " + ", ".join(f"{n} {r}" for r, n in sorted(rejected.items())))
        verdict = "no log record recognised" if self.recognised == 0 else "done"
        return f"{command}: {verdict}: " + "; ".join(parts)
