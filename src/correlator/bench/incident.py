"""An incident-heavy DataNode corpus: the same daemon as :mod:`correlator.bench.datanode` on a bad day.

What changes when a cluster is sick, and what this corpus holds in those shares:

* big blocks and slow disks: two in five block writes take a second or more. Most are big blocks written at a
  healthy 60-120 MB/s (64-128 MiB, 0.5-2.2 s); one in six is a small write paced by its writer (1-4 s for up to
  4 MiB: a little above the share the lab's real DataNodes show); one in a hundred writes is stuck for 5-40 s on a
  few MiB;
* deletions: most blocks are deleted seconds later (checkpoints subsumed), each logged with the replica's
  five-line description, and in storms a client gives up on a write now and then (an ERROR with its stack) —
  continuation lines in the share the real logs have;
* slow-IO storms: for 20 s in every ~100,000 lines, each write logs ``Slow BlockReceiver write data to disk``,
  ``Slow flushOrSync`` or ``Slow PacketResponder send ack`` warnings (one to three per write);
* DirectoryScanner reconcile bursts: every ~250,000 lines, 3,000 ``Added missing block to memory`` /
  ``Removed block … from memory with missing block file on the disk`` warnings a few milliseconds apart;
* dataset lock warnings (``Lock held time above threshold``, ``Waited above threshold``) through the storms, as
  Hadoop's ``InstrumentedLock`` logs them: at most one of each per ``dfs.lock.suppress.warning.interval`` (10 s), the
  others counted in the next one's ``Suppressed N``, each followed by its stack trace lines and a blank line (the
  shape of the lab's real Hadoop 3.3.6 warnings in ``tests/data/lab``);
* a clock step back: once, a third of the way in, the DataNode's clock jumps back 70 s (an NTP step) and runs on.

The wordings are the Hadoop 3.3 ones the golden scenarios and the real samples use. Reads and other lines keep the
routine corpus's shares so both corpora are one daemon's log, only on different days.
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Iterator

from correlator.bench.datanode import _BP, _DN, _OTHER, _RECEIVING, _RESPONDER, _TRACE, _stamp, write_datanode_logs, write_lines
from correlator.simulate.hdfs import WRITER_FRAMES

_IMPL = "org.apache.hadoop.hdfs.server.datanode.fsdataset.impl.FsDatasetImpl"
_SLOW = (
    "WARN " + _DN + ": Slow BlockReceiver write data to disk cost:{ms}ms (threshold=300ms), volume=file:/data/{v}/dfs/dn,"
    " blockId={blk}",
    "WARN " + _DN + ": Slow flushOrSync took {ms}ms (threshold=300ms), isSync:true, flushTotalNanos={ms}000000ns, "
    "volume=file:/data/{v}/dfs/dn, blockId={blk}, seqno={seq}",
    "WARN " + _DN + ": Slow PacketResponder send ack to upstream took {ms}ms (threshold=300ms), PacketResponder: "
    + _BP + ":blk_{blk}_{gs}, type=HAS_DOWNSTREAM_IN_PIPELINE, downstreams=1:[DatanodeInfoWithStorage[10.20.30.43:9866,"
    "DS-0c9d8e7f-6a5b-4c3d-2e1f-0a9b8c7d6e5f,DISK]], replyAck=seqno: {seq} reply: SUCCESS reply: SUCCESS "
    "downstreamAckTimeNanos: {ms}000000 flag: 0",
)
_WRITER_FRAMES = ("org.apache.hadoop.util.AutoCloseableLock.{step}(AutoCloseableLock.java:{line})", *WRITER_FRAMES,
                  "java.base/java.lang.Thread.run(Thread.java:840)", "")
_LOCKS = (
    "WARN " + _IMPL + ": Lock held time above threshold(300 ms): lock identifier: FsDatasetRWLock lockHeldTimeMs={ms} "
    "ms. Suppressed {suppressed} lock warnings. Longest suppressed LockHeldTimeMs={longest}. The stack trace is: "
    "java.base/java.lang.Thread.getStackTrace(Thread.java:1619)\n"
    + "\n".join(["org.apache.hadoop.util.StringUtils.getStackTrace(StringUtils.java:1100)",
                 "org.apache.hadoop.util.InstrumentedLock.logWarning(InstrumentedLock.java:160)",
                 "org.apache.hadoop.util.InstrumentedLock.check(InstrumentedLock.java:221)",
                 "org.apache.hadoop.util.InstrumentedLock.unlock(InstrumentedLock.java:143)",
                 *_WRITER_FRAMES]).replace("{step}", "close").replace("{line}", "96"),
    "WARN " + _IMPL + ": Waited above threshold(300 ms) to acquire lock: lock identifier: FsDatasetRWLock "
    "waitTimeMs={ms} ms. Suppressed {suppressed} lock wait warnings. Longest suppressed WaitTimeMs={longest}. The "
    "stack trace is: java.base/java.lang.Thread.getStackTrace(Thread.java:1619)\n"
    + "\n".join(["org.apache.hadoop.util.StringUtils.getStackTrace(StringUtils.java:1100)",
                 "org.apache.hadoop.util.InstrumentedLock.logWaitWarning(InstrumentedLock.java:171)",
                 "org.apache.hadoop.util.InstrumentedLock.check(InstrumentedLock.java:223)",
                 "org.apache.hadoop.util.InstrumentedLock.lock(InstrumentedLock.java:105)",
                 *_WRITER_FRAMES]).replace("{step}", "acquire").replace("{line}", "67"),
)
LOCK_LOG_GAP_MS = 10_000
"""``dfs.lock.suppress.warning.interval``'s default: a lock logs one held and one wait warning per this gap."""
_RECONCILE = (
    "WARN " + _IMPL + ": Added missing block to memory FinalizedReplica, blk_{blk}_{gs}, FINALIZED",
    "WARN " + _IMPL + ": Removed block {blk} from memory with missing block file on the disk",
)
STORM_EVERY = 100_000
RECONCILE_EVERY = 250_000
RECONCILE_LINES = 3_000
CLOCK_STEP_BACK_MS = 70_000
_DELETION = ("org.apache.hadoop.hdfs.server.datanode.fsdataset.impl.FsDatasetAsyncDiskService: Scheduling blk_{blk}_{gs} "
             "replica FinalizedReplica, blk_{blk}_{gs}, FINALIZED\n  getNumBytes()     = {bytes}\n  getBytesOnDisk()  = "
             "{bytes}\n  getVisibleLength()= {bytes}\n  getVolume()       = /data/{v}/dfs/dn\n  getBlockURI()     = "
             "file:/data/{v}/dfs/dn/current/" + _BP + "/current/finalized/subdir0/subdir3/blk_{blk} for deletion")
