"""A DataNode-heavy corpus: what a busy HDFS cluster really ships, mostly routine block writes and reads.

Each block write is logged by a DataNode as three lines (``Receiving …``, the clienttrace ``op: HDFS_WRITE`` with
``duration(ns)``, ``PacketResponder … terminating``); reads as one clienttrace ``op: HDFS_READ`` line. Wordings are
the Hadoop 3.3 ones (see the golden scenarios). A few writes are slow (clienttrace seconds after ``Receiving``, or a
ten-digit duration) and a few lines are the evidence the parsers exist for, so a run still has work to do.

As in a real log, lines are not strictly in stamp order: log4j stamps an event when its thread creates it and writes
it once that thread holds the appender. The lab's real Flink logs show it (``tests/data/lab/3.3.6-1.20.1/task-error/
flink-root-taskexecutor-0-lab-tm.log``: ``09:41:32,431`` then ``09:41:32,428``); its DataNode logs are too quiet to.
So a quarter of the reads are stamped 1-5 ms early, and about a fifth end up older than the line above them (at a
second's edge, in the second before). One write's own lines stay in order, and so, more kindly than on a busy
DataNode, do the lines of different writes.
"""

from __future__ import annotations

import heapq
import os
import random
from collections.abc import Callable, Iterator

_BP = "BP-1473651231-10.20.30.40-1546300800000"
_DN = "org.apache.hadoop.hdfs.server.datanode.DataNode"
_TRACE = _DN + ".clienttrace: src: /{src}, dest: /{dest}, bytes: {bytes}, op: HDFS_{op}, cliID: " \
    "DFSClient_NONMAPREDUCE_{cli}_88, offset: 0, srvID: 6f0a7c9e-2b7d-4b52-9c43-7d7d2a4f1c{host:02d}, blockid: " \
    + _BP + ":blk_{blk}_{gs}, duration(ns): {ns}"
_RECEIVING = _DN + ": Receiving " + _BP + ":blk_{blk}_{gs} src: /{src} dest: /{dest}"
_RESPONDER = _DN + ": PacketResponder: " + _BP + ":blk_{blk}_{gs}, type=LAST_IN_PIPELINE terminating"
_OTHER = (
    "org.apache.hadoop.hdfs.server.datanode.VolumeScanner: VolumeScanner(/data/3/dfs/dn, DS-1f2e3d4c): finished "
    "scanning block pool " + _BP,
    _DN + ": Successfully sent block report 0x1a2b3c4d,  containing 1 storage report(s), of which we sent 1. The "
    "reports had 18233 total blocks and used 1 RPC(s). This took 3 msec to generate and 40 msecs for RPC.",
    "org.apache.hadoop.hdfs.server.datanode.fsdataset.impl.FsDatasetAsyncDiskService: Deleted " + _BP
    + " blk_1107441001_33718001 URI file:/data/2/dfs/dn/current/" + _BP + "/current/finalized/subdir0/blk_1107441001",
)
_EVIDENCE = (
    "WARN org.apache.hadoop.hdfs.server.datanode.fsdataset.impl.FsDatasetImpl: Lock held time above threshold: lock "
    "identifier: org.apache.hadoop.hdfs.server.datanode.fsdataset.impl.FsDatasetImpl lockHeldTimeMs=812 ms. "
    "Suppressed 0 lock warnings. The stack trace is: java.lang.Thread.getStackTrace(Thread.java:1559)",
    "WARN " + _DN + ": Slow BlockReceiver write data to disk cost:873ms (threshold=300ms), volume=file:/data/5/dfs/dn,"
    " blockId=1107441290",
    "WARN org.apache.hadoop.util.JvmPauseMonitor: Detected pause in JVM or host machine (eg GC): pause of "
    "approximately 1520ms",
)
SLOW_PER_MILLE = 2
"""Writes whose clienttrace comes seconds after ``Receiving`` (a stuck write), per thousand writes."""


def _stamp(ms: int) -> str:
    s, milli = divmod(ms, 1000)
    return f"2020-01-02 {s // 3600 % 24:02d}:{s // 60 % 60:02d}:{s % 60:02d},{milli:03d}"


