"""DataNode and NameNode log lines, in the exact wording of each Hadoop version (2.7 → 3.4)."""

from __future__ import annotations

from datetime import UTC, datetime

from correlator.simulate.render import hadoop
from correlator.simulate.world import BLOCK_POOL, XFER_PORT, LogSet, Node

DN = "org.apache.hadoop.hdfs.server.datanode.DataNode"
TRACE = "org.apache.hadoop.hdfs.server.datanode.DataNode.clienttrace"
SCANNER = "org.apache.hadoop.hdfs.server.datanode.DirectoryScanner"
DATASET = "org.apache.hadoop.hdfs.server.datanode.fsdataset.impl.FsDatasetImpl"
ASYNC_DISK = "org.apache.hadoop.hdfs.server.datanode.fsdataset.impl.FsDatasetAsyncDiskService"
PAUSE = "org.apache.hadoop.util.JvmPauseMonitor"
NN = "org.apache.hadoop.hdfs.server.namenode.FSNamesystem"
NN_MAIN = "org.apache.hadoop.hdfs.server.namenode.NameNode"
STATE = "org.apache.hadoop.hdfs.StateChange"

Version = tuple[int, int, int]


def version_of(text: str) -> Version:
    parts = [int(p) for p in text.split(".")[:3]]
    return (parts[0], parts[1], parts[2] if len(parts) > 2 else 0)


def block_name(block_id: int, gs: int) -> str:
    return f"blk_{block_id}_{gs}"


def full_block(block_id: int, gs: int) -> str:
    return f"{BLOCK_POOL}:{block_name(block_id, gs)}"


class HadoopLog:
    """Lines of one Hadoop daemon; timestamps are rendered on the host's (possibly skewed) clock."""

    def __init__(self, node: Node, logs: LogSet, version: str) -> None:
        self.node = node
        self.logs = logs
        self.version_text = version
        self.v = version_of(version)

    def line(self, ts_ms: int, level: str, logger: str, message: str, *more: str) -> None:
        text = hadoop(ts_ms + self.node.skew_ms, level, logger, message)
        self.logs.add(self.node.file, ts_ms, "\n".join((text, *more)))

    def banner(self, ts_ms: int, component: str) -> None:
        logger = DN if component == "DataNode" else NN_MAIN
        self.line(ts_ms, "INFO", logger, "STARTUP_MSG: ",
                  "/************************************************************",
                  f"STARTUP_MSG: Starting {component}",
                  f"STARTUP_MSG:   host = {self.node.host}/{self.node.ip}",
                  "STARTUP_MSG:   args = []",
                  f"STARTUP_MSG:   version = {self.version_text}",
                  "STARTUP_MSG:   classpath = /opt/hadoop/etc/hadoop:/opt/hadoop/share/hadoop/common/lib/*",
                  "STARTUP_MSG:   build = https://github.com/apache/hadoop -r 16b70619a24cdcf5d3b0fcf4b58ca77238ccbe6d;"
                  " compiled by 'centos' on 2018-03-30T00:00Z",
                  "STARTUP_MSG:   java = 1.8.0_181",
                  "************************************************************/")

    def jvm_pause(self, ts_ms: int, pause_ms: int, gc_ms: int | None) -> None:
        level = "WARN" if pause_ms > 10_000 else "INFO"
        detail = ("No GCs detected",) if gc_ms is None else (
            "GC pool 'ParNew' had collection(s): count=1 time=41ms",
            f"GC pool 'ConcurrentMarkSweep' had collection(s): count=1 time={gc_ms}ms",
        )
        self.line(ts_ms, level, PAUSE,
                  f"Detected pause in JVM or host machine (eg GC): pause of approximately {pause_ms}ms", *detail)


