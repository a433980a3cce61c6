"""Copy a run's daemon logs into test data, trimmed to the span that matters, lines untouched.

A log larger than LIMIT keeps its start-up records (version banner, configuration) and every record from a while
before the first fault attempt to its end; whole records are kept or dropped (a stack trace stays with its line),
and no line is ever edited. A JSON-lines log (log4j2's JSON template layout: one object per line, a stack trace inside
its object) is trimmed by the same rule, each line one record timed by its `@timestamp`.
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
from datetime import UTC, datetime
from pathlib import Path

LIMIT = 120_000
GZIP_OVER = 1_000_000
"""A trimmed log still larger than this is kept gzipped (`<name>.log.gz`, as logrotate keeps a rotation): the HDFS
client of a run whose disks crawl warns about every slow ack, thousands of lines the analysis reads as they are."""
HEAD_RECORDS = 60
LEAD_SECONDS = 30.0
STAMP = re.compile(rb"^\[?(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3})\]? ")
"""A record's first line: log4j's stamp, bracketed in Kafka's broker log."""
DAEMON_LOG = re.compile(r"^(hadoop-.+-(namenode|datanode)-.+|flink-.+-(standalonesession|taskexecutor|client)-.+)\.log$")


def json_record(line: bytes | str) -> dict[str, object] | None:
    """The JSON object a JSON-layout line holds, or None for any other line."""
    if line.lstrip()[:1] not in (b"{", "{"):
        return None
    try:
        obj = json.loads(line)
    except ValueError:
        return None
    return obj if isinstance(obj, dict) else None


def json_time(value: object) -> float | None:
    """Epoch seconds of a JSON record's `@timestamp` (ISO 8601, e.g. `2026-12-01T09:36:55.808Z`), else None."""
    if not isinstance(value, str):
        return None
    try:
        t = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return (t if t.tzinfo else t.replace(tzinfo=UTC)).timestamp()


def _json_records(lines: list[bytes]) -> list[tuple[float | None, bytes]]:
    out: list[tuple[float | None, bytes]] = []
    for line in lines:
        obj = json_record(line)
        if obj is not None or not out:
            out.append((json_time(obj.get("@timestamp")) if obj is not None else None, line))
        else:  # not an object of its own (never written by the layout): it stays with the record before it
            out[-1] = (out[-1][0], out[-1][1] + line)
    return out


def _records(data: bytes) -> list[tuple[float | None, bytes]]:
    lines = data.splitlines(keepends=True)
    if lines and json_record(lines[0]) is not None:
        return _json_records(lines)
    out: list[tuple[float | None, bytes]] = []
    for line in lines:
        m = STAMP.match(line)
        if m or not out:
            t = None
            if m:
                t = datetime.strptime(m.group(1).decode(), "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC).timestamp()
                t += int(m.group(2)) / 1000
            out.append((t, line))
        else:
            out[-1] = (out[-1][0], out[-1][1] + line)
    return out


def trimmed(data: bytes, since: float) -> bytes:
    if len(data) <= LIMIT:
        return data
    records = _records(data)
    keep = [r for i, (t, r) in enumerate(records) if i < HEAD_RECORDS or (t is not None and t >= since)]
    return b"".join(keep)


def copy_trimmed(logs: Path, dest: Path, truth: dict[str, object]) -> None:
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    attempts = truth.get("attempts") or [truth["fault"]]
    first = min(datetime.fromisoformat(str(a["start"]).replace("Z", "+00:00")).timestamp() for a in attempts)
    # a Kafka broker's server.log sits in a folder naming its host (the stock name names none)
    for log in [*sorted(logs.iterdir()), *sorted(logs.glob("*/server.log"))]:
        if DAEMON_LOG.match(log.name) or log.name == "server.log":
            data = trimmed(log.read_bytes(), first - LEAD_SECONDS)
            out = dest / log.relative_to(logs)
            out.parent.mkdir(parents=True, exist_ok=True)
            if len(data) > GZIP_OVER:
                out.with_name(f"{log.name}.gz").write_bytes(gzip.compress(data, mtime=0))
            else:
                out.write_bytes(data)
    (dest / "truth.json").write_text(json.dumps(truth, indent=2) + "\n")