def datanode_lines(host: int, count: int, *, seed: int = 11) -> Iterator[str]:
    """``count`` lines of DataNode ``host`` (1-based), in the order they are written (stamps nearly in order, see the
    module's docstring): ~78 % write lines, ~20 % reads, the rest other."""
    rng = random.Random(seed * 1000 + host)
    dest = f"10.20.30.{40 + host}:9866"
    ms = 8 * 3600 * 1000
    emitted = 0
    pending: list[tuple[int, int, str]] = []
    block = 1_107_000_000 + host * 10_000_000
    while emitted < count:
        ms += rng.randrange(1, 4)
        while pending and pending[0][0] <= ms and emitted < count:
            due, _, text = heapq.heappop(pending)
            yield f"{_stamp(due)} INFO {text}"
            emitted += 1
        if emitted >= count:
            return
        roll = rng.randrange(47)
        src = f"10.20.31.{rng.randrange(1, 60)}:{rng.randrange(40000, 60000)}"
        if roll < 25:
            block += 1
            f = {"blk": block, "gs": block - 1_073_000_000, "src": src, "dest": dest, "host": host,
                 "cli": rng.randrange(10**9), "bytes": rng.randrange(1000, 10**8), "op": "WRITE"}
            line = f"{_stamp(ms)} INFO " + _RECEIVING.format(**f)
            slow = rng.randrange(1000) < SLOW_PER_MILLE
            end = ms + (rng.randrange(1500, 40_000) if slow else rng.randrange(2, 80))
            f["ns"] = rng.randrange(10**6, 9 * 10**7)
            heapq.heappush(pending, (end, block, _TRACE.format(**f)))
            heapq.heappush(pending, (end + 1, block, _RESPONDER.format(**f)))
        elif roll < 45:
            f = {"blk": block - rng.randrange(1, 5000), "gs": 1, "src": dest, "dest": src, "host": host,
                 "cli": rng.randrange(10**9), "bytes": rng.randrange(1000, 10**8), "op": "READ",
                 "ns": rng.randrange(10**5, 10**8)}
            stamped = ms - rng.randrange(1, 6) if rng.randrange(4) == 0 else ms
            line = f"{_stamp(stamped)} INFO " + _TRACE.format(**f)
        elif roll < 46:
            line = f"{_stamp(ms)} INFO " + _OTHER[rng.randrange(len(_OTHER))]
        elif rng.randrange(20) == 0:
            line = f"{_stamp(ms)} " + _EVIDENCE[rng.randrange(len(_EVIDENCE))]
        else:
            continue
        yield line
        emitted += 1


def write_datanode_logs(directory: str, hosts: int, lines_per_host: int,
                        lines_of: Callable[[int, int], Iterator[str]] | None = None) -> list[str]:
    """One ``hadoop-hdfs-datanode-dnNN.example.com.log`` per host (the naming our discovery reads the host from),
    written by ``lines_of`` (host, count) — a good day's :func:`datanode_lines` unless given."""
    lines_of = lines_of or datanode_lines
    os.makedirs(directory, exist_ok=True)
    paths = []
    for host in range(1, hosts + 1):
        path = os.path.join(directory, f"hadoop-hdfs-datanode-dn{host:02d}.example.com.log")
        with open(path, "w", encoding="utf-8") as out:
            for line in lines_of(host, lines_per_host):
                out.write(line + "\n")
        paths.append(path)
    return paths


def write_datanode_corpus(path: str, size_mb: int, *, host: int = 1) -> tuple[int, int]:
    """One DataNode's log of about ``size_mb`` MiB, as ``datanode_lines`` writes it. Returns (bytes, lines)."""
    return write_lines(path, size_mb, datanode_lines(host, 1 << 62))


def write_lines(path: str, size_mb: int, lines: Iterator[str]) -> tuple[int, int]:
    """The first ``size_mb`` MiB (in whole chunks of 10,000 lines) of ``lines`` into ``path``. Returns (bytes, lines)."""
    target = size_mb * 1024 * 1024
    written = count = 0
    with open(path, "wb") as out:
        while written < target:
            chunk = ("\n".join(next(lines) for _ in range(10_000)) + "\n").encode()
            out.write(chunk)
            written += len(chunk)
            count += 10_000
    return written, count


def routine_share(lines: list[str]) -> float:
    """The share of routine block-write lines (the three write lines of writes that finished fast)."""
    routine = sum(1 for line in lines if "Receiving BP-" in line or "op: HDFS_WRITE" in line or " terminating" in line)
    return routine / max(1, len(lines))
