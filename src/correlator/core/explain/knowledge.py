"""Knowledge base: known HDFS issues with affected/fixed versions, and remediation per root cause.

Version-aware where a daemon's start banner told us its version; conservative (names the most common defect) where
it did not.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

Version = tuple[int, int, int]

SCANNER_FRAMES = ("DirectoryScanner", "checkAndUpdate")
"""Frames of the DataNode's DirectoryScanner: a lock held or awaited from one of them is the scanner's."""


def is_scanner_holder(holder: str) -> bool:
    return any(frame in holder for frame in SCANNER_FRAMES)


def is_scanner_stack(stack: tuple[str, ...]) -> bool:
    return any(is_scanner_holder(frame) for frame in stack)


def parse_version(text: str | None) -> Version | None:
    """``3.1.0`` / ``2.6.0-cdh5.8.0`` / ``1.7.1`` → (major, minor, patch); ``None`` when unreadable."""
    if not text:
        return None
    m = re.match(r"\s*(\d+)\.(\d+)(?:\.(\d+))?", text)
    if not m:
        return None
    return (int(m.group(1)), int(m.group(2)), int(m.group(3) or 0))


@dataclass(frozen=True, slots=True)
class KnownIssue:
    key: str
    summary: str
    fixed_in: tuple[Version, ...]
    """First fixed release of each maintained line."""

    def affects(self, version: Version) -> bool:
        """Affected when the first fix at or after the version's own release line is newer than the version."""
        candidates = [f for f in self.fixed_in if f[:2] >= version[:2]]
        return bool(candidates) and version < min(candidates)

    def fixed_text(self) -> str:
        return ", ".join(".".join(map(str, f)) for f in self.fixed_in)


HDFS_14476 = KnownIssue(
    "HDFS-14476",
    "the DirectoryScanner holds the DataNode dataset lock too long while fixing blocks that differ between disk and "
    "memory (reconcile without pausing)",
    ((2, 10, 1), (3, 2, 2), (3, 3, 0)),
)
HDFS_15415 = KnownIssue(
    "HDFS-15415",
    "the DirectoryScanner compares the disk report with the replica map under the dataset lock",
    ((3, 2, 2), (3, 3, 1)),
)
HDFS_13947 = KnownIssue(
    "HDFS-13947",
    "DirectoryScanner review: throttling and per-volume reporting of the disk walk",
    ((3, 3, 0),),
)
KNOWN_ISSUES = {i.key: i for i in (HDFS_14476, HDFS_15415, HDFS_13947)}


@dataclass(frozen=True, slots=True)
class DatanodeTraits:
    """What a DataNode version's code logs about its dataset lock and its DirectoryScanner.

    From the Hadoop sources by release line: the instrumented dataset lock and its hold-time warning arrive in 2.8.0
    (HDFS-10682/HDFS-10742) and go with the fine-grained ``DataSetLockManager`` of 3.4.0 (HDFS-15382/HDFS-16429),
    which reports nothing; lock-wait warnings exist on the 3.3 line only (``InstrumentedReadWriteLock``). The
    scanner compares disk and memory under the lock, logging its totals before releasing it, up to 3.2.1 and on
    3.3.0; from 3.2.2 and 3.3.1 (HDFS-15415) it copies the replica list under the lock and logs the totals after.
    """

    version: str
    lock_reports: bool
    lock_waits: bool
    totals_under_lock: bool
    lock_manager: bool = False
    """3.4+: per-block-pool/volume locks of ``DataSetLockManager``, which log no hold or wait time."""

    def lock_sentence(self) -> str:
        if not self.lock_reports:
            return (f"Hadoop {self.version} logs no dataset-lock hold times"
                    + (" (its DataSetLockManager locks report nothing)" if self.lock_manager else ""))
        waits = " and lock waits" if self.lock_waits else ""
        return f"Hadoop {self.version} reports dataset-lock holds{waits} above the reporting threshold"

    def totals_sentence(self) -> str:
        if self.totals_under_lock:
            return "its DirectoryScanner logs the totals while it still holds the lock"
        return "its DirectoryScanner logs the totals after releasing the lock"


def datanode_traits(datanode_version: str | None) -> DatanodeTraits | None:
    """Per-version facts of the DataNode's lock reporting and scanner; ``None`` when the version is unknown."""
    v = parse_version(datanode_version)
    if v is None or datanode_version is None:
        return None
    text = ".".join(map(str, v))
    if v < (2, 8, 0):
        return DatanodeTraits(text, lock_reports=False, lock_waits=False, totals_under_lock=True)
    if v >= (3, 4, 0):
        return DatanodeTraits(text, lock_reports=False, lock_waits=False, totals_under_lock=False, lock_manager=True)
    if v[:2] == (3, 3):
        return DatanodeTraits(text, lock_reports=True, lock_waits=True, totals_under_lock=v < (3, 3, 1))
    return DatanodeTraits(text, lock_reports=True, lock_waits=False, totals_under_lock=not (3, 2, 2) <= v)


