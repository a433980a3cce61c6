"""Discover log files and read them through one :class:`Ingest`: whatever compressed, framed or laid them out.

Each file is described once from its head (decompressed): its container framing (CRI, Docker json-file), whether
its lines are JSON layout records, its family from content, and the host its name proves or only suggests. Reading
then unwraps every block to the daemon's own text lines and takes the fast block path like any stock log.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, tzinfo
from typing import Any, BinaryIO

from correlator.adapters.scanners import fastest_scanner
from correlator.core.events import Event, LogUnread
from correlator.core.ingest.clusters import identity, split
from correlator.core.ingest.envelopes import EnvelopeError, decode, looks_binary
from correlator.core.ingest.framing import Framing, Unframer, layout_of, sniff_framing
from correlator.core.ingest.patterns import TextLayout
from correlator.core.ingest.ingest import Ingest, IngestConfig, SourceHint
from correlator.core.ingest.prefilter import Scanner
from correlator.core.ingest.records import ParseError
from correlator.core.ingest.sources import HostFrom, Side, facts_from_path, input_side, sniff_family
from correlator.adapters.opening import CORRUPT, compression_of, damage_of, open_log
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
    side: Side = Side.HDFS
    """Which raw topic it is shipped to (``flink`` | ``hdfs``), decided once while its head is at hand."""
    framing: Framing = Framing.PLAIN
    layout: str | None = None
    """The JSON layout its lines are records of (``ecs``, ``log4j2-json``, …), None for text layouts."""
    codec: str | None = None
    host_from: HostFrom = HostFrom.NONE
    cluster: str | None = None
    """The cluster its folder names (``--cluster-from-dir``) or its HDFS identity does; None: the run's cluster."""
    identity: frozenset[str] = frozenset()
    """The HDFS its head names (:func:`correlator.core.ingest.clusters.identity`)."""
    time_only: bool = False
    """Its lines stamp the time of day only: the date comes from its name, or the file cannot be placed in time."""
    date: tuple[int, int, int] | None = None
    patterned: bool = False
    """Its lines are in the ``--layout`` pattern (rewritten before they are parsed)."""

    @property
    def how(self) -> str:
        """How the file was read, in words for the per-file summary."""
        parts = [self.codec or "", FRAMING_WORDS.get(self.framing, ""),
                 f"{LAYOUT_WORDS.get(self.layout, self.layout)} layout" if self.layout else "",
                 "the --layout pattern" if self.patterned else ""]
        if self.time_only:
            parts.append("times of day dated from its file name ({:04d}-{:02d}-{:02d})".format(*self.date)
                         if self.date else "times of day with no date in its lines or name: rename it "
                         "<name>.log.yyyy-MM-dd (the date of its first line) or log the date (%d{ISO8601})")
        return ", ".join(p for p in parts if p) or "text"


FRAMING_WORDS = {Framing.CRI: "CRI container log", Framing.DOCKER: "Docker json-file container log"}
LAYOUT_WORDS = {"ecs": "ECS JSON", "log4j2-json": "log4j2 JsonLayout", "logstash": "Logstash JSON", "gelf": "GELF"}
_TIME_OF_DAY = re.compile(r"\d\d:\d\d:\d\d[,.]\d{3} ")


Skipped = list[tuple[str, str]]
"""(path, why) of files that are not logs."""


def discover(paths: Sequence[str], skipped: Skipped | None = None, summary: Summary | None = None, *,
             cluster_from_dir: bool = False, tz: tzinfo = UTC, layout: str | None = None) -> list[LogFile]:
    """Files in the given order; directories recursively in name order; ``-`` is stdin.

    Files that are not logs (empty, unreadable, binary, JSON that is not one shipper record per line, text with no
    Flink, Hadoop or GC line in its head) are left out: counted by kind in ``summary``, with their path and reason
    appended to ``skipped``. With ``cluster_from_dir`` the first folder below a given directory names the cluster of
    every file under it (one folder per cluster). A ``layout`` (log4j pattern) rewrites the heads before they are
    judged, as the ingest rewrites every line.
    """
    summary = summary if summary is not None else Summary()
    pattern = TextLayout.compile(layout, tz) if layout else None
    files: list[tuple[str, str | None]] = []
    for path in paths:
        if path == STDIN:
            files.append((STDIN, None))
        elif os.path.isdir(path):
            for root, dirs, names in os.walk(path):
                dirs.sort()
                top = os.path.relpath(root, path).replace("\\", "/").split("/")[0]
                folder = top if cluster_from_dir and top not in (".", "") else None
                files.extend((os.path.join(root, n), folder) for n in sorted(names) if not n.startswith("."))
        elif os.path.isfile(path):
            files.append((path, None))
        else:
            raise FileNotFoundError(path)
    found: list[LogFile] = []
    for path, folder in files:
        described = _describe(path, tz, pattern)
        if isinstance(described, LogFile):
            found.append(replace(described, cluster=folder) if folder else described)
            continue
        kind, why = described
        summary.skipped[kind] += 1
        summary.notes.append((path, f"skipped: {why}"))
        if skipped is not None:
            skipped.append((path, why))
    found = _adopt_gc_roles(found)
    return found if cluster_from_dir else _told_apart(found, summary)


