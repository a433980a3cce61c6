"""The lab's scenarios (each fault, in `faults.py`, starts right after the JobManager logs `Triggering checkpoint`, or
`Completed checkpoint` for a pause) and the ground truth of a run.

Which checkpoints failed is read from the JobManager's log, never assumed: a fault does not always fail one, so a fault
that failed none is repeated once.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from cluster import Cluster, LabError
from trim import json_record, json_time

GROW_BYTES = 100
"""state-growth: bytes each record adds to its key's state (2000 records/s: about 12 MB a minute)."""
CHECKPOINTS = "/flink/checkpoints"
"""The lab's checkpoint directory (``cluster``'s ``state.checkpoints.dir``)."""
DIR_ITEMS = 32
"""directory-items: the NameNode's dfs.namenode.fs-limits.max-directory-items (1,048,576 by default); the job's
checkpoint directory holds a handful of items (chk-N, shared, taskowned) until the fault fills it."""
VOLUME_MIB = 64
"""disk-full: each DataNode's volume is a tmpfs this big, which the fault fills (to FREE_LEFT) as another program
writing to the same disk would."""
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
SPAN_DETAIL = "CHILDREN_SPANS_PER_SUBTASK"
"""The span detail level of Flink lines that have one: a checkpoint's span, a child span per task and a grandchild per
subtask (its start delay, alignment, sync and async durations and sizes)."""
SPAN_DETAIL_FROM = (2, 2)
"""The first Flink line fetched with its trace reporter for every scenario (its core may know the detail level;
whether it does is read from its jar)."""
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
    taskmanagers: int = 1
    """TaskManagers of one slot each, the job's parallelism as many: each runs one subtask of every task."""
    replication: int | None = None
    """The replication of Flink's HDFS client (each state file on this many DataNodes), when not the cluster's."""
    transaction_timeout_ms: int | None = None
    """The job writes through an exactly-once Kafka sink to the lab's broker, its producer's transaction.timeout.ms
    this (None: no Kafka)."""
    fault_seconds: float | None = None
    """How long the fault lasts, when not the lab's usual 30 s."""
    before_trigger: bool = False
    """The fault starts once a checkpoint completes, so it is in place when the next one triggers: a checkpoint takes
    under a second here, and a pause begun when its trigger line is read can miss the tasks' writes: the checkpoint in
    flight then completes late, after the pause, and none fails."""

    @property
    def starts_after(self) -> tuple[re.Pattern[str], str]:
        """The JobManager line the fault starts right after, and what it says of the checkpoint."""
        return (COMPLETED, "completed") if self.before_trigger else (TRIGGERED, "triggered")

    def datanode_settings(self) -> dict[str, object]:
        """Small volumes: 3.4's round-robin volume choice also wants 1 GiB free beyond the block (HDFS-16111; older
        lines do not know the setting)."""
        return {"dfs.datanode.round-robin-volume-choosing-policy.additional-available-space": 0} if self.volume_mib else {}

    def flink_hdfs(self) -> dict[str, object]:
        out: dict[str, object] = {"dfs.replication": 2} if self.scan_outside_writes else {}
        if self.replication is not None:
            out["dfs.replication"] = self.replication
        return {**out, "dfs.blocksize": BLOCK_SIZE} if self.volume_mib else out

    def flink_settings(self, flink_major: int, traces: bool = False, span_detail: bool = False,
                       events: bool = False) -> dict[str, object]:
        """Settings beyond the lab's own; the trace reporter only where its jar is on the class path (``traces``).
        Where this Flink can break a checkpoint's span into children (``span_detail``) every scenario logs them, one
        span per subtask, and the event reporter logs checkpoint and job events where its jar has it."""
        out: dict[str, object] = {}
        if self.retain_checkpoints:
            key = "state.checkpoints.num-retained" if flink_major < 2 else "execution.checkpointing.num-retained"
            out[key] = 1000
        if (self.traces or span_detail) and traces:
            out["traces.reporter.slf4j.factory.class"] = "org.apache.flink.traces.slf4j.Slf4jTraceReporterFactory"
        if span_detail and traces:
            out["traces.checkpoint.span-detail-level"] = SPAN_DETAIL
        if span_detail and events:
            out["events.reporter.slf4j.factory.class"] = "org.apache.flink.events.slf4j.Slf4jEventReporterFactory"
        if self.taskmanagers > 1:
            out.update({"taskmanager.numberOfTaskSlots": 1, "parallelism.default": self.taskmanagers})
        return {**out, **dict(self.flink_conf)}


KAFKA_FLINK = (("execution.checkpointing.tolerable-failed-checkpoints", 1000),)
"""The Kafka-sink scenarios: failed checkpoints do not restart the job (a restart would abort its transactions)."""