def scanner_issue(datanode_version: str | None) -> KnownIssue | None:
    """The defect that explains a long scanner stall on a DataNode of this version (HDFS-14476 when unknown)."""
    version = parse_version(datanode_version)
    if version is None or HDFS_14476.affects(version):
        return HDFS_14476
    if HDFS_15415.affects(version):
        return HDFS_15415
    return None


def _checkpoint_settings(flink_version: str | None, timeout_ms: int | None) -> str:
    version = parse_version(flink_version)
    now = f" (now {timeout_ms} ms)" if timeout_ms else ""
    if version is not None and version < (1, 9, 0):
        return (f"Give the checkpoint more room: setCheckpointTimeout(...){now} above the longest stall, and "
                "setFailOnCheckpointingErrors(false) so one slow write does not restart the job (Flink < 1.9)")
    return (f"Give the checkpoint more room: execution.checkpointing.timeout{now} above the longest stall, and "
            "execution.checkpointing.tolerable-failed-checkpoints > 0 so one slow write does not restart the job")


def remediation(
    code: str,
    *,
    hosts: tuple[str, ...] = (),
    datanode_version: str | None = None,
    flink_version: str | None = None,
    timeout_ms: int | None = None,
    missing: tuple[str, ...] = (),
    holder: str | None = None,
    user_frame: str | None = None,
) -> tuple[str, ...]:
    """Concrete steps: config keys, patches, versions — most effective first."""
    where = ", ".join(hosts) if hosts else "the DataNodes of the write"
    checkpoint = _checkpoint_settings(flink_version, timeout_ms)
    if code == "HDFS_DIRECTORY_SCAN":
        issue = scanner_issue(datanode_version)
        running = f" (the DataNode runs {datanode_version})" if datanode_version else ""
        steps = [
            "Raise dfs.datanode.directoryscan.interval (default 21600 s) on " + where
            + " so the scanner runs less often",
            "Set dfs.datanode.directoryscan.throttle.limit.ms.per.sec (e.g. 500) to throttle the scanner",
        ]
        if issue is not None:
            steps.append(f"Upgrade HDFS to a release with {issue.key} ({issue.fixed_text()}){running}")
        else:
            steps.append("Reduce the number of differences the scanner reconciles (check disks and the block report)")
        return (*steps, checkpoint)
    if code == "DATANODE_LOCK_HELD":
        who = holder or "the reported holder"
        return (
            f"Find out why {who} holds the DataNode dataset lock so long on {where} (the lock report's stack names "
            "it) and keep that work off the lock or move it off the write path",
            "Keep dfs.datanode.lock-reporting-threshold-ms low enough (default 300) that every long hold is reported",
            checkpoint,
        )
    if code == "HDFS_SLOW_DISK":
        return (
            f"Check the disks of {where} (SMART, iostat await); replace or exclude the slow volume",
            "Enable dfs.datanode.fileio.profiling.sampling.percentage and dfs.datanode.outliers.report.interval "
            "to let the NameNode report slow disks",
            checkpoint,
        )
    if code == "HDFS_SLOW_PIPELINE":
        return (
            f"Check the network between the DataNodes of the pipeline ({where}) and the downstream DataNode's disks",
            "Enable dfs.datanode.peer.stats.enabled to let the NameNode report slow peers",
            "Review dfs.client.block.write.replace-datanode-on-failure.policy and dfs.client.socket-timeout",
            checkpoint,
        )
    if code == "DATANODE_JVM_PAUSE":
        return (
            f"Tune the DataNode heap/GC of {where} (HDFS_DATANODE_OPTS, HADOOP_DATANODE_OPTS on 2.x); enable GC logs",
            "If the pause shows no GC, check the host for swapping or CPU starvation",
            checkpoint,
        )
    if code == "NAMENODE_SLOW":
        return (
            "Find the NameNode lock holder (dfs.namenode.read-lock-reporting-threshold-ms, "
            "dfs.namenode.write-lock-reporting-threshold-ms) and tune the NameNode heap/GC (HDFS_NAMENODE_OPTS)",
            checkpoint,
        )
    if code == "TASKMANAGER_JVM_PAUSE":
        return (
            f"Tune the TaskManager heap/GC of {where} (taskmanager.memory.*, env.java.opts.taskmanager)",
            checkpoint,
        )
    if code == "FLINK_TASK_ERROR":
        return (
            (f"Fix the exception thrown at {user_frame} (user code; the checkpoint failed inside Flink)" if user_frame
             else "Fix the operator's snapshot error shown in the failure cause (the checkpoint failed inside Flink)"),
            "Set execution.checkpointing.tolerable-failed-checkpoints > 0 to survive single failures",
        )
    if code == "INSUFFICIENT_DATA":
        wanted = ", ".join(missing) if missing else "the DataNodes of the write and the NameNode"
        return (
            f"Collect the logs of {wanted} covering the failure time and run the analysis again",
            "Keep DataNode.clienttrace at INFO and enable GC logs so writes can be linked to DataNodes",
        )
    return (
        "Lower dfs.client.slow.io.warning.threshold.ms in the Flink HDFS client to see slow acks with their pipeline",
        "Enable GC logs on TaskManagers and DataNodes (env.java.opts.taskmanager, HDFS_DATANODE_OPTS)",
        checkpoint,
    )
