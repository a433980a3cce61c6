"""The report's evidence rows opening onto their raw lines: read back from the analysed files (plain or compressed),
bounded, escaped; the worker's pages, which keep no log lines, say where each line is instead."""

from __future__ import annotations

import dataclasses
import gzip
import json
import random
import re
from html import escape
from pathlib import Path

import pytest
import zstandard

import correlator.offline.report as report
from correlator.adapters.report_html import RawLines, file_line, verdict_page
from correlator.core.explain.verdict import Verdict, verdict_from_dict
from correlator.offline.analyze import analyze
from correlator.offline.report import RawLineReader, write_report

TESTS = Path(__file__).resolve().parents[1]
SEED = TESTS / "golden" / "scenarios" / "seed"
RECURRING = TESTS / "data" / "verdicts" / "recurring.jsonl"
STACK = ["2020-01-02 09:06:07,715 WARN org.apache.hadoop.hdfs.server.datanode.DataNode: Lock held <b>",
         "java.lang.Thread.getStackTrace(Thread.java:1559)", "\tat a.b(C.java:1)", "\tat a.c(C.java:2)",
         "\tat a.d(C.java:3)", "\tat a.e(C.java:4)", "\tat a.f(C.java:5)", "\tat a.g(C.java:6)"]


def _verdict(refs: list[str], verdict_id: str = "v-raw") -> Verdict:
    first = next(x for x in RECURRING.read_text(encoding="utf-8").splitlines() if x.startswith("{"))
    v = verdict_from_dict(json.loads(first))
    item = v.evidence[0]
    return dataclasses.replace(v, verdict_id=verdict_id,
                               evidence=tuple(dataclasses.replace(item, ref=ref) for ref in refs))


def _lines_of(path: Path, number: int) -> str:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:  # type: ignore[operator]
        return handle.read().split("\n")[number - 1]


def test_each_seed_row_opens_onto_its_line_with_file_and_number(tmp_path: Path) -> None:
    """Every evidence row of the seed's page holds, inside a ``<details>``, the line its ref names as the file has it
    (escaped), after the full path and the line number."""
    [verdict] = analyze([str(SEED)])
    write_report([verdict], tmp_path)
    page = (tmp_path / f"{verdict.verdict_id}.html").read_text(encoding="utf-8")
    rows = re.findall(r"<tr>(.*?)</tr>", page.split('<tbody>', 1)[1].split("</table>")[0], re.S)
    assert len(rows) == len(verdict.evidence) and all(row.count("<details") == 1 for row in rows)
    for row, e in zip(rows, verdict.evidence):
        where = file_line(e.ref)
        assert where is not None
        path, number = where
        assert re.search(rf"{re.escape(escape(path))}, lines? {number}[–<( ]", row), row
        assert f"<pre>{escape(_lines_of(Path(path), number))}" in row
        assert f'title="{escape(e.ref)}"' in row and f":{number}</span>" in row


def test_compressed_files_are_read_back(tmp_path: Path) -> None:
    """Refs into a gzip and a zstd file show the decompressed lines."""
    data = "\n".join(f"2020-01-02 09:00:{i % 60:02d},000 INFO line {i} <i>" for i in range(1, 400)) + "\n"
    (tmp_path / "a.log.gz").write_bytes(gzip.compress(data.encode()))
    (tmp_path / "b.log.zst").write_bytes(zstandard.ZstdCompressor().compress(data.encode()))
    v = _verdict([f"{tmp_path / 'a.log.gz'}:7", f"{tmp_path / 'b.log.zst'}:399"])
    raw = RawLineReader.read([v]).lookup(v)
    gz, zst = raw(v.evidence[0].ref), raw(v.evidence[1].ref)
    assert gz == RawLines(str(tmp_path / "a.log.gz"), 7, ("2020-01-02 09:00:07,000 INFO line 7 <i>",))
    assert zst is not None and zst.lines == ("2020-01-02 09:00:39,000 INFO line 399 <i>",)
    page = verdict_page(v, None, raw=raw)
    assert "&lt;i&gt;" in page and "<i>" not in page