def _lock_code(hadoop: str) -> str:
    # 3.4's DataSetLockManager reports no hold time: what can be known is the DataNode that stopped acking.
    return "DATANODE_LOCK_HELD" if hadoop.startswith(("2.", "3.0", "3.1", "3.2", "3.3")) else "HDFS_SLOW_PIPELINE"


def _scan_code(hadoop: str) -> str | None:
    """Before HDFS-15415 (3.2.2, 3.3.1) the scan compares disk and memory under the dataset lock: a write waits."""
    v = tuple(int(x) for x in re.findall(r"\d+", hadoop)[:3])
    return "HDFS_DIRECTORY_SCAN" if v < (3, 2, 2) or v == (3, 3, 0) else None


SCENARIOS = {s.name: s for s in (
    Scenario("control", "none", None, lambda _h: None),
    Scenario("datanode-pause", "sigstop", "lab-dn2", lambda _h: "DATANODE_JVM_PAUSE", before_trigger=True),
    Scenario("namenode-pause", "sigstop", "lab-nn", lambda _h: "NAMENODE_SLOW", before_trigger=True),
    Scenario("lock-held", "dataset-lock", "lab-dn2", _lock_code),
    Scenario("slow-disk", "slow-disk", "lab-dn2", lambda _h: "HDFS_SLOW_DISK"),
    Scenario("slow-pipeline", "slow-pipeline", "lab-dn2", lambda _h: "HDFS_SLOW_PIPELINE"),
    # two TaskManagers, one subtask of each task on each, every state file on one DataNode: only the subtask whose
    # file the NameNode placed on the slow DataNode holds a checkpoint (the truth reads which from the logs)
    Scenario("slow-disk-one-taskmanager", "slow-disk", "lab-dn2", lambda _h: "HDFS_SLOW_DISK", taskmanagers=2,
             replication=1),
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
    # the same growth with the checkpoint timeout set in the job's code and not in Flink's configuration: no log line
    # shows it (the early warning judges the rise against the checkpoints' spacing; the REST API shows the timeout)
    Scenario("state-growth-timeout-in-code", "state-growth", None, lambda _h: "FLINK_STATE_GROWTH",
             job_args=("--grow", str(GROW_BYTES), "--checkpoint-timeout-ms", "10000"), warns=True,
             flink_conf=(("execution.checkpointing.timeout", None),)),
    # the same growth with a one-second storage hiccup on one DataNode near the end of each checkpoint once they take
    # most of the timeout: the growth is the cause, the hiccup only tips a checkpoint over
    Scenario("state-growth-hiccup", "state-growth-hiccup", "lab-dn2", lambda _h: "FLINK_STATE_GROWTH",
             job_args=("--grow", str(GROW_BYTES)), warns=True),
    Scenario("backpressure", "backpressure", None, lambda _h: "FLINK_BACKPRESSURE", job_args=("--slow-ms", "5"),
             traces=True),
    # the stopped TaskManager answers no heartbeat: after 15 s the JobManager lets it go and fails its tasks, which
    # aborts the checkpoint (its own timeout, 60 s here, would come later, as Flink's 10 min default does)
    Scenario("taskmanager-lost", "sigstop", "lab-tm", lambda _h: "FLINK_TASKMANAGER_LOST",
             flink_conf=(("heartbeat.timeout", 15000), ("heartbeat.interval", 2000),
                         ("execution.checkpointing.timeout", "60s"))),
    # the job writes to Kafka exactly once and tolerates failed checkpoints (no restart on one). Safe mode for 75 s:
    # every checkpoint fails at its trigger, before a barrier reaches the sink, so the transaction the writer opened at
    # the last completed checkpoint stays open, outlives its 30 s timeout, the broker aborts it and the writer's next
    # send is fenced (the job restarts from that checkpoint); the control has the same failures and a 10 min timeout
    Scenario("kafka-sink-timeout", "safe-mode", "lab-nn", lambda _h: "NAMENODE_SAFE_MODE",
             transaction_timeout_ms=30_000, fault_seconds=75.0, flink_conf=KAFKA_FLINK),
    Scenario("kafka-sink-control", "safe-mode", "lab-nn", lambda _h: "NAMENODE_SAFE_MODE",
             transaction_timeout_ms=600_000, fault_seconds=75.0, flink_conf=KAFKA_FLINK),
    # a slow disk for 75 s: each checkpoint's barrier passes the sink (its transaction is pre-committed, a new one
    # opened) and the upload expires, so the oldest pre-committed transaction outlives its 30 s timeout; the first
    # checkpoint to complete afterwards cannot commit it (its records are lost); the control: a 10 min timeout
    Scenario("kafka-sink-loss", "slow-disk", "lab-dn2", lambda _h: "HDFS_SLOW_DISK",
             transaction_timeout_ms=30_000, fault_seconds=75.0, flink_conf=KAFKA_FLINK),
    Scenario("kafka-sink-loss-control", "slow-disk", "lab-dn2", lambda _h: "HDFS_SLOW_DISK",
             transaction_timeout_ms=600_000, fault_seconds=75.0, flink_conf=KAFKA_FLINK),
    Scenario("scanner-differences", "block-files-removed", "lab-dn3", lambda _h: None, retain_checkpoints=True),
    Scenario("directory-scan", "directory-scan", "lab-dn2", _scan_code, scan_host="lab-dn2"),
    Scenario("directory-scan-harmless", "sigstop", "lab-dn1", lambda _h: "DATANODE_JVM_PAUSE", scan_host="lab-dn2",
             scan_outside_writes=True),
)}