class DataNodeLog(HadoopLog):
    def scanner_start(self, ts_ms: int, first_scan_ms: int, interval_ms: int = 21_600_000) -> None:
        v = self.v
        if v >= (3, 3, 0):
            self.line(ts_ms - 2, "WARN", SCANNER, "dfs.datanode.directoryscan.throttle.limit.ms.per.sec set to value "
                      "above 1000 ms/sec. Assuming default value of -1")
            msg = (f"Periodic Directory Tree Verification scan starting in {first_scan_ms - ts_ms}ms with interval of "
                   f"{interval_ms}ms and throttle limit of -1ms/s")
        elif v >= (2, 8, 0):
            local = _short_us(first_scan_ms + self.node.skew_ms)
            msg = f"Periodic Directory Tree Verification scan starting at {local} with interval of {interval_ms}ms"
        else:
            msg = (f"Periodic Directory Tree Verification scan starting at {first_scan_ms}ms with interval of "
                   f"{interval_ms}ms")
        self.line(ts_ms, "INFO", SCANNER, msg)

    def receiving(self, ts_ms: int, block: str, src: str, src_port: int) -> None:
        self.line(ts_ms, "INFO", DN, f"Receiving {block} src: /{src}:{src_port} dest: /{self.node.ip}:{XFER_PORT}")

    def clienttrace(self, ts_ms: int, block: str, src: str, src_port: int, size: int, client: str,
                    duration_ns: int) -> None:
        volume = "volume: /data/3/dfs/dn, " if self.v >= (3, 4, 0) else ""
        label = "duration(ns)" if self.v >= (2, 9, 0) else "duration"
        self.line(ts_ms, "INFO", TRACE, f"src: /{src}:{src_port}, dest: /{self.node.ip}:{XFER_PORT}, {volume}"
                  f"bytes: {size}, op: HDFS_WRITE, cliID: {client}, offset: 0, srvID: {self.node.uuid}, "
                  f"blockid: {block}, {label}: {duration_ns}")

    def responder(self, ts_ms: int, block: str, downstream: list[Node]) -> None:
        """The DataNode's targets are plain ``DatanodeInfo`` (``ip:port``), unlike the client's pipeline (real 3.3.6)."""
        if downstream:
            infos = ", ".join(f"{d.ip}:{XFER_PORT}" for d in downstream)
            kind = f"type=HAS_DOWNSTREAM_IN_PIPELINE, downstreams={len(downstream)}:[{infos}]"
        else:
            kind = "type=LAST_IN_PIPELINE"
        self.line(ts_ms, "INFO", DN, f"PacketResponder: {block}, {kind} terminating")

    def deleted(self, ts_ms: int, block_id: int, gs: int) -> None:
        self.line(ts_ms, "INFO", ASYNC_DISK, f"Deleted {BLOCK_POOL} {block_name(block_id, gs)} URI file:/data/3/dfs/dn/"
                  f"current/{BLOCK_POOL}/current/finalized/subdir{block_id % 32}/subdir{block_id % 17}/"
                  f"blk_{block_id}")

    def _stack(self, acquire: bool, frames: tuple[str, ...]) -> tuple[str, ...]:
        head = ("org.apache.hadoop.util.StringUtils.getStackTrace(StringUtils.java:1032)",
                "org.apache.hadoop.util.InstrumentedLock.logWaitWarning(InstrumentedLock.java:171)" if acquire else
                "org.apache.hadoop.util.InstrumentedLock.logWarning(InstrumentedLock.java:148)",
                "org.apache.hadoop.util.InstrumentedLock.check(InstrumentedLock.java:186)",
                "org.apache.hadoop.util.InstrumentedLock.lock(InstrumentedLock.java:105)" if acquire else
                "org.apache.hadoop.util.InstrumentedLock.unlock(InstrumentedLock.java:133)",
                "org.apache.hadoop.util.AutoCloseableLock.acquire(AutoCloseableLock.java:67)" if acquire else
                "org.apache.hadoop.util.AutoCloseableLock.release(AutoCloseableLock.java:84)")
        return (*head, *frames, "java.lang.Thread.run(Thread.java:748)", "")

    def lock_held(self, ts_ms: int, held_ms: int, frames: tuple[str, ...], suppressed: int = 0) -> None:
        """H1 (2.8 – 3.2), H2 (3.3.0 – 3.3.1), H3 (3.3.2 – 3.3.6); nothing on 2.7 and 3.4."""
        v = self.v
        if v < (2, 8, 0) or v >= (3, 4, 0):
            return
        rw = v >= (3, 3, 0) or v in ((2, 10, 2),) or (3, 2, 3) <= v < (3, 3, 0)
        lock = "FsDatasetRWLock" if rw else DATASET
        first = "java.lang.Thread.getStackTrace(Thread.java:1559)"
        if v >= (3, 3, 2):
            msg = (f"Lock held time above threshold(300 ms): lock identifier: {lock} lockHeldTimeMs={held_ms} ms. "
                   f"Suppressed {suppressed} lock warnings. Longest suppressed LockHeldTimeMs=0. The stack trace is: "
                   f"{first}")
        elif v >= (3, 3, 0):
            msg = (f"Lock held time above threshold: lock identifier: {lock} lockHeldTimeMs={held_ms} ms. Suppressed "
                   f"{suppressed} lock warnings. Longest suppressed LockHeldTimeMs=0. The stack trace is: {first}")
        else:
            msg = (f"Lock held time above threshold: lock identifier: {lock} lockHeldTimeMs={held_ms} ms. Suppressed "
                   f"{suppressed} lock warnings. The stack trace is: {first}")
        self.line(ts_ms, "WARN", DATASET, msg, *self._stack(False, frames))

    def lock_wait(self, ts_ms: int, wait_ms: int, suppressed: int = 0) -> None:
        """W2 (3.3.0 – 3.3.1) / W3 (3.3.2 – 3.3.6): a writer that waited for the lock."""
        v = self.v
        if not (3, 3, 0) <= v < (3, 4, 0):
            return
        first = "java.lang.Thread.getStackTrace(Thread.java:1559)"
        threshold = "(300 ms)" if v >= (3, 3, 2) else ""
        msg = (f"Waited above threshold{threshold} to acquire lock: lock identifier: FsDatasetRWLock "
               f"waitTimeMs={wait_ms} ms. Suppressed {suppressed} lock wait warnings. Longest suppressed "
               f"WaitTimeMs=0. The stack trace is: {first}")
        self.line(ts_ms, "WARN", DATASET, msg, *self._stack(True, WRITER_FRAMES))

    def scan_stats(self, ts_ms: int, total: int, missing_memory: int, missing_block: int = 0,
                   mismatched: int = 0) -> None:
        v = self.v
        if v >= (3, 3, 0):
            msg = (f"Scan Results: BlockPool {BLOCK_POOL} Total blocks: {total}, missing metadata files: 0, "
                   f"missing block files: {missing_block}, missing blocks in memory: {missing_memory}, "
                   f"mismatched blocks: {mismatched}")
            if v >= (3, 3, 2):
                msg += ", duplicated blocks: 0"
        else:
            msg = (f"BlockPool {BLOCK_POOL} Total blocks: {total}, missing metadata files:0, missing block files:"
                   f"{missing_block}, missing blocks in memory:{missing_memory}, mismatched blocks:{mismatched}")
        self.line(ts_ms, "INFO", SCANNER, msg)

    def reconcile_added(self, ts_ms: int, block_id: int, gs: int) -> None:
        uri = "getBlockURI()     = file:" if self.v >= (3, 0, 0) else "getBlockFile()    = "
        self.line(ts_ms, "WARN", DATASET,
                  f"Added missing block to memory FinalizedReplica, {block_name(block_id, gs)}, FINALIZED",
                  "  getNumBytes()     = 8761", "  getBytesOnDisk()  = 8761",
                  "  getVisibleLength()= 8761", "  getVolume()       = /data/5/dfs/dn",
                  f"  {uri}/data/5/dfs/dn/current/{BLOCK_POOL}/current/finalized/subdir{block_id % 32}/"
                  f"subdir{block_id % 17}/blk_{block_id}")

    def reconcile_removed(self, ts_ms: int, block_id: int) -> None:
        self.line(ts_ms, "WARN", DATASET, f"Removed block {block_id} from memory with missing block file on the disk")

    def _tail(self, block_id: int, seqno: int = 0) -> str:
        v = self.v
        if v >= (3, 4, 0):
            return f", volume=file:/data/3/dfs/dn, blockId={block_id}, seqno={seqno}"
        if v >= (3, 0, 1):
            return f", volume=file:/data/3/dfs/dn, blockId={block_id}"
        if v >= (3, 0, 0):
            return ", volume=file:/data/3/dfs/dn"
        if v >= (2, 9, 0):
            return ", volume=/data/3/dfs/dn"
        return ""

    def slow_disk(self, ts_ms: int, duration_ms: int, block_id: int) -> None:
        cost = "cost: " if self.v >= (3, 4, 0) else "cost:"
        self.line(ts_ms, "WARN", DN, f"Slow BlockReceiver write data to disk {cost}{duration_ms}ms (threshold=300ms)"
                  + self._tail(block_id, 12))

    def slow_flush(self, ts_ms: int, duration_ms: int, block_id: int) -> None:
        self.line(ts_ms, "WARN", DN, f"Slow flushOrSync took {duration_ms}ms (threshold=300ms), isSync:false, "
                  f"flushTotalNanos={duration_ms * 1_000_000 - 12_345}ns" + self._tail(block_id, 13))

    def slow_mirror(self, ts_ms: int, duration_ms: int, block_id: int, downstream: list[Node]) -> None:
        v = self.v
        tail = ""
        if v >= (2, 9, 0):
            tail = ", downstream DNs=[" + ", ".join(f"{d.ip}:{XFER_PORT}" for d in downstream) + "]"
            if v >= (3, 0, 1):
                tail += f", blockId={block_id}"
            if v >= (3, 4, 0):
                tail += ", seqno=14"
        self.line(ts_ms, "WARN", DN, f"Slow BlockReceiver write packet to mirror took {duration_ms}ms "
                  f"(threshold=300ms){tail}")


