"""Trimming a captured log keeps whole records and never edits a line (the lab's test data stays real)."""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "deploy" / "lab"))

import trim  # noqa: E402


def _log(n: int, start: datetime) -> bytes:
    out = []
    for i in range(n):
        t = datetime.fromtimestamp(start.timestamp() + i, UTC).strftime("%Y-%m-%d %H:%M:%S,000")
        out.append(f"{t} INFO org.example.Thing: record {i} {'x' * 200}\n")
        if i % 10 == 0:
            out.append(f"java.io.IOException: failure {i}\n\tat org.example.Thing.run(Thing.java:{i})\n")
    return "".join(out).encode()


def test_a_small_log_is_kept_whole() -> None:
    data = _log(10, datetime(2026, 1, 1, tzinfo=UTC))
    assert trim.trimmed(data, since=0) == data


def test_a_large_log_keeps_its_head_and_the_window_as_whole_unedited_records() -> None:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    data = _log(2000, start)
    assert len(data) > trim.LIMIT
    since = start.timestamp() + 1500
    out = trim.trimmed(data, since)
    lines, kept = data.splitlines(keepends=True), out.splitlines(keepends=True)
    assert set(kept) <= set(lines) and kept == sorted(kept, key=lines.index)  # a subsequence of the original lines
    assert b"record 0 " in out and b"record 59 " in out and b"record 60 " not in out
    assert b"record 1499 " not in out and b"record 1500 " in out and b"record 1999 " in out
    assert b"failure 1500\n\tat org.example.Thing.run(Thing.java:1500)\n" in out  # the stack stays with its record
    assert b"failure 1490" not in out


def test_a_json_layout_log_is_trimmed_by_its_records_stamps() -> None:
    """One JSON object per line is one record, timed by its ``@timestamp``; its stack trace is inside it."""
    start = datetime(2026, 1, 1, tzinfo=UTC)
    lines = []
    for i in range(2000):
        stamp = datetime.fromtimestamp(start.timestamp() + i, UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")
        stack = f',"error.stack_trace":"java.io.IOException: failure {i}\\n\\tat a.B.c(B.java:{i})"' if i % 10 == 0 else ""
        lines.append(f'{{"@timestamp":"{stamp}","log.level":"INFO","message":"record {i} {"x" * 200}"{stack}}}\n')
    data = "".join(lines).encode()
    assert len(data) > trim.LIMIT
    out = trim.trimmed(data, start.timestamp() + 1500)
    kept = out.splitlines(keepends=True)
    assert set(kept) <= set(data.splitlines(keepends=True))
    assert b"record 59 " in out and b"record 60 " not in out and b"record 1499 " not in out
    assert b'record 1500 ' in out and b"failure 1500\\n\\tat a.B.c(B.java:1500)" in out
