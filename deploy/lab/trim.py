"""Copy a run's daemon logs into test data, trimmed to the span that matters, lines untouched.

A log larger than LIMIT keeps its start-up records (version banner, configuration) and every record from a while
before the first fault attempt to its end; whole records are kept or dropped (a stack trace stays with its line),
and no line is ever edited.
"""

from __future__ import annotations

import json
import re
import shutil
from datetime import UTC, datetime
from pathlib import Path

LIMIT = 120_000
HEAD_RECORDS = 60
LEAD_SECONDS = 30.0
STAMP = re.compile(rb"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3}) ")
DAEMON_LOG = re.compile(r"^(hadoop-.+-(namenode|datanode)-.+|flink-.+-(standalonesession|taskexecutor|client)-.+)\.log$")


def _records(data: bytes) -> list[tuple[float | None, bytes]]:
    out: list[tuple[float | None, bytes]] = []
    for line in data.splitlines(keepends=True):
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
    for log in sorted(logs.iterdir()):
        if DAEMON_LOG.match(log.name):
            (dest / log.name).write_bytes(trimmed(log.read_bytes(), first - LEAD_SECONDS))
    (dest / "truth.json").write_text(json.dumps(truth, indent=2) + "\n")