WRITER_FRAMES = (
    "org.apache.hadoop.hdfs.server.datanode.fsdataset.impl.FsDatasetImpl.createRbw(FsDatasetImpl.java:1441)",
    "org.apache.hadoop.hdfs.server.datanode.BlockReceiver.<init>(BlockReceiver.java:219)",
    "org.apache.hadoop.hdfs.server.datanode.DataXceiver.getBlockReceiver(DataXceiver.java:1319)",
    "org.apache.hadoop.hdfs.server.datanode.DataXceiver.writeBlock(DataXceiver.java:766)",
    "org.apache.hadoop.hdfs.protocol.datatransfer.Receiver.opWriteBlock(Receiver.java:176)",
    "org.apache.hadoop.hdfs.protocol.datatransfer.Receiver.processOp(Receiver.java:110)",
    "org.apache.hadoop.hdfs.server.datanode.DataXceiver.run(DataXceiver.java:294)",
)
SCANNER_FRAMES = (
    "org.apache.hadoop.util.AutoCloseableLock.close(AutoCloseableLock.java:96)",
    "org.apache.hadoop.hdfs.server.datanode.DirectoryScanner.scan(DirectoryScanner.java:395)",
    "org.apache.hadoop.hdfs.server.datanode.DirectoryScanner.reconcile(DirectoryScanner.java:373)",
    "org.apache.hadoop.hdfs.server.datanode.DirectoryScanner.run(DirectoryScanner.java:318)",
    "java.util.concurrent.Executors$RunnableAdapter.call(Executors.java:511)",
    "java.util.concurrent.FutureTask.runAndReset(FutureTask.java:308)",
    "java.util.concurrent.ScheduledThreadPoolExecutor$ScheduledFutureTask.access$301"
    "(ScheduledThreadPoolExecutor.java:180)",
    "java.util.concurrent.ScheduledThreadPoolExecutor$ScheduledFutureTask.run(ScheduledThreadPoolExecutor.java:294)",
    "java.util.concurrent.ThreadPoolExecutor.runWorker(ThreadPoolExecutor.java:1149)",
    "java.util.concurrent.ThreadPoolExecutor$Worker.run(ThreadPoolExecutor.java:624)",
)