def _told_apart(files: list[LogFile], summary: Summary) -> list[LogFile]:
    """Several clusters' logs in one pile, each file given the cluster its HDFS identity proves (said once)."""
    told = split({f.path: (f.identity, f.family) for f in files})
    if told.refused:
        summary.remarks.append(f"not split into clusters: {told.refused}; if they are several clusters, put each "
                               "in a folder of its own and use --cluster-from-dir")
    if not told.cluster_of:
        return files
    by_dir: dict[str, set[str]] = {}
    for path, name in told.cluster_of.items():
        by_dir.setdefault(os.path.dirname(path), set()).add(name)
    out: list[LogFile] = []
    unplaced: list[str] = []
    for f in files:
        cluster: str | None = told.cluster_of.get(f.path)
        siblings = by_dir.get(os.path.dirname(f.path), set())
        if cluster is None and len(siblings) == 1:
            cluster = next(iter(siblings))  # a GC log beside its process's log
        if cluster is None:
            unplaced.append(f.path)
        out.append(replace(f, cluster=cluster))
    names = sorted(set(told.cluster_of.values()))
    summary.remarks.append(f"{len(names)} clusters told apart by the HDFS their logs name: {', '.join(names)}"
                           + (f"; {len(unplaced)} files name none and stay in the run's cluster: "
                              + ", ".join(unplaced[:5]) if unplaced else ""))
    return out


def _describe(path: str, tz: tzinfo = UTC, pattern: TextLayout | None = None) -> LogFile | tuple[str, str]:
    """The log file at ``path``, or (kind, why) it is none."""
    if path == STDIN:
        return LogFile(STDIN, "unknown", None, "flink", Side.FLINK)
    facts = facts_from_path(path)
    codec = compression_of(_peek(path))
    try:
        handle, codec = open_log(path)
        with handle:
            head = handle.read(SNIFF_BYTES)
            damage = damage_of(handle)
    except CORRUPT as exc:
        damaged = f"damaged {codec} file: " if codec else ""
        return "unreadable", f"unreadable ({damaged}{getattr(exc, 'strerror', None) or exc})"
    if not head.strip() and damage is not None:
        return "unreadable", f"unreadable (damaged {codec} file: {damage}, before its first line)"
    if not head.strip():
        return "empty", "empty" if codec is None else f"empty once decompressed ({codec})"
    if looks_binary(head):
        if codec:
            return "binary", f"binary once decompressed ({codec}): an archive or data, not a log; unpack it first"
        return "binary", "binary (NUL bytes or control characters): not a log, nor a gzip, bzip2, xz or zstd file"
    framing = sniff_framing(head.decode("utf-8", errors="replace"))
    text = _unframed_head(head, framing)
    layout = layout_of(text.lstrip("\ufeff").split("\n", 1)[0])
    if layout is not None:
        text = _unframed_head(text.encode("utf-8"), Framing.PLAIN, tz)
    patterned = False
    if pattern is not None:
        rewritten = pattern.block(text.encode("utf-8", errors="replace")).decode("utf-8", errors="replace")
        patterned, text = rewritten != text, rewritten
    family = sniff_family(text) or facts.family
    if family is None:
        if pattern is not None:
            return "unrecognised layout", (f"no Flink, Hadoop or JVM GC log line in its first 64 KiB"
                                           f"{'' if patterned else ', and none of its lines matches --layout'}")
        return "unrecognised layout", ("no Flink, Hadoop or JVM GC log line in its first 64 KiB; if its lines do not "
                                       "start with their date, give their log4j pattern with --layout")
    if family == "envelope":
        why = _not_envelope_lines(text)
        if why:
            return "not shipper records", why
    if facts.family == "gc" and family not in ("envelope",):
        family = "gc"
    return LogFile(path, facts.host or "unknown", facts.role, family, input_side(family, facts.role, text), framing,
                   layout, codec, facts.host_from, identity=identity(text),
                   time_only=_TIME_OF_DAY.match(text.lstrip("\ufeff")) is not None, date=facts.date,
                   patterned=patterned)


def _peek(path: str) -> bytes:
    try:
        with open(path, "rb") as raw:
            return raw.read(6)
    except OSError:
        return b""


def _unframed_head(head: bytes, framing: Framing, layout_zone: tzinfo | None = None) -> str:
    """The head's whole lines as the daemon wrote them (container framing stripped, layout records rendered)."""
    if framing is Framing.PLAIN and layout_zone is None:
        return head.decode("utf-8", errors="replace")
    cut = head.rfind(b"\n") + 1 or len(head)
    return Unframer(framing, layout_zone).block(head[:cut]).decode("utf-8", errors="replace")


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
                f = replace(f, host=host, role=sibling.role, side=input_side("gc", sibling.role))
        out.append(f)
    return out


