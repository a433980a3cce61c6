"""Named scenarios: each sets up a cluster and the incident(s) it shows, and says which verdicts to expect."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from correlator.simulate.cluster import JOB, Cluster, Failure, Spec

T_2023 = 1_683_187_200_000  # 2023-05-04 08:00:00 UTC
T_2024 = 1_715_328_000_000  # 2024-05-10 08:00:00 UTC
JOB_B = "7e2f0c41d9b84a5c8f3e61a0b2c4d6e8"
MIN = 60_000
FAIL_AT = 5 * MIN + 30_000


@dataclass(frozen=True, slots=True)
class Scenario:
    name: str
    summary: str
    build: Callable[[int, int], Cluster]


def _seed(seed: int, scale: int, spec: Spec | None = None) -> Cluster:
    c = Cluster(spec or Spec(), seed, scale)
    at = c.spec.start_ms + FAIL_AT
    c.scanner("dn02", at + 25, 37_690)
    c.fail(Failure(JOB, at, 37_829, "fail"))
    return c


def seed(seed: int, scale: int) -> Cluster:
    return _seed(seed, scale)


def slow_disk(seed: int, scale: int) -> Cluster:
    c = Cluster(Spec(), seed, scale)
    at = c.spec.start_ms + FAIL_AT
    c.slow_disk("dn03", at - 3_000, at + 16_000)
    c.fail(Failure(JOB, at, 15_210, "late"))
    return c


def slow_pipeline(seed: int, scale: int) -> Cluster:
    c = Cluster(Spec(), seed, scale)
    at = c.spec.start_ms + FAIL_AT
    c.slow_pipeline("dn02", "dn03", at - 2_000, at + 17_000)
    c.fail(Failure(JOB, at, 16_480, "late"))
    return c


def datanode_gc(seed: int, scale: int) -> Cluster:
    c = Cluster(Spec(), seed, scale)
    at = c.spec.start_ms + FAIL_AT
    c.datanode_pause("dn04", at + 31_400, 31_030)
    c.fail(Failure(JOB, at, 31_520, "fail"))
    return c


def namenode_lock(seed: int, scale: int) -> Cluster:
    c = Cluster(Spec(), seed, scale)
    at = c.spec.start_ms + FAIL_AT
    c.namenode_lock(at + 24_600, 24_480)
    c.fail(Failure(JOB, at, 24_800, "late"))
    return c


def taskmanager_gc(seed: int, scale: int) -> Cluster:
    c = Cluster(Spec(tm_gc_log=True), seed, scale)
    at = c.spec.start_ms + FAIL_AT
    c.taskmanager_pause(at + 28_450, 28_123)
    c.fail(Failure(JOB, at, 28_700, "late"))
    return c


def taskmanager_lost(seed: int, scale: int) -> Cluster:
    """The TaskManager falls silent 1.5 s after a trigger and logs nothing (no GC log): 50 s later, Flink's default
    heartbeat timeout, the JobManager lets it go and the checkpoint is aborted. Flink 1.20.1's wording, from its
    sources, not a captured log."""
    c = Cluster(Spec(flink="1.20.1", start_ms=T_2024), seed, scale)
    c.fail(Failure(JOB, c.spec.start_ms + FAIL_AT, 51_500, "lost"))
    return c


def unexplained(seed: int, scale: int) -> Cluster:
    c = Cluster(Spec(), seed, scale)
    c.fail(Failure(JOB, c.spec.start_ms + FAIL_AT, 12_950, "late"))
    return c


def insufficient_data(seed: int, scale: int) -> Cluster:
    c = Cluster(Spec(with_datanodes=False), seed, scale)
    c.fail(Failure(JOB, c.spec.start_ms + FAIL_AT, 37_829, "fail"))
    return c


def scanner_far(seed: int, scale: int) -> Cluster:
    """Negative control: a scan on a pipeline DataNode 8 minutes earlier, one on another DataNode at the time."""
    c = Cluster(Spec(), seed, scale)
    at = c.spec.start_ms + FAIL_AT
    c.scanner("dn02", at - 8 * MIN, 21_300)
    c.scanner("dn05", at + 1_000, 20_200)
    c.fail(Failure(JOB, at, 33_100, "fail"))
    return c


def clock_skew(seed: int, scale: int) -> Cluster:
    return _seed(seed, scale, Spec(skew_ms={"dn02": 1_700, "tm01": -900, "dn03": -1_200}))


def recurring(seed: int, scale: int) -> Cluster:
    """The seed's pattern: a scan on some pipeline DataNode every 10-30 minutes, each failing one checkpoint."""
    c = Cluster(Spec(minutes=66, noise_per_s=0.015, interval_ms=60_000), seed, scale)
    at = c.spec.start_ms + 4 * MIN + 30_000
    runs: dict[str, list[int]] = {}
    for k, (dn, gap) in enumerate((("dn02", 0), ("dn04", 17), ("dn03", 12), ("dn02", 26))):
        at += gap * MIN + (k * 7_000)
        pipeline = (dn, "dn05", "dn01") if dn != "dn02" else ("dn02", "dn03", "dn04")
        c.scanner(dn, at + 25, 35_000 + 1_000 * k)
        runs.setdefault(dn, []).append(at + 25)
        c.fail(Failure(JOB, at, 35_300 + 1_000 * k, "fail", pipeline=pipeline))
    c.scan_interval["dn02"] = runs["dn02"][1] - runs["dn02"][0]  # its two runs are one logged interval apart
    return c


