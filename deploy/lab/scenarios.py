"""The lab's faults, each started right after the JobManager logs `Triggering checkpoint`, and the ground truth of a run.

A fault is a real mechanism: `kill -STOP` of a daemon, a DataNode wrapper switch (dataset lock, slow disk, slow
pipeline), a trigger file that makes user code throw in `snapshotState`, block files removed behind a DataNode's
back, the NameNode put in safe mode, a space quota set on the checkpoints or every DataNode decommissioned with
Hadoop's own `DFSAdmin`. Which checkpoints failed is read from the JobManager's log, never assumed: a fault does not
always fail one, so a fault that failed none is repeated once.
"""

from __future__ import annotations

import errno
import os
import re
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import replicas
from cluster import USER, Cluster, LabError, wait_for
from trim import json_record, json_time

FAULT_SECONDS = 30.0
DELAY_MS = {"slow-disk": 2000, "slow-pipeline": 2000}
THROTTLE_MS = 10
"""state-growth: every block write on every DataNode sleeps this long first: a steady, modest disk (a few MB/s for a
checkpoint, never one slow-write warning), so that it is the state's growth that brings the upload to the timeout."""
GROW_BYTES = 100
"""state-growth: bytes each record adds to its key's state (2000 records/s: about 12 MB a minute)."""
GROWTH_TIMEOUT = 600.0
CHECKPOINTS = "/flink/checkpoints"
"""The lab's checkpoint directory (``cluster``'s ``state.checkpoints.dir``)."""
XCEIVERS = "dfs.datanode.max.transfer.threads"
QUOTA = "1m"
"""space-quota: far below one block (128 MiB) times the replication, which each file being written reserves."""
DIR_ITEMS = 32
"""directory-items: the NameNode's dfs.namenode.fs-limits.max-directory-items (1,048,576 by default); the job's
checkpoint directory holds a handful of items (chk-N, shared, taskowned) until the fault fills it."""
VOLUME_MIB = 64
"""disk-full: each DataNode's volume is a tmpfs this big, which the fault fills (to FREE_LEFT) as another program
writing to the same disk would."""
FREE_LEFT = 256 * 1024
BLOCK_SIZE = 1024 * 1024
"""disk-full: Flink's block size (HDFS's smallest): a DataNode must have a block's room free to be chosen, so the
volumes can be small."""

TRIGGERED = re.compile(r"Triggering checkpoint (\d+) .*for job ([0-9a-f]{32})")
TRIGGER_AT = re.compile(r"Triggering checkpoint (\d+) .*@ (\d+) for job ([0-9a-f]{32})")
COMPLETED = re.compile(r"Completed checkpoint (\d+) for job ([0-9a-f]{32})")
FAILED = (
    (re.compile(r"Checkpoint (\d+) of job ([0-9a-f]{32}) expired before completing"), "expired"),
    (re.compile(r"Decline checkpoint (\d+) by task \S+ of job ([0-9a-f]{32})"), "declined"),
    (re.compile(r"Failed to trigger or complete checkpoint (\d+) for job ([0-9a-f]{32})"), "failed"),
    (re.compile(r"Triggering Checkpoint (\d+) for job ([0-9a-f]{32}) failed due to"), "trigger failed"),
)
FLINK_STAMP = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) ")


def iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{int(t * 1000) % 1000:03d}Z"


def flink_time(line: str) -> float | None:
    m = FLINK_STAMP.match(line)
    if not m:
        return None
    return datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S,%f").replace(tzinfo=UTC).timestamp()


def flink_record(line: str) -> tuple[float | None, str]:
    """A Flink log line's time and the text its patterns are matched against: the stock layout's line itself, or a
    JSON-layout record's `message` (never its stack trace) timed by its `@timestamp`."""
    obj = json_record(line)
    if obj is None:
        return flink_time(line), line
    return json_time(obj.get("@timestamp")), str(obj.get("message", ""))