def iter_events(
    paths: Sequence[str],
    *,
    tz: str = "UTC",
    cluster: str = "default",
    scanner: Scanner | None = None,
    summary: Summary | None = None,
    cluster_from_dir: bool = False,
    layout: str | None = None,
) -> Iterator[Event | ParseError]:
    """Every event and parse error of the given files, each file in order, through one :class:`Ingest`."""
    summary = summary if summary is not None else Summary()
    ingest = Ingest(IngestConfig(tz=tz, default_cluster=cluster, layout=layout), scanner or fastest_scanner())
    seen = Overlong()
    for log in discover(paths, summary=summary, cluster_from_dir=cluster_from_dir, tz=ingest.clock.zone,
                        layout=layout):
        summary.files += 1
        before = ingest.stats
        yield from read_file(ingest, log, cluster, seen)
        summary.read(log.path, log.how, log.host, log.host_from, facts_guessed(log), _since(before, ingest.stats))
    yield from ingest.flush_all()
    summary.add_ingest(ingest.stats, seen)


def facts_guessed(log: LogFile) -> bool:
    """Whether the file's host is a guess (a folder's or a pod-like name), which the summary says."""
    return log.host != "unknown" and log.host_from in (HostFrom.POD_FILE, HostFrom.DIRECTORY)


def _since(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """One file's share of a shared ingest's counters."""
    events = {k: n - before["events"].get(k, 0) for k, n in after["events"].items()}
    errors = {k: n - before["errors"].get(k, 0) for k, n in after["errors"].items()}
    return {"lines": after["lines"] - before["lines"], "events": events, "errors": errors}


BLOCK_BYTES = 4 * 1024 * 1024


def read_file(ingest: Ingest, log: LogFile, cluster: str, seen: Overlong | None = None) -> Iterator[Event | ParseError]:
    """Envelope files go record by record like the topic; logs go in line-aligned blocks (fast path), unwrapped from
    their compression, container framing and JSON layout first."""
    host = None if log.host == "unknown" else log.host
    family = None if log.family == "envelope" else log.family
    cluster = log.cluster or cluster
    hint = SourceHint(cluster=cluster, host=host, file=log.path, role=log.role, family=family)
    handle: BinaryIO = sys.stdin.buffer if log.path == STDIN else open_log(log.path)[0]
    line = 1
    last: list[Event] = []
    try:
        if log.family == "envelope":
            for number, raw in enumerate(bounded_lines(handle, ingest.config.max_line_bytes * 4, seen), start=1):
                value = raw.rstrip(b"\r\n")
                if value.strip():
                    yield from ingest.feed(value, ref=f"{log.path}:{number}", hint=SourceHint(cluster=cluster))
            return
        unframer = Unframer(log.framing, ingest.clock.zone if log.layout else None)
        for framed in line_blocks(handle, BLOCK_BYTES, ingest.config.max_line_bytes, seen):
            read = ingest.feed_block(unframer.block(framed), file_ref=log.path, first_line=line, hint=hint)
            yield from _noting_last(read.outputs, last)
            line += read.newlines
        rest = unframer.flush()
        if rest is not None:
            yield from _noting_last(ingest.feed_block(rest + b"\n", file_ref=log.path, first_line=line,
                                                      hint=hint).outputs, last)
        damage = damage_of(handle)
        if damage is not None:
            yield from _unread(ingest, log, cluster, last, f"read to line {line - 1:,}, then {damage}")
    except CORRUPT as exc:
        yield from _unread(ingest, log, cluster, last, f"read to line {line - 1:,}, then {exc}")
    finally:
        if handle is not sys.stdin.buffer:
            handle.close()


def _noting_last(outputs: Iterable[Event | ParseError], last: list[Event]) -> Iterator[Event | ParseError]:
    """``outputs``, keeping the latest event seen in ``last`` (whose source a damage note is about)."""
    for item in outputs:
        if isinstance(item, Event) and (not last or item.ts_ms >= last[0].ts_ms):
            last[:] = [item]
        yield item


def _unread(ingest: Ingest, log: LogFile, cluster: str, last: list[Event], why: str) -> Iterator[Event | ParseError]:
    """A file read only up to damage: a rejection (said on stderr and counted) and the event coverage names it by."""
    yield ingest.reject("damaged", f"{log.path}: {why}", log.path)
    if last:
        yield LogUnread(ts_ms=last[0].ts_ms, cluster=last[0].cluster, host=last[0].host, role=last[0].role,
                        ref=log.path, why=why, path=log.path)
    elif log.host != "unknown" and log.role:
        yield LogUnread(ts_ms=0, cluster=log.cluster or cluster, host=log.host, role=log.role, ref=log.path, why=why,
                        path=log.path)


def unread_file(path: str, why: str, cluster: str) -> LogUnread | None:
    """A log file that could not be opened, as the event coverage names it by, when its name says whose it is."""
    facts = facts_from_path(path)
    if facts.host is None or facts.role is None:
        return None
    return LogUnread(ts_ms=0, cluster=cluster, host=facts.host, role=facts.role, ref=path, why=why, path=path)