DELETED_PER_MILLE = 950
"""Writes whose block is deleted some seconds later (a checkpoint subsumed): the replica's five-line description is
most of the continuation lines of the lab's real DataNode logs."""
_XCEIVER_ERROR = (
    "ERROR " + _DN + ": dn01:9866:DataXceiver error processing WRITE_BLOCK operation  src: /{src} dst: /{dest}\n"
    "java.io.IOException: Premature EOF from inputStream\n"
    + "\n".join("\tat " + frame for frame in (
        "org.apache.hadoop.io.IOUtils.readFully(IOUtils.java:217)",
        "org.apache.hadoop.hdfs.protocol.datatransfer.PacketReceiver.doReadFully(PacketReceiver.java:211)",
        "org.apache.hadoop.hdfs.protocol.datatransfer.PacketReceiver.doRead(PacketReceiver.java:134)",
        "org.apache.hadoop.hdfs.protocol.datatransfer.PacketReceiver.receiveNextPacket(PacketReceiver.java:109)",
        "org.apache.hadoop.hdfs.server.datanode.BlockReceiver.receivePacket(BlockReceiver.java:547)",
        "org.apache.hadoop.hdfs.server.datanode.BlockReceiver.receiveBlock(BlockReceiver.java:990)",
        "org.apache.hadoop.hdfs.server.datanode.DataXceiver.writeBlock(DataXceiver.java:911)",
        "org.apache.hadoop.hdfs.protocol.datatransfer.Receiver.opWriteBlock(Receiver.java:176)",
        "org.apache.hadoop.hdfs.protocol.datatransfer.Receiver.processOp(Receiver.java:110)",
        "org.apache.hadoop.hdfs.server.datanode.DataXceiver.run(DataXceiver.java:294)",
        "java.base/java.lang.Thread.run(Thread.java:840)"))
)
"""A write its client gave up on, with its stack (the shape of the lab's real 3.3.6 lines)."""