def test_a_record_shows_its_continuation_lines_within_bounds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A stack trace shows its first lines up to the row's bound (and says it is shortened); a line past the byte
    bound is cut; control bytes are shown, not passed on; the next header ends a record."""
    monkeypatch.setattr(report, "LINE_BYTES", 120)
    log = tmp_path / "dn.log"
    long = "2020-01-02 09:06:08,000 INFO " + "x" * 5000
    log.write_text("\n".join(["noise", *STACK, long, "2020-01-02 09:06:09,000 INFO bell\x07 done"]) + "\n")
    v = _verdict([f"{log}:2", f"{log}:10", f"{log}:11"])
    raw = RawLineReader.read([v]).lookup(v)
    trace = raw(f"{log}:2")
    assert trace is not None and trace.lines == tuple(STACK[:report.ROW_LINES]) and trace.cut
    cut = raw(f"{log}:10")
    assert cut is not None and cut.lines == (long[:120],) and cut.cut
    bell = raw(f"{log}:11")
    assert bell is not None and bell.lines == ("2020-01-02 09:06:09,000 INFO bell\\x07 done",) and not bell.cut
    page = verdict_page(v, None, raw=raw)
    assert "Lock held &lt;b&gt;" in page and "<b>" not in page and "(shortened)" in page
    assert f"{escape(str(log))}, lines 2–{1 + report.ROW_LINES} (shortened)" in page


def test_each_file_is_read_once_and_the_page_budget_holds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two pages citing one file open it once; rows past the page's share of lines say so instead."""
    log = tmp_path / "tm.log"
    log.write_text("".join(f"2020-01-02 09:00:00,{i:03d} INFO line {i}\n" for i in range(1, 100)))
    opened: list[str] = []
    real = report.open_log
    monkeypatch.setattr(report, "open_log", lambda path: (opened.append(path), real(path))[1])
    monkeypatch.setattr(report, "PAGE_LINES", 2 * report.ROW_LINES)
    a = _verdict([f"{log}:{n}" for n in (1, 5, 9)], "v-a")
    b = _verdict([f"{log}:{n}" for n in (50, 9)], "v-b")
    reader = RawLineReader.read([a, b])
    assert opened == [str(log)]
    page_a = verdict_page(a, None, raw=reader.lookup(a))
    assert page_a.count("<pre>") == 2 and "raw line not shown: a page shows at most 12 raw lines" in page_a
    page_b = verdict_page(b, None, raw=reader.lookup(b))
    assert "INFO line 50</pre>" in page_b and "INFO line 9</pre>" in page_b


def test_block_boundaries_do_not_move_a_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tiny blocks split lines everywhere; every wanted line still comes back whole, numbered as the reader did."""
    rng = random.Random(7)
    lines = ["x" * rng.randrange(0, 30) + f" {i}" for i in range(1, 300)]
    log = tmp_path / "any.log"
    log.write_text("\n".join(lines))  # no newline after the last line
    monkeypatch.setattr(report, "BLOCK_BYTES", 7)
    wanted = sorted(rng.sample(range(1, 300), 40) + [299])
    got = report._read(str(log), wanted)
    assert isinstance(got, dict) and {n: got[n].text for n in wanted} == {n: lines[n - 1] for n in wanted}


def test_unreadable_sources_say_why(tmp_path: Path) -> None:
    """A file gone since the analysis, a line past its end, standard input and a topic record each say why no line
    is shown; the page still has a ``<details>`` for every row."""
    log = tmp_path / "short.log"
    log.write_text("2020-01-02 09:00:00,000 INFO one\n")
    v = _verdict([f"{tmp_path / 'gone.log'}:3", f"{log}:40", "-:12", "correlator.raw/2@1234"])
    page = verdict_page(v, None, raw=RawLineReader.read([v]).lookup(v))
    assert page.count("<details") == 4 and "<pre>" not in page
    for why in ("the file is no longer there", "the file has no line 40 now", "read from standard input",
                "its source is not a line of a file"):
        assert why in page, why


def test_worker_pages_name_where_the_line_is() -> None:
    """Without a lookup (the worker), rows do not expand: the short source keeps the full ref on hover and one note
    says where raw lines are, for file refs and for topic records."""
    v = _verdict(["/var/log/hadoop/hadoop-hdfs-datanode-dn-2.log:1200", "correlator.raw/2@1234",
                  "a\"><img src=x onerror=alert(1)>:3"])
    page = verdict_page(v, None)
    assert "<details" not in page and "<img" not in page
    assert 'title="/var/log/hadoop/hadoop-hdfs-datanode-dn-2.log:1200"' in page
    assert "<bdi>hadoop-hdfs-datanode-dn-2<wbr>.log</bdi></span><span class=\"line\">:1200</span>" in page
    note = re.search(r'<p class="meta" id="raw-where">(.*?)</p>', page)
    assert note is not None and "a file and line number" in note[1] and "topic/partition@offset" in note[1]
