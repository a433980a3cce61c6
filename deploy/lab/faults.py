"""The lab's faults on a running cluster, each a real mechanism: `kill -STOP` of a daemon, a DataNode wrapper switch
(dataset lock, slow disk, slow pipeline), a trigger file that makes user code throw in `snapshotState`, block files
removed behind a DataNode's back, the NameNode put in safe mode, a space quota set on the checkpoints or every
DataNode decommissioned with Hadoop's own `DFSAdmin`, transfer threads lowered at run time, the checkpoint directory
filled to the NameNode's item limit with its own `FsShell`, every DataNode's disk filled by another program.
"""

from __future__ import annotations

import errno
import os
import re
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import replicas
from cluster import USER, Cluster, LabError, wait_for
from scenarios import CHECKPOINTS, DIR_ITEMS, JobLog, Scenario, iso

FAULT_SECONDS = 30.0
DELAY_MS = {"slow-disk": 2000, "slow-pipeline": 2000}
THROTTLE_MS = 10
"""state-growth: every block write on every DataNode sleeps this long first: a steady, modest disk (a few MB/s for a
checkpoint, never one slow-write warning), so that it is the state's growth that brings the upload to the timeout."""
GROWTH_TIMEOUT = 600.0
HICCUP_FROM = 0.6
"""state-growth-hiccup: once a checkpoint took this share of the 10 s timeout, each next one gets a hiccup."""
HICCUP_MS = 700
"""state-growth-hiccup: what each block data write on the DataNode sleeps during the hiccup (instead of THROTTLE_MS)."""
HICCUP_SECONDS = 1.0
CHECKPOINT_TIMEOUT_S = 10.0
COMPLETED_IN = re.compile(r"Completed checkpoint (\d+) for job [0-9a-f]{32} \(\d+ bytes, checkpointDuration=(\d+) ms")
TRIGGERED_AT = re.compile(r"Triggering checkpoint (\d+) .*for job [0-9a-f]{32}")
EXPIRED_OR_FAILED = re.compile(r"expired before completing|Failed to trigger or complete checkpoint")
XCEIVERS = "dfs.datanode.max.transfer.threads"
QUOTA = "1m"
"""space-quota: far below one block (128 MiB) times the replication, which each file being written reserves."""
FREE_LEFT = 256 * 1024


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
        elif kind in ("state-growth", "state-growth-hiccup"):  # the state grows from the job's start; the disks
            for host in self._datanodes():                       # become steady and modest
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
            jobs.wait(EXPIRED_OR_FAILED, GROWTH_TIMEOUT)
        elif self.s.kind == "state-growth-hiccup":
            self._hiccups(jobs)
        else:
            time.sleep(self.s.fault_seconds or FAULT_SECONDS)

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
        elif kind in ("state-growth", "state-growth-hiccup"):
            for host in self._datanodes():
                self._unswitch("slow-disk", host)

    def _hiccups(self, jobs: JobLog) -> None:
        """Until a checkpoint fails: once one took HICCUP_FROM of the timeout, every next checkpoint's writes on the
        target DataNode stall for HICCUP_SECONDS, starting a little before the last one's duration ran out (its
        upload is then well under way). Read from the JobManager's log as it is written."""
        deadline = time.monotonic() + GROWTH_TIMEOUT
        pattern = re.compile(f"{COMPLETED_IN.pattern}|{TRIGGERED_AT.pattern}|{EXPIRED_OR_FAILED.pattern}")
        last_ms = 0
        while time.monotonic() < deadline:
            m, _ = jobs.wait(pattern, max(1.0, deadline - time.monotonic()))
            if EXPIRED_OR_FAILED.search(m.group(0)):
                return
            if m.group(2) is not None:  # a completion: how long it took
                last_ms = int(m.group(2))
            elif last_ms >= HICCUP_FROM * CHECKPOINT_TIMEOUT_S * 1000:  # a trigger after a long checkpoint
                time.sleep(max(0.0, last_ms / 1000 - 2 * HICCUP_SECONDS))
                self._switch("slow-disk", str(HICCUP_MS))
                time.sleep(HICCUP_SECONDS)
                self._switch("slow-disk", str(THROTTLE_MS))
        raise LabError(f"no checkpoint failed within {GROWTH_TIMEOUT:.0f}s")

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