def incident_lines(host: int, count: int, *, seed: int = 13, step_back_at: int | None = None) -> Iterator[str]:
    """``count`` lines of DataNode ``host`` on a bad day (see the module docstring), in the order written; the clock
    steps back once ``step_back_at`` lines are out (a third of ``count`` unless given)."""
    step_at = count // 3 if step_back_at is None else step_back_at
    day = _BadDay(random.Random(seed * 1000 + host), host)
    ms, emitted, block = 8 * 3600 * 1000, 0, 1_107_000_000 + host * 10_000_000
    next_storm, next_reconcile = STORM_EVERY // 4, RECONCILE_EVERY // 2
    stepped = False
    rng = day.rng
    while emitted < count:
        ms += rng.randrange(1, 4)
        if not stepped and emitted >= step_at:
            stepped = True
            ms -= CLOCK_STEP_BACK_MS
            day.step_back(CLOCK_STEP_BACK_MS)
        for lines in day.due(ms):
            yield from lines
            emitted += len(lines)
            if emitted >= count:
                return
        if emitted >= next_storm:
            day.storm_until, next_storm = ms + 20_000, next_storm + STORM_EVERY
        if emitted >= next_reconcile:
            next_reconcile += RECONCILE_EVERY
            for lines in day.reconcile_burst(ms, block):
                yield from lines
                emitted += len(lines)
            ms = day.reconciled_ms
            continue
        roll = rng.randrange(47)
        src = f"10.20.31.{rng.randrange(1, 60)}:{rng.randrange(40000, 60000)}"
        if roll < 25:
            block += 1
            line = day.write(ms, block, src)
        elif roll < 45:
            f = {"blk": block - rng.randrange(1, 5000), "gs": 1, "src": day.dest, "dest": src, "host": host,
                 "cli": rng.randrange(10**9), "bytes": rng.randrange(1000, 10**8), "op": "READ",
                 "ns": rng.randrange(10**5, 10**8)}
            line = _line(ms, "INFO " + _TRACE.format(**f))
        elif roll < 46:
            line = _line(ms, "INFO " + _OTHER[rng.randrange(len(_OTHER))])
        else:
            continue
        yield line
        emitted += 1


def _line(at: int, text: str) -> str:
    return f"{_stamp(at)} {text}"


