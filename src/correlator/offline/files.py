"""Discover log files and read them through one :class:`Ingest`, with hints from CONTRACT §2's naming rules."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import BinaryIO

from correlator.adapters.scanners import fastest_scanner
from correlator.core.events import Event
from correlator.core.ingest.envelopes import EnvelopeError, decode, looks_binary
from correlator.core.ingest.ingest import Ingest, IngestConfig, SourceHint
from correlator.core.ingest.prefilter import Scanner
from correlator.core.ingest.records import ParseError
from correlator.core.ingest.sources import facts_from_path, input_side, sniff_family
from correlator.offline.reading import Overlong, bounded_lines, line_blocks
from correlator.offline.summary import Summary

SNIFF_BYTES = 64 * 1024
STDIN = "-"


@dataclass(frozen=True, slots=True)
class LogFile:
    path: str
    host: str
    role: str | None
    family: str
    """``flink`` | ``hdfs`` | ``gc`` | ``envelope``."""
    side: str = "hdfs"
    """Which raw topic it is shipped to (``flink`` | ``hdfs``), decided once while its head is at hand."""


Skipped = list[tuple[str, str]]
"""(path, why) of files that are not logs."""


def discover(paths: Sequence[str], skipped: Skipped | None = None, summary: Summary | None = None) -> list[LogFile]:
    """Files in the given order; directories recursively in name order; ``-`` is stdin.

    Files that are not logs (empty, unreadable, binary, JSON that is not one shipper record per line, text with no
    Flink, Hadoop or GC line in its head) are left out: counted by kind in ``summary``, with their path and reason
    appended to ``skipped``.
    """
    summary = summary if summary is not None else Summary()
    files: list[str] = []
    for path in paths:
        if path == STDIN:
            files.append(STDIN)
        elif os.path.isdir(path):
            for root, dirs, names in os.walk(path):
                dirs.sort()
                files.extend(os.path.join(root, n) for n in sorted(names) if not n.startswith("."))
        elif os.path.isfile(path):
            files.append(path)
        else:
            raise FileNotFoundError(path)
    found: list[LogFile] = []
    for path in files:
        described = _describe(path)
        if isinstance(described, LogFile):
            found.append(described)
            continue
        kind, why = described
        summary.skipped[kind] += 1
        if skipped is not None:
            skipped.append((path, why))
    return _adopt_gc_roles(found)


def _describe(path: str) -> LogFile | tuple[str, str]:
    """The log file at ``path``, or (kind, why) it is none."""
    if path == STDIN:
        return LogFile(STDIN, "unknown", None, "flink", "flink")
    facts = facts_from_path(path)
    try:
        with open(path, "rb") as handle:
            head = handle.read(SNIFF_BYTES)
    except OSError as exc:
        return "unreadable", f"unreadable ({exc.strerror or exc})"
    if not head.strip():
        return "empty", "empty"
    if looks_binary(head):
        return "binary", "binary (NUL bytes or control characters)"
    text = head.decode("utf-8", errors="replace")
    family = sniff_family(text) or facts.family
    if family is None:
        return "unrecognised layout", "no Flink, Hadoop or JVM GC log line in its first 64 KiB"
    if family == "envelope":
        why = _not_envelope_lines(text)
        if why:
            return "not shipper records", why
    if facts.family == "gc" and family not in ("envelope",):
        family = "gc"
    return LogFile(path, facts.host or "unknown", facts.role, family, input_side(family, facts.role, text))


def _not_envelope_lines(head: str) -> str | None:
    """Why a file that starts like JSON is not one shipper record per line (None when it is)."""
    first, newline, _ = head.lstrip("\ufeff \t\r\n").partition("\n")
    if not newline and len(head) >= SNIFF_BYTES:
        return None  # one record longer than the head: judged when it is read
    try:
        decode(first.encode("utf-8"))
    except EnvelopeError as exc:
        return f"JSON, but not one shipper record per line ({exc.reason}: {exc.detail[:80]})"
    return None


def _adopt_gc_roles(files: list[LogFile]) -> list[LogFile]:
    """A GC log whose name names no role belongs to the process whose log sits in the same directory."""
    by_dir: dict[str, LogFile] = {}
    for f in files:
        if f.family in ("flink", "hdfs") and f.role:
            by_dir.setdefault(os.path.dirname(f.path), f)
    out: list[LogFile] = []
    for f in files:
        if f.family == "gc" and f.role is None:
            sibling = by_dir.get(os.path.dirname(f.path))
            if sibling is not None:
                host = sibling.host if f.host in ("unknown", None) else f.host
                f = LogFile(f.path, host, sibling.role, "gc", input_side("gc", sibling.role))
        out.append(f)
    return out


def iter_events(
    paths: Sequence[str],
    *,
    tz: str = "UTC",
    cluster: str = "default",
    scanner: Scanner | None = None,
    summary: Summary | None = None,
) -> Iterator[Event | ParseError]:
    """Every event and parse error of the given files, each file in order, through one :class:`Ingest`."""
    summary = summary if summary is not None else Summary()
    ingest = Ingest(IngestConfig(tz=tz, default_cluster=cluster), scanner or fastest_scanner())
    seen = Overlong()
    for log in discover(paths, summary=summary):
        summary.files += 1
        yield from read_file(ingest, log, cluster, seen)
    yield from ingest.flush_all()
    summary.add_ingest(ingest.stats, seen)


BLOCK_BYTES = 4 * 1024 * 1024


def read_file(ingest: Ingest, log: LogFile, cluster: str, seen: Overlong | None = None) -> Iterator[Event | ParseError]:
    """Envelope files go record by record like the topic; plain logs go in line-aligned blocks (fast path)."""
    host = None if log.host == "unknown" else log.host
    family = None if log.family == "envelope" else log.family
    hint = SourceHint(cluster=cluster, host=host, file=log.path, role=log.role, family=family)
    handle: BinaryIO = sys.stdin.buffer if log.path == STDIN else open(log.path, "rb")  # noqa: SIM115
    try:
        if log.family == "envelope":
            for number, raw in enumerate(bounded_lines(handle, ingest.config.max_line_bytes * 4, seen), start=1):
                value = raw.rstrip(b"\r\n")
                if value.strip():
                    yield from ingest.feed(value, ref=f"{log.path}:{number}", hint=SourceHint(cluster=cluster))
            return
        line = 1
        for block in line_blocks(handle, BLOCK_BYTES, ingest.config.max_line_bytes, seen):
            read = ingest.feed_block(block, file_ref=log.path, first_line=line, hint=hint)
            yield from read.outputs
            line += read.newlines
    finally:
        if handle is not sys.stdin.buffer:
            handle.close()