@dataclass(frozen=True)
class Scenario:
    name: str
    kind: str
    target: str | None
    """`lab-nn`, a DataNode host, or None (user code, control)."""
    expected: Callable[[str], str | None]
    """Hadoop version → the code every failed checkpoint must get (None: no verdict is expected)."""
    retain_checkpoints: bool = False
    """Keep old checkpoints, so their blocks outlive the 20 s between two directory scans."""
    scan_host: str | None = None
    """A DataNode given millions of replicas before Flink starts, so that each of its directory scans is long."""
    scan_outside_writes: bool = False
    """That DataNode has no room for new blocks (outside every pipeline); Flink's client then writes 2 replicas."""
    job_args: tuple[str, ...] = ()
    """More arguments of the lab's job (`LabJob`)."""
    warns: bool = False
    """An early warning (a `risk` record) must come before the first failure."""
    traces: bool = False
    """Flink's Slf4jTraceReporter on: each checkpoint's span (its phases' sums and maxima) in the JobManager's log."""
    flink_conf: tuple[tuple[str, object], ...] = ()
    """Flink settings of this scenario only (a heartbeat timeout shorter than the fault)."""
    min_hadoop: tuple[int, int] = (2, 0)
    """The oldest Hadoop line whose daemons can take the fault (a setting they change while running)."""
    namenode_conf: tuple[tuple[str, object], ...] = ()
    """NameNode settings of this scenario only (a low limit)."""
    volume_mib: int = 0
    """Each DataNode's volume on a tmpfs of this size (mounting needs root), so that the fault can fill a disk."""

    def datanode_settings(self) -> dict[str, object]:
        """Small volumes: 3.4's round-robin volume choice also wants 1 GiB free beyond the block (HDFS-16111; older
        lines do not know the setting)."""
        return {"dfs.datanode.round-robin-volume-choosing-policy.additional-available-space": 0} if self.volume_mib else {}

    def flink_hdfs(self) -> dict[str, object]:
        out: dict[str, object] = {"dfs.replication": 2} if self.scan_outside_writes else {}
        return {**out, "dfs.blocksize": BLOCK_SIZE} if self.volume_mib else out

    def flink_settings(self, flink_major: int, traces: bool = False) -> dict[str, object]:
        """Settings beyond the lab's own; the trace reporter only where its jar is on the class path (``traces``)."""
        out: dict[str, object] = {}
        if self.retain_checkpoints:
            key = "state.checkpoints.num-retained" if flink_major < 2 else "execution.checkpointing.num-retained"
            out[key] = 1000
        if self.traces and traces:
            out["traces.reporter.slf4j.factory.class"] = "org.apache.flink.traces.slf4j.Slf4jTraceReporterFactory"
        return {**out, **dict(self.flink_conf)}


def _lock_code(hadoop: str) -> str:
    # 3.4's DataSetLockManager reports no hold time: what can be known is the DataNode that stopped acking.
    return "DATANODE_LOCK_HELD" if hadoop.startswith(("2.", "3.0", "3.1", "3.2", "3.3")) else "HDFS_SLOW_PIPELINE"


def _scan_code(hadoop: str) -> str | None:
    """Before HDFS-15415 (3.2.2, 3.3.1) the scan compares disk and memory under the dataset lock: a write waits."""
    v = tuple(int(x) for x in re.findall(r"\d+", hadoop)[:3])
    return "HDFS_DIRECTORY_SCAN" if v < (3, 2, 2) or v == (3, 3, 0) else None