def flink_115(seed: int, scale: int) -> Cluster:
    c = Cluster(Spec(flink="1.15.3", client="3.1.0", start_ms=T_2023), seed, scale)
    at = c.spec.start_ms + FAIL_AT
    c.scanner("dn02", at + 25, 37_690)
    c.fail(Failure(JOB, at, 37_829, "cancel"))
    return c


def flink_2(seed: int, scale: int) -> Cluster:
    c = Cluster(Spec(flink="2.0.0", client="3.1.0", start_ms=T_2024), seed, scale)
    at = c.spec.start_ms + FAIL_AT
    c.scanner("dn03", at + 25, 34_120)
    c.fail(Failure(JOB, at, 34_300, "cancel"))
    return c


def hadoop_33(seed: int, scale: int) -> Cluster:
    c = Cluster(Spec(flink="1.15.3", hadoop="3.3.0", client="3.3.0", start_ms=T_2023), seed, scale)
    at = c.spec.start_ms + FAIL_AT
    c.scanner("dn02", at + 25, 36_200)
    c.dn["dn02"].lock_wait(at + 36_260, 35_990, suppressed=4)
    c.fail(Failure(JOB, at, 36_400, "cancel"))
    return c


def hadoop_27(seed: int, scale: int) -> Cluster:
    """Hadoop 2.7.7 prints no lock warnings and its client no pipeline: totals, reconcile and stalled writes only."""
    return _seed(seed, scale, Spec(hadoop="2.7.7", client="2.7.5"))


def hadoop_34(seed: int, scale: int) -> Cluster:
    c = Cluster(Spec(flink="1.18.1", hadoop="3.4.0", client="3.4.0", start_ms=T_2024), seed, scale)
    at = c.spec.start_ms + FAIL_AT
    c.slow_disk("dn04", at - 2_000, at + 18_000)
    c.fail(Failure(JOB, at, 17_300, "cancel"))
    return c


def two_jobs(seed: int, scale: int) -> Cluster:
    c = Cluster(Spec(jobs=((JOB, "analytics_standarddata_weapp_share"), (JOB_B, "events_raw_to_es")), minutes=14),
                seed, scale)
    at = c.spec.start_ms + 4 * MIN + 30_000
    c.scanner("dn02", at + 25, 37_100)
    c.fail(Failure(JOB, at, 37_300, "fail"))
    at_b = at + 6 * MIN + 7_000
    c.datanode_pause("dn05", at_b + 30_100, 29_800)
    c.fail(Failure(JOB_B, at_b, 30_300, "fail", pipeline=("dn05", "dn01", "dn03")))
    return c


def envelopes(seed: int, scale: int) -> Cluster:
    return _seed(seed, scale)


def task_error(seed: int, scale: int) -> Cluster:
    c = Cluster(Spec(flink="1.15.3", start_ms=T_2023), seed, scale)
    c.fail(Failure(JOB, c.spec.start_ms + FAIL_AT, 0, "decline",
                   error="java.lang.NullPointerException: Cannot read field \"sessionId\" because \"event\" is null"))
    return c


def no_failures(seed: int, scale: int) -> Cluster:
    return Cluster(Spec(), seed, scale)


SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        Scenario("seed", "the incident: Flink 1.7.1 + Hadoop 3.1.0, DirectoryScanner on dn02 (HDFS-14476)", seed),
        Scenario("slow-disk", "slow disk writes on a pipeline DataNode", slow_disk),
        Scenario("slow-pipeline", "slow mirror writes between two pipeline DataNodes", slow_pipeline),
        Scenario("datanode-gc", "a 31 s GC pause on a pipeline DataNode", datanode_gc),
        Scenario("namenode-lock", "the NameNode write lock held 24 s while the checkpoint file closes", namenode_lock),
        Scenario("taskmanager-gc", "a 28 s full GC in the TaskManager (JDK 11 GC log)", taskmanager_gc),
        Scenario("taskmanager-lost", "the TaskManager falls silent; the JobManager loses its heartbeat (Flink 1.20.1)",
                 taskmanager_lost),
        Scenario("unexplained", "a slow checkpoint while every HDFS log stays quiet", unexplained),
        Scenario("insufficient-data", "Flink and NameNode logs only, no DataNode logs", insufficient_data),
        Scenario("scanner-far", "negative control: scans far in time or off the pipeline", scanner_far),
        Scenario("clock-skew", "the seed with host clocks up to 1.7 s apart", clock_skew),
        Scenario("recurring", "scans on pipeline DataNodes failing a checkpoint every 10-30 minutes", recurring),
        Scenario("flink-1.15", "Flink 1.15.3 wording: expiry, failure manager, global failover", flink_115),
        Scenario("flink-2", "Flink 2.0.0 wording with a scan on dn03", flink_2),
        Scenario("hadoop-3.3", "Hadoop 3.3.0: compare under the write lock (HDFS-15415), lock waits", hadoop_33),
        Scenario("hadoop-2.7", "Hadoop 2.7.7: no lock warnings, no client pipeline; the scan still shows", hadoop_27),
        Scenario("hadoop-3.4", "Hadoop 3.4.0 wording: a slow disk, no lock warnings", hadoop_34),
        Scenario("two-jobs", "two jobs, two failures with different causes", two_jobs),
        Scenario("envelopes", "the seed shipped as Filebeat (Flink) and Vector (Hadoop) JSON lines", envelopes),
        Scenario("task-error", "an operator's snapshot throws: the checkpoint fails inside Flink", task_error),
        Scenario("no-failures", "a healthy hour: no verdicts", no_failures),
    )
}