def hadoop_line(hadoop: str) -> tuple[int, int]:
    major, minor = (int(x) for x in re.findall(r"\d+", hadoop)[:2])
    return major, minor


flink_line = hadoop_line
"""A Flink version's line (major, minor): the same reading."""


def default_scenarios(hadoop: str) -> list[str]:
    """What runs when no scenario is named: not the directory-scan ones (minutes of replica fabrication each), nor the
    Kafka-sink ones (a broker on a fixed port), nor those this Hadoop line's daemons or this machine cannot take."""
    return [n for n, s in SCENARIOS.items()
            if not s.scan_host and s.transaction_timeout_ms is None and not why_not(s, hadoop)]


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


def truth(scenario: Scenario, hadoop: str, flink: str, cluster: Cluster, start: float, end: float,
          failed: list[dict[str, object]], attempts: list[dict[str, str]],
          jobs: JobLog | None = None) -> dict[str, object]:
    target = next((p for p in cluster.procs if p.host == scenario.target), None)
    code = scenario.expected(hadoop)
    # a cause of the job's own (its state) names no host, whatever host the fault touched on the way
    hosts = [scenario.target] if scenario.target and not str(code).startswith("FLINK_STATE") else []
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
        **({"slow_writers": slow_writers(cluster, failed, target.addr)}
           if scenario.taskmanagers > 1 and target is not None and target.addr else {}),
        **({"checkpoint_spans": cluster.jars.flink_traces_libs is not None}
           if scenario.traces or cluster.jars.span_detail else {}),
        **({"span_detail_level": SPAN_DETAIL} if cluster.jars.span_detail and cluster.jars.flink_traces_libs else {}),
        **({"event_reporter": "slf4j"} if cluster.jars.span_detail and cluster.jars.event_reporter else {}),
    }


def _risk_truth(failed: list[dict[str, object]], jobs: JobLog) -> dict[str, object]:
    """What an early warning must meet: raised before the first failure, its predicted expiry within one trigger
    spacing of that failure."""
    first = min(failed, key=lambda f: str(f["at"])) if failed else None
    spacing = jobs.trigger_spacing_ms(str(first["job_id"]), int(str(first["checkpoint_id"]))) if first else None
    return {"expected": True, "first_failure": first["at"] if first else None, "trigger_spacing_ms": spacing}


_ALLOCATE = re.compile(r"allocate (blk_\d+)_\d+, replicas=(.*) for /flink/checkpoints/([0-9a-f]{32})/chk-(\d+)/(?!_metadata)")


def slow_writers(cluster: Cluster, failed: list[dict[str, object]], addr: str) -> dict[str, list[str]]:
    """Each failed checkpoint → the TaskManagers (file-name hosts) whose HDFS client wrote a state file of it to the
    faulted DataNode: the NameNode's log places the file's block, the TaskManager's own client names that block."""
    blocks: dict[str, set[str]] = {}
    wanted = {(str(f["job_id"]), int(str(f["checkpoint_id"]))) for f in failed}
    for line in cluster.namenode().log.read_text(errors="replace").splitlines():
        m = _ALLOCATE.search(line)
        if m and addr in m.group(2) and (m.group(3), int(m.group(4))) in wanted:
            blocks.setdefault(m.group(4), set()).add(m.group(1) + "_")
    tms = [p for p in cluster.procs if p.name.startswith("taskmanager")]
    out: dict[str, list[str]] = {}
    for chk, ids in sorted(blocks.items()):
        out[chk] = sorted(tm.host for tm in tms if any(b in tm.log.read_text(errors="replace") for b in ids))
    return out