SCENARIOS = {s.name: s for s in (
    Scenario("control", "none", None, lambda _h: None),
    Scenario("datanode-pause", "sigstop", "lab-dn2", lambda _h: "DATANODE_JVM_PAUSE"),
    Scenario("namenode-pause", "sigstop", "lab-nn", lambda _h: "NAMENODE_SLOW"),
    Scenario("lock-held", "dataset-lock", "lab-dn2", _lock_code),
    Scenario("slow-disk", "slow-disk", "lab-dn2", lambda _h: "HDFS_SLOW_DISK"),
    Scenario("slow-pipeline", "slow-pipeline", "lab-dn2", lambda _h: "HDFS_SLOW_PIPELINE"),
    Scenario("task-error", "user-exception", None, lambda _h: "FLINK_TASK_ERROR"),
    Scenario("safe-mode", "safe-mode", "lab-nn", lambda _h: "NAMENODE_SAFE_MODE"),
    Scenario("space-quota", "space-quota", "lab-nn", lambda _h: "HDFS_QUOTA_EXCEEDED"),
    # every DataNode decommissioning: the NameNode places no new block on one ("could only be written to 0 of the 1
    # minReplication nodes"), while the writes already in a pipeline go on
    Scenario("decommission", "decommission", "lab-nn", lambda _h: "HDFS_NO_DATANODES"),
    # every DataNode's transfer threads lowered to one at run time (HDFS-16400: 3.4 and later) while four subtasks
    # upload their state at once: a DataNode already serving two writes refuses the next one
    Scenario("xceiver-limit", "xceiver-limit", "lab-dn2", lambda _h: "DATANODE_XCEIVER_LIMIT",
             flink_conf=(("taskmanager.numberOfTaskSlots", 4), ("parallelism.default", 4)), min_hadoop=(3, 4)),
    # leftovers fill the job's checkpoint directory to the NameNode's item limit while every checkpoint is kept: the
    # next checkpoint's directory cannot be created
    Scenario("directory-items", "directory-items", "lab-nn", lambda _h: "NAMENODE_LIMIT", retain_checkpoints=True,
             namenode_conf=(("dfs.namenode.fs-limits.max-directory-items", DIR_ITEMS),)),
    # every DataNode's disk filled by another program: each DataNode a write reaches refuses it for want of a block's
    # room (which of them a write reaches varies: no one host is the truth)
    Scenario("disk-full", "disk-full", None, lambda _h: "DATANODE_DISK_FULL", volume_mib=VOLUME_MIB),
    Scenario("state-growth", "state-growth", None, lambda _h: "FLINK_STATE_GROWTH",
             job_args=("--grow", str(GROW_BYTES)), warns=True),
    Scenario("backpressure", "backpressure", None, lambda _h: "FLINK_BACKPRESSURE", job_args=("--slow-ms", "5"),
             traces=True),
    # the stopped TaskManager answers no heartbeat: after 15 s the JobManager lets it go and fails its tasks, which
    # aborts the checkpoint (its own timeout, 60 s here, would come later, as Flink's 10 min default does)
    Scenario("taskmanager-lost", "sigstop", "lab-tm", lambda _h: "FLINK_TASKMANAGER_LOST",
             flink_conf=(("heartbeat.timeout", 15000), ("heartbeat.interval", 2000),
                         ("execution.checkpointing.timeout", "60s"))),
    Scenario("scanner-differences", "block-files-removed", "lab-dn3", lambda _h: None, retain_checkpoints=True),
    Scenario("directory-scan", "directory-scan", "lab-dn2", _scan_code, scan_host="lab-dn2"),
    Scenario("directory-scan-harmless", "sigstop", "lab-dn1", lambda _h: "DATANODE_JVM_PAUSE", scan_host="lab-dn2",
             scan_outside_writes=True),
)}



def hadoop_line(hadoop: str) -> tuple[int, int]:
    major, minor = (int(x) for x in re.findall(r"\d+", hadoop)[:2])
    return major, minor


def default_scenarios(hadoop: str) -> list[str]:
    """What runs when no scenario is named: not the directory-scan ones (minutes of replica fabrication each), nor
    those this Hadoop line's daemons or this machine cannot take."""
    return [n for n, s in SCENARIOS.items() if not s.scan_host and not why_not(s, hadoop)]


def why_not(scenario: Scenario, hadoop: str) -> str | None:
    """Why this scenario cannot run here, or None."""
    if hadoop_line(hadoop) < scenario.min_hadoop:
        return f"needs Hadoop {'.'.join(map(str, scenario.min_hadoop))} or later"
    if scenario.volume_mib and os.geteuid() != 0:
        return "needs root (it mounts a tmpfs for each DataNode's volume)"
    return None


