"""A simulated Flink-on-HDFS cluster over a stretch of time: healthy traffic plus the incidents a scenario injects.

Everything is derived from one seeded generator, so the same scenario, seed and scale give the same bytes.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from correlator.core.explain.knowledge import datanode_traits
from correlator.simulate.flink import JobManagerLog, TaskManagerLog
from correlator.simulate.hdfs import SCANNER_FRAMES, DataNodeLog, NameNodeLog, full_block
from correlator.simulate.world import Ids, LogSet, Node, storage_id

T_2020 = 1_577_955_600_000  # 2020-01-02 09:00:00 UTC
JOB = "1a3bc71ac57f33961637adf340e9c28f"
JOB_NAME = "analytics_standarddata_weapp_share"
TASK = "Source: analytics_standarddata_weapp_share-druid -> Map"
CHECKPOINT_ROOT = "/saas/app/flink/checkpoints"
DN_IP_SUFFIX = {"dn01": 45, "dn02": 42, "dn03": 43, "dn04": 44, "dn05": 46, "dn06": 47}
OTHER_CLIENTS = ("10.20.31.17", "10.20.31.18", "10.20.31.25")
NOISE_PATHS = ("/user/etl/warehouse/ods_events/dt={day}/part-{n:05d}.parquet", "/hbase/WALs/rs{k}.example.com,16020,"
               "1577930000000/rs{k}.example.com%2C16020%2C1577930000000.{n}", "/tmp/logs/spark/app-{n}.inprogress")


@dataclass(slots=True)
class Spec:
    flink: str = "1.7.1"
    hadoop: str = "3.1.0"
    client: str = "3.1.0"
    start_ms: int = T_2020
    minutes: int = 10
    noise_per_s: float = 0.05
    """Background HDFS block writes per second (times ``--scale``)."""
    interval_ms: int = 30_000
    timeout_ms: int = 10_000
    jobs: tuple[tuple[str, str], ...] = ((JOB, JOB_NAME),)
    datanodes: tuple[str, ...] = ("dn01", "dn02", "dn03", "dn04", "dn05")
    skew_ms: dict[str, int] = field(default_factory=dict)
    with_datanodes: bool = True
    with_namenode: bool = True
    tm_gc_log: bool = False
    first_chk: int = 51


@dataclass(slots=True)
class Failure:
    """One checkpoint that will fail: when, how long its state write takes, what Flink does about it."""

    job: str
    at_ms: int
    write_ms: int
    outcome: str
    """``fail`` (1.7/1.8 task failure), ``late`` (late ack), ``cancel`` (1.14.5+ failover), ``decline``, ``lost`` (the
    TaskManager falls silent and the JobManager loses its heartbeat ``write_ms`` after the trigger)."""
    pipeline: tuple[str, ...] = ("dn02", "dn03", "dn04")
    error: str = ""


class Cluster:
    def __init__(self, spec: Spec, seed: int = 0, scale: int = 1) -> None:
        self.spec = spec
        self.scale = max(1, scale)
        self.rng = random.Random(seed)
        self.ids = Ids(self.rng)
        self.logs = LogSet()
        self.end_ms = spec.start_ms + spec.minutes * 60_000
        self.failures: list[Failure] = []
        self.stalls: dict[str, list[tuple[int, int]]] = {}
        self.paused: dict[str, list[tuple[int, int]]] = {}
        """Stopped JVMs log nothing while stopped: their ``Receiving`` lines come only after they resume."""
        self.slow: dict[str, list[tuple[int, int]]] = {}
        self.first_scan: dict[str, int] = {}
        self.scan_interval: dict[str, int] = {}
        """A DataNode's logged scanner interval where it is not the 6 h default (runs are ``first + k·interval``)."""
        self.quiet: list[tuple[int, int]] = []
        self.tm_pauses: list[tuple[int, int]] = []
        f, h = spec.flink, spec.hadoop
        self.jm_node = Node("jm01.example.com", "10.20.30.11", "jobmanager",
                            "flink-flink-standalonesession-0-jm01.example.com.log")
        self.tm_node = Node("tm01.example.com", "10.20.30.41", "taskmanager",
                            "flink-flink-taskexecutor-0-tm01.example.com.log", spec.skew_ms.get("tm01", 0))
        self.jm = JobManagerLog(self.jm_node, self.logs, f, spec.client)
        self.tm = TaskManagerLog(self.tm_node, self.logs, f, spec.client)
        self.dn_nodes: dict[str, Node] = {}
        self.dn: dict[str, DataNodeLog] = {}
        for name in spec.datanodes:
            node = Node(f"{name}.example.com", f"10.20.30.{DN_IP_SUFFIX[name]}", "datanode",
                        f"hadoop-hdfs-datanode-{name}.example.com.log", spec.skew_ms.get(name, 0),
                        storage_id(self.rng), self.ids.uuid())
            self.dn_nodes[name] = node
            self.dn[name] = DataNodeLog(node, self.logs, h)
        self.nn_node = Node("nn01.example.com", "10.20.30.40", "namenode", "hadoop-hdfs-namenode-nn01.example.com.log")
        self.nn = NameNodeLog(self.nn_node, self.logs, h)

    # --- incidents ----------------------------------------------------------------------------------------------

    def fail(self, failure: Failure) -> None:
        self.failures.append(failure)
        self.quiet.append((failure.at_ms - 60_000, failure.at_ms + failure.write_ms + 60_000))

    def scanner(self, dn: str, start_ms: int, held_ms: int, diffs: int = 1_200) -> None:
        """A DirectoryScanner cycle on ``dn`` holding the dataset lock for ``held_ms`` from ``start_ms``."""
        end = start_ms + held_ms
        self.stalls.setdefault(dn, []).append((start_ms, end))
        self.first_scan.setdefault(dn, start_ms - 400)
        log = self.dn[dn]
        total = 4_213_377 + self.rng.randrange(0, 50_000)
        traits = datanode_traits(log.version_text)
        after = traits is not None and not traits.totals_under_lock
        log.scan_stats(end + 1 if after else end - 1, total, missing_memory=diffs, missing_block=3)
        log.lock_held(end, held_ms, SCANNER_FRAMES)
        t = end + 20
        for k in range(min(diffs, 8)):
            block_id, gs = self.ids.block()
            if k % 3 == 2:
                log.reconcile_removed(t, block_id)
            else:
                log.reconcile_added(t, block_id, gs)
            t += 3 + self.rng.randrange(0, 20)

    def slow_disk(self, dn: str, start_ms: int, end_ms: int) -> None:
        """A failing disk on ``dn``: writes through it crawl, with slow-IO warnings as each one ends."""
        self.slow.setdefault(dn, []).append((start_ms, end_ms))
        t = start_ms
        while t < end_ms:
            d = min(end_ms - t, 3_000 + self.rng.randrange(0, 6_000))
            block_id, _ = self.ids.block()
            self.dn[dn].slow_disk(t + d, d, block_id)
            if self.rng.random() < 0.5:
                self.dn[dn].slow_flush(t + d + 2, max(400, d // 3), block_id)
            t += d + 5

    def slow_pipeline(self, upstream: str, downstream: str, start_ms: int, end_ms: int) -> None:
        self.slow.setdefault(upstream, []).append((start_ms, end_ms))
        t = start_ms
        while t < end_ms:
            d = min(end_ms - t, 4_000 + self.rng.randrange(0, 5_000))
            block_id, _ = self.ids.block()
            self.dn[upstream].slow_mirror(t + d, d, block_id, [self.dn_nodes[downstream]])
            t += d + 7

    def datanode_pause(self, dn: str, end_ms: int, pause_ms: int) -> None:
        self.stalls.setdefault(dn, []).append((end_ms - pause_ms, end_ms))
        self.paused.setdefault(dn, []).append((end_ms - pause_ms, end_ms))
        self.dn[dn].jvm_pause(end_ms, pause_ms, pause_ms - 130)

    def namenode_lock(self, end_ms: int, held_ms: int) -> None:
        self.nn.write_lock(end_ms, held_ms)

    def taskmanager_pause(self, end_ms: int, pause_ms: int) -> None:
        self.tm_pauses.append((end_ms, pause_ms))


def checkpoint_path(job: str, chk: int, ids: Ids) -> str:
    return f"{CHECKPOINT_ROOT}/{job}/chk-{chk}/{ids.uuid()}"


__all__ = ["Cluster", "Failure", "Spec", "checkpoint_path", "full_block"]