class _BadDay:
    """One DataNode's bad day as the generator draws it: the records its writes' threads log later (ends, warnings,
    deletions, in time order), the storms and the lock warnings' suppression; every draw from one ``rng``, in the
    order the corpus has always been drawn (a changed order is a different corpus)."""

    def __init__(self, rng: random.Random, host: int) -> None:
        self.rng, self.host, self.dest = rng, host, f"10.20.30.{40 + host}:9866"
        self.pending: list[tuple[int, int, str]] = []
        self.storm_until = -1
        self.locks = [(-LOCK_LOG_GAP_MS, 0, 0)] * 2
        """Per warning kind (held, wait): when one was last logged, how many were suppressed since, the longest."""
        self.reconciled_ms = 0

    def step_back(self, by_ms: int) -> None:
        self.pending = [(due - by_ms, b, text) for due, b, text in self.pending]
        heapq.heapify(self.pending)

    def due(self, ms: int) -> Iterator[list[str]]:
        """The lines of each pending record due by ``ms``, oldest first (popped only as they are asked for)."""
        pending = self.pending
        while pending and pending[0][0] <= ms:
            due, _, text = heapq.heappop(pending)
            head, *stack = text.split("\n")
            yield [_line(due, head if head.startswith(("WARN ", "ERROR ")) else "INFO " + head), *stack]

    def reconcile_burst(self, ms: int, block: int) -> Iterator[list[str]]:
        """A DirectoryScanner's reconcile burst from ``ms`` on, the writes' threads logging on meanwhile; where its
        clock ends is ``reconciled_ms``."""
        rng = self.rng
        for k in range(RECONCILE_LINES):
            ms += rng.randrange(1, 6)
            yield from self.due(ms)
            b = block - rng.randrange(1, 900_000)
            yield [_line(ms, _RECONCILE[k % 2].format(blk=b, gs=b - 1_073_000_000))]
        self.reconciled_ms = ms

    def write(self, ms: int, block: int, src: str) -> str:
        """A write of ``block`` starting at ``ms``: its ``Receiving`` line now, its end and what goes with it later."""
        rng, gs = self.rng, block - 1_073_000_000
        size, took = self._size_and_time()
        f = {"blk": block, "gs": gs, "src": src, "dest": self.dest, "host": self.host, "cli": rng.randrange(10**9),
             "bytes": size, "op": "WRITE", "ns": took * 1_000_000 + rng.randrange(10**6)}
        end = ms + took
        heapq.heappush(self.pending, (end, block, _TRACE.format(**f)))
        heapq.heappush(self.pending, (end + 1, block, _RESPONDER.format(**f)))
        if rng.randrange(1000) < DELETED_PER_MILLE:
            heapq.heappush(self.pending, (end + rng.randrange(2_000, 30_000), block,
                                          _DELETION.format(blk=block, gs=gs, bytes=size, v=rng.randrange(1, 9))))
        if ms <= self.storm_until:
            self._storm(ms, block, gs, src, took)
        return _line(ms, "INFO " + _RECEIVING.format(**f))

    def _size_and_time(self) -> tuple[int, int]:
        rng = self.rng
        kind = rng.randrange(100)
        if kind < 1:
            return rng.randrange(1 << 20, 8 << 20), rng.randrange(5_000, 40_000)
        if kind < 18:  # paced by its writer: a checkpoint stream or a sink sends as it produces
            return rng.randrange(1000, 4 << 20), rng.randrange(1_000, 4_000)
        if kind < 42:
            size = rng.randrange(64 << 20, 128 << 20)
            return size, max(1_000, size * 1000 // (rng.randrange(60, 121) << 20))
        return rng.randrange(1000, 16 << 20), rng.randrange(2, 80)

    def _storm(self, ms: int, block: int, gs: int, src: str, took: int) -> None:
        """During a storm: now and then an xceiver's error, slow-IO warnings, a lock warning unless suppressed."""
        rng = self.rng
        if rng.randrange(30) == 0:
            heapq.heappush(self.pending, (ms + took, block, _XCEIVER_ERROR.format(src=src, dest=self.dest)))
        for n in range(rng.randrange(1, 4)):
            warn = _SLOW[rng.randrange(len(_SLOW))].format(ms=rng.randrange(301, 4000), v=1 + n, blk=block, gs=gs,
                                                           seq=rng.randrange(1, 900))
            heapq.heappush(self.pending, (ms + rng.randrange(1, max(2, took)), block, warn))
        if rng.randrange(8) == 0:
            which, held = rng.randrange(2), rng.randrange(301, 3000)
            last, suppressed, longest = self.locks[which]
            if ms - last >= LOCK_LOG_GAP_MS:
                warning = _LOCKS[which].format(ms=held, suppressed=suppressed, longest=longest)
                heapq.heappush(self.pending, (ms + 1, block, warning))
                self.locks[which] = (ms, 0, 0)
            else:
                self.locks[which] = (last, suppressed + 1, max(longest, held))


def write_incident_corpus(path: str, size_mb: int, *, host: int = 1, step_back: bool = True) -> tuple[int, int]:
    """One DataNode's bad-day log of about ``size_mb`` MiB, its clock stepping back a third in unless ``step_back``
    is false (the same day otherwise: what the step costs is the difference). Returns (bytes, lines)."""
    sample = list(incident_lines(host, 10_000, step_back_at=1 << 62))
    line_bytes = sum(map(len, sample)) / len(sample) + 1  # the corpus's own mean line, newline included
    third = int(size_mb * 1024 * 1024 / 3 / line_bytes) if step_back else 1 << 62
    return write_lines(path, size_mb, incident_lines(host, 1 << 62, step_back_at=third))



def write_incident_logs(directory: str, hosts: int, lines_per_host: int) -> list[str]:
    """One bad-day ``hadoop-hdfs-datanode-dnNN.example.com.log`` per host, its clock stepping back a third in."""
    return write_datanode_logs(directory, hosts, lines_per_host, incident_lines)