class NameNodeLog(HadoopLog):
    def allocate(self, ts_ms: int, block_id: int, gs: int, replicas: list[Node], path: str) -> None:
        targets = ", ".join(f"{r.ip}:{XFER_PORT}" for r in replicas)
        self.line(ts_ms, "INFO", STATE, f"BLOCK* allocate {block_name(block_id, gs)}, replicas={targets} for {path}")

    def complete_file(self, ts_ms: int, path: str, client: str) -> None:
        self.line(ts_ms, "INFO", STATE, f"DIR* completeFile: {path} is closed by {client}")

    def write_lock(self, ts_ms: int, held_ms: int) -> None:
        """2.7.4 – 3.1.1 wording of a long FSNamesystem write-lock hold (logged on release)."""
        self.line(ts_ms, "INFO", NN, f"FSNamesystem write lock held for {held_ms} ms via",
                  "java.lang.Thread.getStackTrace(Thread.java:1559)",
                  "org.apache.hadoop.util.StringUtils.getStackTrace(StringUtils.java:1032)",
                  "org.apache.hadoop.hdfs.server.namenode.FSNamesystemLock.writeUnlock(FSNamesystemLock.java:261)",
                  "org.apache.hadoop.hdfs.server.namenode.FSNamesystem.writeUnlock(FSNamesystem.java:1563)",
                  "org.apache.hadoop.hdfs.server.namenode.FSNamesystem.delete(FSNamesystem.java:2911)",
                  "org.apache.hadoop.hdfs.server.namenode.NameNodeRpcServer.delete(NameNodeRpcServer.java:1087)",
                  "\tNumber of suppressed write-lock reports: 0",
                  f"\tLongest write-lock held interval: {held_ms}")


def _short_us(ts_ms: int) -> str:
    """Java 8 en_US SHORT date + SHORT time, e.g. ``1/2/20 9:10 AM`` (minute resolution)."""
    t = datetime.fromtimestamp(ts_ms / 1000, tz=UTC)
    hour = t.hour % 12 or 12
    return f"{t.month}/{t.day}/{t.year % 100} {hour}:{t.minute:02d} {'AM' if t.hour < 12 else 'PM'}"
