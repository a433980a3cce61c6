"""``analyze --report DIR``: the run's verdicts as a self-contained HTML report (index, a page and a timeline each).

The directory opens without a network: pages embed the timeline as SVG and link the PNG beside them. Each evidence
row opens onto its raw lines, read back from the files the run analysed: each file once for the whole report, only
up to its last wanted line, with bounds on a line's length, a row's lines, a page's lines and the report's lines, so a
report of a multi-gigabyte log costs a scan, not its size in memory.
"""

from __future__ import annotations

import bisect
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from correlator.adapters.opening import CORRUPT, open_log
from correlator.adapters.report_html import RawLines, RawLookup, file_line, index_page, page_key, verdict_page
from correlator.adapters.report_risks import losses_section, risks_section
from correlator.adapters.timeline_plot import render_all
from correlator.core.explain.risk import Risk
from correlator.core.explain.transactions import TransactionLoss
from correlator.core.explain.timeline import build_timeline
from correlator.core.explain.verdict import Verdict
from correlator.core.ingest.multiline import is_record_start

ROW_LINES = 6
"""A record's first line and up to five of its continuation lines (a stack trace's first frames)."""
LINE_BYTES = 4096
"""A line is shown up to this many bytes."""
PAGE_LINES = 200
REPORT_LINES = 20_000
"""Raw lines read for one page and for the whole report at most: a verdict may carry any number of evidence rows."""
BLOCK_BYTES = 1 << 20
STDIN = "-"
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def write_report(verdicts: Sequence[Verdict], out_dir: Path, *, zone: str = "UTC",
                 on_page: Callable[[Verdict], None] | None = None, risks: Sequence[Risk] = (),
                 losses: Sequence[TransactionLoss] = ()) -> list[Path]:
    """Write ``index.html`` (the verdicts, the records an exactly-once sink lost, then the early warnings with a chart
    each) and ``<id>.html`` / ``.png`` / ``.svg`` per verdict (its page shows the warnings that preceded it and the
    losses it helped cause); returns the paths written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    raw = RawLineReader.read(verdicts)
    written: list[Path] = []
    for verdict in verdicts:
        key = page_key(verdict.verdict_id)
        timeline = build_timeline(verdict, zone=zone)
        pictures = render_all(timeline, ("svg", "png"))
        page = verdict_page(verdict, pictures["svg"], zone=zone, raw=raw.lookup(verdict), risks=risks,
                            losses=losses)
        files = {f"{key}.svg": pictures["svg"], f"{key}.png": pictures["png"], f"{key}.html": page.encode("utf-8")}
        for name, data in files.items():
            (out_dir / name).write_bytes(data)
            written.append(out_dir / name)
        if on_page is not None:
            on_page(verdict)
    index = out_dir / "index.html"
    index.write_text(index_page(verdicts, extra=losses_section(losses) + risks_section(risks)), encoding="utf-8")
    return [index, *written]


@dataclass(frozen=True, slots=True)
class Line:
    """One line as read back: its text (control bytes shown as ``\\xNN``) and whether it was longer than shown."""

    text: str
    cut: bool


@dataclass(frozen=True, slots=True)
class RawLineReader:
    """The raw lines every page of a report shows, read once per file before any page is written.

    ``shares`` holds, per verdict id, how many lines each of its refs may show (its share of the page's and the
    report's bounds, given in evidence order); ``files`` holds each file's wanted lines, or why it was not read.
    The refs are the run's own (``path:line`` of the files it analysed), so nothing else is opened.
    """

    shares: Mapping[str, Mapping[str, int]]
    files: Mapping[str, Mapping[int, Line] | str]

    @classmethod
    def read(cls, verdicts: Iterable[Verdict]) -> RawLineReader:
        shares: dict[str, dict[str, int]] = {}
        wanted: dict[str, set[int]] = {}
        left = REPORT_LINES
        for v in verdicts:
            share = shares.setdefault(v.verdict_id, {})
            page_left = PAGE_LINES - sum(share.values())
            for e in v.evidence:
                where = file_line(e.ref)
                if where is None or e.ref in share:
                    continue
                take = min(ROW_LINES, page_left, left)
                share[e.ref] = take
                page_left -= take
                left -= take
                if take:  # one line past the share tells whether the record went on
                    wanted.setdefault(where[0], set()).update(range(where[1], where[1] + take + 1))
        return cls(shares, {path: _read(path, sorted(lines)) for path, lines in sorted(wanted.items())})

    def lookup(self, verdict: Verdict) -> RawLookup:
        """The page's lookup: a ref of this verdict to its lines."""
        share = self.shares.get(verdict.verdict_id, {})

        def raw(ref: str) -> RawLines | None:
            where = file_line(ref)
            if where is None:
                return None
            path, first = where
            allowed = share.get(ref, 0)
            if allowed == 0:
                return RawLines(path, first, missing=f"a page shows at most {PAGE_LINES} raw lines and a report "
                                                     f"{REPORT_LINES}")
            got = self.files.get(path, "not read")
            if isinstance(got, str):
                return RawLines(path, first, missing=got)
            if first not in got:
                return RawLines(path, first, missing=f"the file has no line {first} now: it changed after the analysis "
                                                     "read it")
            return _record(path, first, allowed, got)

        return raw


def _record(path: str, first: int, allowed: int, got: Mapping[int, Line]) -> RawLines:
    """The record's first line and its continuation lines, as the stitcher groups them: lines after a log header
    that do not look like one themselves (a file of JSON or framed lines has one line per record)."""
    lines = [got[first]]
    header = is_record_start(got[first].text)
    number = first + 1
    while header and number in got and not is_record_start(got[number].text):
        if len(lines) == allowed:
            return RawLines(path, first, tuple(line.text for line in lines), cut=True)
        lines.append(got[number])
        number += 1
    return RawLines(path, first, tuple(line.text for line in lines), cut=any(line.cut for line in lines))


def _read(path: str, wanted: list[int]) -> dict[int, Line] | str:
    """The wanted lines of one file (numbered from 1 as the reader numbered them), or why it could not be read."""
    if path == STDIN:
        return "read from standard input, which is not kept"
    if not os.path.isfile(path):
        return "the file is no longer there"
    try:
        handle, _ = open_log(path)
        with handle:
            return _pick(handle, wanted)
    except CORRUPT as exc:
        return f"cannot read the file ({type(exc).__name__})"


def _pick(handle: BinaryIO, wanted: list[int]) -> dict[int, Line]:
    """Scan blocks, splitting only those holding a wanted line; stop after the last one."""
    found: dict[int, Line] = {}
    wanted_set = set(wanted)
    line = 1  # the number of the line the next byte belongs to
    current = bytearray()  # the start of that line, when it is wanted
    while line <= wanted[-1]:
        block = handle.read(BLOCK_BYTES)
        if not block:
            break
        newlines = block.count(b"\n")
        at = bisect.bisect_left(wanted, line)
        if at < len(wanted) and wanted[at] <= line + newlines:
            pieces = block.split(b"\n")
            for i, piece in enumerate(pieces):
                if line + i not in wanted_set:
                    continue
                if len(current) <= LINE_BYTES:
                    current += piece[:LINE_BYTES + 1 - len(current)]
                if i < len(pieces) - 1:  # the line ends in this block
                    found[line + i] = _line(current)
                    current.clear()
        line += newlines
    if current:
        found[line] = _line(current)
    return found


def _line(data: bytearray) -> Line:
    text = bytes(data[:LINE_BYTES]).decode("utf-8", "replace").rstrip("\r")
    return Line(CONTROL.sub(lambda m: f"\\x{ord(m[0]):02x}", text), len(data) > LINE_BYTES)
