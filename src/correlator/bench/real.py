"""A corpus of real daemon logs: the lab's DataNode and TaskManager files laid end to end in time.

The generated corpora are our reading of a DataNode; the lab's logs (``tests/data/lab``: real Hadoop 3.2.1, 3.3.6 and
3.4.1 DataNodes and real Flink TaskManagers under real faults) are the thing itself: writes that interleave, small
writes paced by their writer, stack traces. Each file becomes a segment of one long log: its stamps shifted so it
starts a second after the segment before ends, its block ids shifted so no two segments share one (a copy must not
look like a pipeline recovery of an earlier block). Lines are otherwise as the daemon wrote them. The JSON-layout
runs (``*-json``) are left out: their stamps sit inside the JSON, and their text twins are in.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

LAB_DIR = Path(__file__).resolve().parents[3] / "tests" / "data" / "lab"
"""Where a clone of the repository keeps the lab's logs (an installed package has none: ``bench parse --real-dir``
names them; ``bench stream --day real`` runs in a clone)."""
_STAMP = re.compile(rb"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3})")
_BLOCK = re.compile(rb"(blk_|blockId=)(\d+)")
BLOCK_SHIFT = 10_000_000
"""Per segment: lab block ids start at 1073741825 and a run writes a few thousand."""


def real_files(root: Path = LAB_DIR) -> list[Path]:
    """The DataNode and TaskManager logs of every text-layout lab run, in a stable order."""
    found = [p for p in root.glob("*/*/*.log") if not p.parent.name.endswith("-json")
             and ("-datanode-" in p.name or "-taskexecutor-" in p.name)]
    return sorted(found)


def _stamp(line: bytes) -> datetime | None:
    m = _STAMP.match(line)
    if m is None:
        return None
    return datetime.strptime(m[1].decode(), "%Y-%m-%d %H:%M:%S") + timedelta(milliseconds=int(m[2]))


def _segment(path: Path, index: int, start: datetime) -> tuple[list[bytes], datetime]:
    """The file's lines shifted to begin at ``start``; and when its last stamped line then falls."""
    lines = path.read_bytes().splitlines(keepends=True)
    first = next((ts for ts in map(_stamp, lines) if ts is not None), None)
    if first is None:
        return [], start
    shift, last = start - first, start
    offset = index * BLOCK_SHIFT

    def block(m: re.Match[bytes]) -> bytes:
        return m[1] + str(int(m[2]) + offset).encode()

    out = []
    for line in lines:
        ts = _stamp(line)
        if ts is not None:
            last = ts + shift
            stamp = last.strftime("%Y-%m-%d %H:%M:%S") + f",{last.microsecond // 1000:03d}"
            line = stamp.encode() + line[23:]
        out.append(_BLOCK.sub(block, line) if offset else line)
    return out, last


def real_lines(root: Path = LAB_DIR, *, role: str = "", first: int = 0) -> Iterator[bytes]:
    """The lab's files as segments of one log, endlessly (each round on from the last), each line with its newline;
    only the files of one daemon (``role``: ``datanode``, ``taskexecutor``) if given, from the ``first``-th file on."""
    files = [p for p in real_files(root) if not role or f"-{role}-" in p.name]
    if not files:
        raise FileNotFoundError(f"no lab logs under {root}")
    files = files[first % len(files):] + files[:first % len(files)]
    cursor, index = datetime(2026, 1, 5, 8, 0, 0), 0
    while True:
        for path in files:
            lines, last = _segment(path, index, cursor)
            index += 1
            cursor = last + timedelta(seconds=1)
            if lines and not lines[-1].endswith(b"\n"):
                lines[-1] += b"\n"
            yield from lines


def write_real_corpus(path: str, size_mb: int, root: Path = LAB_DIR) -> tuple[int, int]:
    """About ``size_mb`` MiB of :func:`real_lines` into ``path`` (whole lines). Returns (bytes, lines)."""
    target = size_mb * 1024 * 1024
    written = count = 0
    with open(path, "wb") as out:
        chunk: list[bytes] = []
        for line in real_lines(root):
            chunk.append(line)
            written += len(line)
            count += 1
            if len(chunk) >= 10_000 or written >= target:
                out.write(b"".join(chunk))
                chunk = []
            if written >= target:
                break
    return written, count


def available(root: Path = LAB_DIR) -> bool:
    return root.is_dir() and any(True for _ in real_files(root))




def real_datanode_lines(host: int, count: int) -> Iterator[str]:
    """``count`` lines of a DataNode made of the lab's real DataNode logs end to end, each host starting from another
    file (for ``bench stream --day real``: several busy DataNodes)."""
    lines = real_lines(LAB_DIR, role="datanode", first=host * 7)
    for _ in range(count):
        yield next(lines).rstrip(b"\n").decode("utf-8", errors="replace")