def unsupported(names: list[str], hadoop: str) -> list[str]:
    """Each named scenario that cannot run here, with why."""
    return [f"{n} ({why})" for n in names if (why := why_not(SCENARIOS[n], hadoop))]


class JobLog:
    """Follows the JobManager log line by line from where the last wait stopped."""

    def __init__(self, path: Path, cluster: Cluster) -> None:
        self.path = path
        self.cluster = cluster
        self.offset = 0

    def wait(self, pattern: re.Pattern[str], timeout: float, not_before: float = 0.0) -> tuple[re.Match[str], float]:
        """The next line matching `pattern` (stamped at or after `not_before`), and its time."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.path.exists():
                with self.path.open("rb") as f:
                    f.seek(self.offset)
                    chunk = f.read()
                end = chunk.rfind(b"\n") + 1
                pos = 0
                for raw in chunk[:end].splitlines(keepends=True):
                    pos += len(raw)
                    t, line = flink_record(raw.decode("utf-8", "replace"))
                    m = pattern.search(line)
                    if m and t is not None and t >= not_before:
                        self.offset += pos
                        return m, t
                self.offset += end
            if not self.cluster.jobmanager().alive():
                raise LabError(f"the JobManager exited; see {self.path}")
            time.sleep(0.2)
        raise LabError(f"timed out after {timeout:.0f}s waiting for /{pattern.pattern}/ in {self.path}")

    def trigger_spacing_ms(self, job_id: str, checkpoint_id: int) -> int | None:
        """How long after the trigger before it a checkpoint was triggered (each `@ <ms>` is exact): the step in
        which a prediction of its failure can be right."""
        at: dict[int, int] = {}
        for raw in self.path.read_bytes().splitlines():
            m = TRIGGER_AT.search(raw.decode("utf-8", "replace"))
            if m and m.group(3) == job_id:
                at[int(m.group(1))] = int(m.group(2))
        before = [c for c in at if c < checkpoint_id]
        return at[checkpoint_id] - at[max(before)] if checkpoint_id in at and before else None

    def failures(self, since: float) -> list[dict[str, object]]:
        """Checkpoints the JobManager logged as failed at or after `since` (epoch seconds), first reason each."""
        seen: dict[tuple[str, int], dict[str, object]] = {}
        for raw in self.path.read_bytes().splitlines():
            t, line = flink_record(raw.decode("utf-8", "replace"))
            if t is None or t < since:
                continue
            for pattern, reason in FAILED:
                m = pattern.search(line)
                if m:
                    key = (m.group(2), int(m.group(1)))
                    seen.setdefault(key, {"job_id": key[0], "checkpoint_id": key[1], "reason": reason,
                                          "at": iso(t)})
        return sorted(seen.values(), key=lambda f: (str(f["at"]), str(f["checkpoint_id"]).zfill(9)))


class Fault:
    """Starts and ends one scenario's fault on a running cluster."""

    def __init__(self, scenario: Scenario, cluster: Cluster, trigger: Path) -> None:
        self.s = scenario
        self.cluster = cluster
        self.trigger = trigger
        self.scan: dict[str, object] = {}
        self.scan_from = 0
        self.scan_at = 0
        self.held: replicas.Hold | None = None
        self.mounted: list[Path] = []
        self.filled: list[str] = []

    # ---- DataNode volumes of their own (scenarios with `volume_mib`) ----
    def mount(self) -> None:
        """Before HDFS starts: each DataNode's directory (its volume and temporary files) a tmpfs of its own."""
        for host in self.cluster.hosts_dn if self.s.volume_mib else ():
            where = self.cluster.run_dir / "data" / host
            where.mkdir(parents=True, exist_ok=True)
            subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={self.s.volume_mib}m", "tmpfs", str(where)],
                           check=True, timeout=30)
            self.mounted.append(where)

    def _fill(self, host: str) -> None:
        """Another program's file on the DataNode's disk, leaving it FREE_LEFT bytes."""
        where = self.cluster.run_dir / "data" / host
        fd = os.open(where / "other-program.dat", os.O_CREAT | os.O_WRONLY, 0o644)
        try:
            for _ in range(20):  # the DataNode writes too: what was free a moment ago may not be
                st = os.statvfs(where)
                try:
                    os.posix_fallocate(fd, 0, os.fstat(fd).st_size + max(0, st.f_bavail * st.f_frsize - FREE_LEFT))
                    return
                except OSError as e:
                    if e.errno != errno.ENOSPC:
                        raise
            raise LabError(f"could not fill {where} to {FREE_LEFT} bytes free")
        finally:
            os.close(fd)

    # ---- a scanning DataNode (scenarios with `scan_host`) ----
    def prepare(self, say: Callable[[str], None]) -> None:
        """Before Flink starts: the scanning DataNode gets its replicas and has finished its first scan."""
        if self.s.scan_host:
            log = self.cluster.logs / f"hadoop-{USER}-datanode-{self.s.scan_host}.log"
            self.scan_from = log.stat().st_size
            self.scan = replicas.prepare(self.cluster, self.s.scan_host, self.s.scan_outside_writes, say=say)

    def scan_proc(self):  # noqa: ANN201 - a cluster.Proc
        return next(p for p in self.cluster.procs if p.host == self.s.scan_host)

    def arm(self, say: Callable[[str], None]) -> float:
        """A fault of another kind beside a scan (the control) waits for the scan's next lock hold: the next one
        is due a scan period after the last, which is measured from two holds in a row. Returns when it stopped
        waiting (the fault then starts after the next `Triggering checkpoint` from then on), else 0."""
        if not self.s.scan_host or self.s.kind == "directory-scan":
            return 0.0
        proc = self.scan_proc()
        holds = replicas.scanner_holds(proc.log, self.scan_from)
        while len(holds) < 2:
            replicas.wait_hold(proc, proc.log.stat().st_size)
            holds = replicas.scanner_holds(proc.log, self.scan_from)
        due = holds[-1].start + (holds[-1].start - holds[-2].start)
        while due < time.time():
            due += holds[-1].start - holds[-2].start
        say(f"{self.s.scan_host}: next scan lock hold due at {iso(due)}; waiting for it")
        time.sleep(max(0.0, due + 1.0 - time.time()))
        return time.time()

    def settle(self, since: float) -> None:
        """The logs must show the scanner lock hold that overlapped the fault: a hold is logged only when it ends,
        which can be well after the fault did, so wait for one that ended at or after `since`."""
        if not self.s.scan_host:
            return
        proc = self.scan_proc()
        deadline = time.monotonic() + replicas.SCAN_TIMEOUT
        while not any(h.end >= since for h in replicas.scanner_holds(proc.log, self.scan_from)):
            if time.monotonic() > deadline or not proc.alive():
                raise LabError(f"no scanner lock hold ending after the fault in {proc.log}")
            time.sleep(1.0)

    def span(self, start: float, end: float) -> tuple[float, float]:
        """The fault's span for the truth: a directory scan's is its lock hold as the DataNode logged it."""
        return (self.held.start, self.held.end) if self.held is not None else (start, end)

    def scan_truth(self) -> dict[str, object]:
        """What the scanning DataNode did: how it was prepared and every scanner lock hold it logged."""
        if not self.s.scan_host:
            return {}
        holds = replicas.scanner_holds(self.scan_proc().log, self.scan_from)
        return {"directory_scans": {**self.scan, "holds": [
            {"start": iso(h.start), "end": iso(h.end), "held_ms": h.held_ms} for h in holds]}}

    def cleanup(self) -> None:
        """The fabricated replicas are millions of files, the tmpfs volumes memory: gone once every process has
        stopped."""
        if self.s.scan_host:
            replicas.remove(self.cluster.run_dir / "data" / self.s.scan_host)
        for where in self.mounted:
            subprocess.run(["umount", str(where)], check=False, timeout=60)

    def target_proc(self):  # noqa: ANN201 - a cluster.Proc
        return next(p for p in self.cluster.procs if p.host == self.s.target)

    def start(self) -> None:
        kind = self.s.kind
        if kind == "sigstop":
            os.kill(self.target_proc().pid, signal.SIGSTOP)
        elif kind == "dataset-lock":
            self._switch("lock", "0")
        elif kind in ("slow-disk", "slow-pipeline"):
            self._switch(kind, str(DELAY_MS[kind]))
        elif kind == "user-exception":
            self.trigger.write_text("throw\n")
        elif kind == "block-files-removed":
            self._remove_block_files()
        elif kind == "directory-scan":  # the scan runs on its own clock: the fault is its next lock hold
            self.held, self.scan_at = None, self.target_proc().log.stat().st_size
        elif kind == "safe-mode":  # an operator's `hdfs dfsadmin -safemode enter`: the NameNode refuses every write
            self.cluster.dfsadmin("-safemode", "enter")
        elif kind == "space-quota":  # an operator's space quota on the checkpoints: below a block times the replication
            self.cluster.dfsadmin("-setSpaceQuota", QUOTA, CHECKPOINTS)
        elif kind == "decommission":  # an operator lists every DataNode's host in the exclude file
            self.cluster.excludes.write_text("127.0.0.1\n")
            self.cluster.dfsadmin("-refreshNodes")
        elif kind == "xceiver-limit":
            for host in self._datanodes():
                self.cluster.reconfigure_datanode(host, {XCEIVERS: 1})
        elif kind == "directory-items":
            self._fill_directory()
        elif kind == "disk-full":
            for host in self._datanodes():
                self._fill(host)
        elif kind == "backpressure":  # every record now takes 5 ms in the keyed operator: 200 a second, not 2000
            self.trigger.with_name("slow-trigger").write_text("slow\n")
        elif kind == "state-growth":  # the job's state grows from its start; the disks become steady and modest
            for host in self._datanodes():
                self._switch("slow-disk", str(THROTTLE_MS), host)

    def hold(self, jobs: JobLog) -> None:
        """How long the fault lasts: 30 s, or until the user exception was declined, or the scan that found it, or
        the directory scan's next lock hold has ended."""
        if self.s.kind == "user-exception":
            jobs.wait(re.compile(r"Decline checkpoint \d+ by task|Failed to trigger or complete checkpoint"), 60)
        elif self.s.kind == "block-files-removed":
            proc = self.target_proc()
            wait_for(proc.log, re.compile(r"missing block files: ?[1-9]|[1-9]\d* differences"), 90, proc,
                     proc.log.stat().st_size)
        elif self.s.kind == "directory-scan":
            self.held = replicas.wait_hold(self.target_proc(), self.scan_at)
        elif self.s.kind in ("state-growth", "backpressure"):  # until a checkpoint fails
            jobs.wait(re.compile(r"expired before completing|Failed to trigger or complete checkpoint"),
                      GROWTH_TIMEOUT)
        else:
            time.sleep(FAULT_SECONDS)

    def end(self) -> None:
        kind = self.s.kind
        if kind == "sigstop":
            os.kill(self.target_proc().pid, signal.SIGCONT)
        elif kind == "dataset-lock":
            self._unswitch("lock")
        elif kind in ("slow-disk", "slow-pipeline"):
            self._unswitch(kind)
        elif kind == "user-exception":
            self.trigger.unlink(missing_ok=True)
        elif kind == "safe-mode":
            self.cluster.dfsadmin("-safemode", "leave")
        elif kind == "space-quota":
            self.cluster.dfsadmin("-clrSpaceQuota", CHECKPOINTS)
        elif kind == "decommission":
            self.cluster.excludes.write_text("")
            self.cluster.dfsadmin("-refreshNodes")
        elif kind == "xceiver-limit":
            for host in self._datanodes():
                self.cluster.reconfigure_datanode(host, {XCEIVERS: None})
        elif kind == "directory-items":
            self.cluster.fs("-rm", "-r", "-f", *self.filled)
        elif kind == "disk-full":
            for host in self._datanodes():
                (self.cluster.run_dir / "data" / host / "other-program.dat").unlink(missing_ok=True)
        elif kind == "backpressure":
            self.trigger.with_name("slow-trigger").unlink(missing_ok=True)
        elif kind == "state-growth":
            for host in self._datanodes():
                self._unswitch("slow-disk", host)

    def _datanodes(self) -> list[str]:
        return [p.host for p in self.cluster.datanodes()]

    def _switch(self, name: str, content: str, host: str | None = None) -> None:
        d = self.cluster.control[host or self.s.target]  # type: ignore[index]
        d.mkdir(parents=True, exist_ok=True)
        tmp = d / f".{name}"
        tmp.write_text(content)
        tmp.rename(d / name)

    def _unswitch(self, name: str, host: str | None = None) -> None:
        (self.cluster.control[host or self.s.target] / name).unlink(missing_ok=True)  # type: ignore[index]

    def _fill_directory(self) -> None:
        """Empty directories beside the job's checkpoints, as many as the NameNode's item limit has room for."""
        jobs = self.cluster.fs("-ls", "-C", CHECKPOINTS).split()
        if len(jobs) != 1:
            raise LabError(f"expected one job directory in {CHECKPOINTS}, found {jobs}")
        items = self.cluster.fs("-ls", "-C", jobs[0]).split()
        self.filled = [f"{jobs[0]}/leftover-{i}" for i in range(DIR_ITEMS - len(items))]
        self.cluster.fs("-mkdir", *self.filled)

    def _remove_block_files(self) -> None:
        """Delete finalized block data files (not their .meta) on the target DataNode, as a disk mishap would."""
        data = self.cluster.run_dir / "data" / str(self.s.target) / "data"
        blocks = sorted(p for p in data.rglob("blk_*") if p.parent.name.startswith("subdir")
                        and not p.name.endswith(".meta"))
        if not blocks:
            raise LabError(f"no finalized block files under {data} to remove")
        for p in blocks[: max(1, len(blocks) // 2)]:
            p.unlink()


def truth(scenario: Scenario, hadoop: str, flink: str, cluster: Cluster, start: float, end: float,
          failed: list[dict[str, object]], attempts: list[dict[str, str]],
          jobs: JobLog | None = None) -> dict[str, object]:
    target = next((p for p in cluster.procs if p.host == scenario.target), None)
    code = scenario.expected(hadoop)
    hosts = [scenario.target] if scenario.target else []
    layout = {} if cluster.flink_layout == "text" else {"flink_layout": cluster.flink_layout}
    return {
        "scenario": scenario.name, "hadoop": hadoop, "flink": flink, **layout,
        "fault": {"kind": scenario.kind, "host": scenario.target, "addr": target.addr if target else None,
                  "start": iso(start), "end": iso(end)},
        "attempts": attempts,
        "failed_checkpoints": failed,
        "expected": [] if code is None else [
            {"job_id": f["job_id"], "checkpoint_id": f["checkpoint_id"], "code": code, "hosts": hosts}
            for f in failed],
        **({"risk": _risk_truth(failed, jobs)} if scenario.warns and jobs is not None else {}),
        **({"checkpoint_spans": cluster.jars.flink_traces_libs is not None} if scenario.traces else {}),
    }


def _risk_truth(failed: list[dict[str, object]], jobs: JobLog) -> dict[str, object]:
    """What an early warning must meet: raised before the first failure, its predicted expiry within one trigger
    spacing of that failure."""
    first = min(failed, key=lambda f: str(f["at"])) if failed else None
    spacing = jobs.trigger_spacing_ms(str(first["job_id"]), int(str(first["checkpoint_id"]))) if first else None
    return {"expected": True, "first_failure": first["at"] if first else None, "trigger_spacing_ms": spacing}
