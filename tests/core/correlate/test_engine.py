"""The engine decides each failed checkpoint once, on event time, and names the seed's root cause."""

from __future__ import annotations

import random

from correlator.core.correlate.engine import Engine, EngineConfig
from correlator.core.events import BlockWrite, DatasetLockHeld, Event, JvmPause, SlowIo, SourceProgress
from correlator.core.explain.verdict import CoverageReason, Verdict, verdict_to_dict
from tests.core.correlate.factory import T0, ev, failure, noise, read_too, scanner, seed, with_event


def run(events, config: EngineConfig = EngineConfig()) -> list[Verdict]:
    engine = Engine(config)
    out: list[Verdict] = []
    for e in events:
        out += engine.feed(e)
    return out + engine.finish()


def test_a_case_reads_its_own_horizon_of_evidence_whatever_else_is_held(monkeypatch) -> None:
    """Offline every case is decided at the end with all evidence still held; a judge reads only what streaming is
    sure to keep for its case (``retention_ms`` before its first event on), so both read the same and a day of logs
    is not read again by each of its failures."""
    import correlator.core.correlate.engine as engine_module

    seen: list[tuple[Event, ...]] = []
    real = engine_module.decide
    monkeypatch.setattr(engine_module, "decide", lambda ctx, rec=None: (seen.append(ctx.evidence), real(ctx, rec))[1])
    config = EngineConfig()
    old = ev(SlowIo, T0 - 3 * config.retention_ms, "dn02.example.com", "datanode", kind="disk_write",
             duration_ms=900)
    recent = ev(SlowIo, T0 - config.retention_ms // 3, "dn02.example.com", "datanode", kind="disk_write",
                duration_ms=900)
    [v] = run([old, recent, *seed()], config)
    assert v.root_cause.code == "HDFS_DIRECTORY_SCAN"
    assert seen and [(old in evidence, recent in evidence) for evidence in seen] == [(False, True)] * len(seen)


class TestSeedIncident:
    def test_names_the_directory_scanner_on_the_pipeline_datanode(self) -> None:
        """Scanner lock (held in ``DirectoryScanner.scan``) on dn02 across the 37.8 s write → HDFS_DIRECTORY_SCAN on dn02
        with HDFS-15415, the locked compare."""
        [v] = run(seed())
        assert (v.job_id, v.checkpoint_id) == ("1a3bc71ac57f33961637adf340e9c28f", 60)
        assert v.root_cause.code == "HDFS_DIRECTORY_SCAN"
        assert v.root_cause.hosts == ("dn02.example.com",)
        assert v.root_cause.known_issue == "HDFS-15415"
        assert v.failure.kind == "async_materialize"
        assert (v.failure.duration_ms, v.failure.timeout_ms) == (37_829, 10_000)
        assert any(r.setting == "dfs.datanode.directoryscan.interval" for r in v.remediation)

    def test_fixed_hadoop_version_names_no_known_issue(self) -> None:
        """A DataNode banner of 3.3.6 (HDFS-14476 and HDFS-15415 fixed) keeps the code but drops the issue."""
        [v] = run(seed(version="3.3.6"))
        assert v.root_cause.code == "HDFS_DIRECTORY_SCAN"
        assert v.root_cause.known_issue is None

    def test_verdict_id_is_deterministic(self) -> None:
        """Two runs give byte-identical verdict dicts."""
        assert [verdict_to_dict(v) for v in run(seed())] == [verdict_to_dict(v) for v in run(seed())]

    def test_interleaving_of_sources_does_not_change_the_verdict(self) -> None:
        """Each source in its own order, sources shuffled against each other → same verdict."""
        events = seed()
        by_source: dict[tuple[str, str], list] = {}
        for e in events:
            by_source.setdefault((e.host, e.role), []).append(e)
        rng = random.Random(7)
        shuffled = []
        queues = [list(q) for q in by_source.values()]
        while any(queues):
            q = rng.choice([q for q in queues if q])
            shuffled.append(q.pop(0))
        assert [verdict_to_dict(v) for v in run(shuffled)] == [verdict_to_dict(v) for v in run(events)]


class TestEventTime:
    def test_decides_once_sources_pass_the_lookahead(self) -> None:
        """Once warm, with every source logging past failure + lookahead, the verdict comes from feed()."""
        events = with_event(seed(), *[ev(SlowIo, T0 + 390_000, "tm01.example.com", "taskmanager",
                                         kind="disk_write", duration_ms=1)])
        engine = Engine()
        engine.advance(0)
        assert engine.advance(EngineConfig().idle_timeout_ms) == []
        fed = [v for e in events for v in engine.feed(e)]
        assert len(fed) == 1 and engine.finish() == []

    def test_no_decision_before_processing_time_flows(self) -> None:
        """Without any tick (a backlog, or offline) sources may still be unseen: decide only at finish()."""
        events = with_event(seed(), *[ev(SlowIo, T0 + 390_000, "tm01.example.com", "taskmanager",
                                         kind="disk_write", duration_ms=1)])
        engine = Engine()
        assert [v for e in events for v in engine.feed(e)] == []
        assert len(engine.finish()) == 1

    def test_warm_up_waits_one_idle_timeout(self) -> None:
        """The first idle timeout of processing time lets every live source appear before anything is decided."""
        engine = Engine(EngineConfig(idle_timeout_ms=10_000))
        engine.advance(1_000)
        assert [v for e in seed() for v in engine.feed(e)] == []
        assert engine.advance(5_000) == []
        assert len(engine.advance(20_000)) == 1

    def test_a_reloaded_engine_warms_up_again(self) -> None:
        """A snapshot taken before the TaskManager logged knows no such source. Reloaded after a restart, the engine
        reads the backlog source by source, the TaskManager's last. It must not decide on the JobManager and
        DataNodes alone."""
        config = EngineConfig(idle_timeout_ms=10_000)
        events = seed()
        unbroken = Engine(config)
        unbroken.advance(0)
        unbroken.advance(10_000)
        expected = [verdict_to_dict(v) for e in events for v in unbroken.feed(e)] + [
            verdict_to_dict(v) for v in unbroken.finish()]
        before = [e for e in events if e.ts_ms < T0 - 100_000]
        later = [e for e in events if e.ts_ms >= T0 - 100_000]
        first = Engine(config)
        first.advance(0)
        first.advance(10_000)
        assert [v for e in before for v in first.feed(e)] == []
        assert "tm01.example.com" not in {e.host for e in before}
        reloaded = Engine.restore(config, first.snapshot())
        reloaded.restart_warm_up()
        backlog = [e for e in later if e.role != "taskmanager"] + [e for e in later if e.role == "taskmanager"]
        out = [verdict_to_dict(v) for e in backlog for v in reloaded.feed(e)]
        assert out == []
        reloaded.restart_idle(200_000)
        assert reloaded.advance(200_000) == [] and reloaded.advance(205_000) == []
        out += [verdict_to_dict(v) for v in reloaded.advance(210_000)] + [
            verdict_to_dict(v) for v in reloaded.finish()]
        assert len(expected) == 1 and out == expected

    def test_idle_source_stops_holding_back(self) -> None:
        """A silent source is ignored after the idle timeout of processing time."""
        engine = Engine(EngineConfig(idle_timeout_ms=1_000))
        engine.advance(0)
        out = [v for e in seed() for v in engine.feed(e)]
        assert out == []
        assert len(engine.advance(5_000)) == 1

    def test_late_evidence_is_counted(self) -> None:
        """Evidence inside a decided case's window arriving afterwards is counted, not silently dropped."""
        engine = Engine()
        for e in seed():
            engine.feed(e)
        engine.finish()
        engine.feed(ev(JvmPause, T0 + 5_000, "dn03.example.com", "datanode", pause_ms=3_000, gc=True))
        assert engine.stats["late_evidence"] == 1
        assert engine.stats["decided"] == 1


class TestCodes:
    def base(self) -> list:
        return noise(T0 - 600_000, T0 + 400_000) + failure() + read_too(T0 - 600_000, T0 + 400_000)

    def test_datanode_gc_pause(self) -> None:
        """A 30 s GC pause on a pipeline DataNode → DATANODE_JVM_PAUSE."""
        [v] = run(with_event(self.base(), ev(JvmPause, T0 + 31_000, "dn03.example.com", "datanode",
                                               pause_ms=30_000, gc=True)))
        assert (v.root_cause.code, v.root_cause.hosts) == ("DATANODE_JVM_PAUSE", ("dn03.example.com",))

    def test_gc_pause_explains_a_lock_held(self) -> None:
        """A lock held across a GC pause on the same DataNode is the pause's symptom, not slow disk."""
        [v] = run(with_event(self.base(),
                             ev(JvmPause, T0 + 31_000, "dn03.example.com", "datanode", pause_ms=30_000, gc=True),
                             ev(DatasetLockHeld, T0 + 31_200, "dn03.example.com", "datanode", lock="FsDatasetImpl",
                                held_ms=30_100, holder="FsDatasetImpl.createRbw")))
        assert v.root_cause.code == "DATANODE_JVM_PAUSE"

    def test_scanner_explains_slow_disk_on_the_same_datanode(self) -> None:
        """Causes before symptoms: slow flushes under a scanner-held lock are the scanner's symptom."""
        events = with_event(self.base(), *scanner("dn02.example.com", T0 + 37_600, 37_000),
                            ev(SlowIo, T0 + 37_700, "dn02.example.com", "datanode", kind="flush_or_sync",
                               duration_ms=36_000))
        [v] = run(events)
        assert v.root_cause.code == "HDFS_DIRECTORY_SCAN"
        assert all(a.confidence < v.root_cause.confidence for a in v.alternatives)

    def test_taskmanager_pause(self) -> None:
        """A TaskManager GC pause across the write → TASKMANAGER_JVM_PAUSE."""
        [v] = run(with_event(self.base(), ev(JvmPause, T0 + 36_000, "tm01.example.com", "taskmanager",
                                               pause_ms=35_000, gc=True)))
        assert v.root_cause.code == "TASKMANAGER_JVM_PAUSE"

    def test_quiet_covered_logs_are_unexplained(self) -> None:
        """Every DataNode of the write and the NameNode have logs covering the write and show nothing → UNEXPLAINED,
        naming the DataNodes looked at and no cause."""
        [v] = run(self.base())
        assert v.root_cause.code == "UNEXPLAINED"
        assert v.root_cause.hosts == ("dn02.example.com", "dn03.example.com", "dn04.example.com")
        assert v.root_cause.explanation.startswith("Looked at the logs of DataNodes dn02.example.com")

    def test_nothing_abnormal_needs_the_namenode_read(self) -> None:
        """The same quiet DataNodes without the NameNode's log: not "nothing abnormal" but which log is missing."""
        [v] = run([e for e in self.base() if e.role != "namenode"])
        assert v.root_cause.code == "INSUFFICIENT_DATA"
        assert "The input holds no NameNode log." in v.root_cause.explanation

    def test_nothing_abnormal_needs_a_taskmanager_log_read(self) -> None:
        """The same quiet HDFS logs without any TaskManager's: the Flink side's stalls show only there, so not
        "nothing abnormal" but the missing TaskManager log, and no culprit."""
        [v] = run([e for e in self.base() if e.role != "taskmanager"])
        assert v.root_cause.code == "INSUFFICIENT_DATA" and v.root_cause.hosts == ()
        assert "The input holds no TaskManager log." in v.root_cause.explanation
        assert any(m.reason == CoverageReason.NO_TASKMANAGER_LOG for m in v.missing)

    def test_missing_datanode_logs_are_insufficient_data(self) -> None:
        """Only Flink logs → INSUFFICIENT_DATA, the pipeline DataNodes listed as missing."""
        [v] = run(failure())
        assert v.root_cause.code == "INSUFFICIENT_DATA"
        assert {m.host for m in v.missing if m.role == "datanode"} >= {"10.20.30.42:9866"}

    def test_scanner_far_from_the_failure_is_not_blamed(self) -> None:
        """A scan 20 minutes earlier on the same DataNode explains nothing."""
        [v] = run(with_event(self.base(), *scanner("dn02.example.com", T0 - 1_200_000, 37_000)))
        assert v.root_cause.code == "UNEXPLAINED"

    def test_recurrence_links_failures_of_one_job(self) -> None:
        """Three scanner failures 15 min apart → the third says count 3, interval 15 min."""
        events = noise(T0 - 600_000, T0 + 2_400_000)
        for k in range(3):
            at = T0 + k * 900_000
            events += failure(chk=60 + k, at=at) + scanner("dn02.example.com", at + 37_600, 37_000)
        verdicts = run(sorted(events, key=lambda e: e.ts_ms))
        assert [v.root_cause.code for v in verdicts] == ["HDFS_DIRECTORY_SCAN"] * 3
        rec = verdicts[-1].recurrence
        assert rec is not None and (rec.count, rec.typical_interval_ms) == (3, 900_000)


class TestNoise:
    def test_declines_caused_by_a_restart_make_no_verdict(self) -> None:
        """'Task … was not running' declines during a restart are consequences, not failures to explain."""
        from correlator.core.events import CheckpointDeclined

        events = noise(T0 - 60_000, T0 + 300_000) + [
            ev(CheckpointDeclined, T0 + 1_000, "jm01.example.com", "jobmanager",
               job_id="1a3bc71ac57f33961637adf340e9c28f", checkpoint_id=61, reason="org.apache.flink.runtime.checkpoint.decline."
               "CheckpointDeclineTaskNotReadyException: Task Source (1/1) was not running")]
        assert run(sorted(events, key=lambda e: e.ts_ms)) == []


class TestBacklogSkew:
    def test_evidence_waits_for_a_lagging_source(self) -> None:
        """After an outage the HDFS partitions may replay 45 minutes ahead of the Flink one: the scanner's lock
        report must still be there when the checkpoint's failure finally arrives."""
        events = sorted(seed() + [e for e in noise(T0 + 400_000, T0 + 2_700_000) if e.role == "datanode"],
                        key=lambda e: e.ts_ms)
        hdfs = [e for e in events if e.role in ("datanode", "namenode")]
        flink = [e for e in events if e.role not in ("datanode", "namenode")]
        before = [e for e in flink if e.ts_ms < T0 - 60_000]
        [v] = run(before + hdfs + flink[len(before):], EngineConfig(evict_every=1))
        assert (v.checkpoint_id, v.root_cause.code) == (60, "HDFS_DIRECTORY_SCAN")

    def test_evidence_waits_for_a_flink_topic_read_later(self) -> None:
        """The HDFS topic may be read entirely before the first Flink line arrives at all."""
        events = sorted(seed() + [e for e in noise(T0 + 400_000, T0 + 2_700_000) if e.role == "datanode"],
                        key=lambda e: e.ts_ms)
        hdfs = [e for e in events if e.role in ("datanode", "namenode")]
        flink = [e for e in events if e.role not in ("datanode", "namenode")]
        [v] = run(hdfs + flink, EngineConfig(evict_every=1))
        assert (v.checkpoint_id, v.root_cause.code) == (60, "HDFS_DIRECTORY_SCAN")


class TestRevisions:
    """Late evidence revises a decided verdict under the same id, with a revision number and the reason."""

    @staticmethod
    def _late_dn02() -> tuple[list, list]:
        events = sorted(seed(), key=lambda e: e.ts_ms)
        return ([e for e in events if e.host != "dn02.example.com"],
                [e for e in events if e.host == "dn02.example.com"])

    @staticmethod
    def _decided_without_dn02(engine: Engine, early: list) -> list[Verdict]:
        """A worker's run: processing time flows, the TaskManager falls silent after its failure and goes idle, and
        the case is decided before dn02's shipper has sent a line."""
        engine.advance(0)
        out = [v for e in early for v in engine.feed(e)]
        return out + engine.advance(EngineConfig().idle_timeout_ms + 1)

    def test_a_datanode_shipped_late_revises_the_verdict(self) -> None:
        early, late = self._late_dn02()
        engine = Engine()
        first = self._decided_without_dn02(engine, early)
        # the DataNodes it has (dn03, dn04) show nothing, and the client's slow ack waited on the pipeline they are
        # in with dn02, whose log is not there yet: dn02 (by the address the client gives) is the suspect
        [early_verdict] = first
        assert early_verdict.root_cause.code == "INSUFFICIENT_DATA" and early_verdict.revision == 0
        assert early_verdict.root_cause.hosts == ("10.20.30.42:9866",)
        [suspect] = [m for m in early_verdict.missing if m.pointed_by]
        assert suspect.host == "10.20.30.42:9866" and "slow ack" in suspect.pointed_by
        revised = [v for e in late for v in engine.feed(e)] + engine.finish()
        [v] = revised
        assert v.verdict_id == first[0].verdict_id and v.revision == 1
        assert (v.root_cause.code, v.root_cause.hosts) == ("HDFS_DIRECTORY_SCAN", ("dn02.example.com",))
        assert v.revision_reason and "INSUFFICIENT_DATA" in v.revision_reason and "HDFS_DIRECTORY_SCAN" in v.revision_reason
        assert engine.stats["revised"] == 1
        # the same verdict as when every source was in time, revision aside
        [whole] = run(seed())
        assert verdict_to_dict(v) | {"revision": 0, "revision_reason": None} == verdict_to_dict(whole)

    def test_a_datanode_shipped_after_the_retention_still_revises(self) -> None:
        """The silent DataNode's lines come 50 min of log time later, past the engine's 30 min retention: the case
        that lacked them, and the evidence it read, waited for them (within the hold limit), and the revision equals
        the verdict every source in time gives."""
        early, late = self._late_dn02()
        engine = Engine(EngineConfig(evict_every=1))
        [first] = self._decided_without_dn02(engine, early)
        assert first.root_cause.code == "INSUFFICIENT_DATA"
        later = sorted([e for e in noise(T0 + 400_000, T0 + 3_400_000) if e.host != "dn02.example.com"]
                       + read_too(T0 + 400_000, T0 + 3_400_000), key=lambda e: e.ts_ms)
        assert [v for e in later for v in engine.feed(e)] == []
        assert later[-1].ts_ms - first.decided_at_ms > EngineConfig().retention_ms  # without the wait: evicted
        revised = [v for e in late for v in engine.feed(e)] + engine.finish()
        [v] = revised
        assert v.verdict_id == first.verdict_id and v.revision == 1
        [whole] = run(seed())
        assert (v.root_cause.code, v.root_cause.hosts) == (whole.root_cause.code, whole.root_cause.hosts)

    def test_a_silent_datanode_that_shipped_nothing_abnormal_revises_the_missing_log(self) -> None:
        """Its lines arrive late and show nothing of their own: the verdict no longer says its log is missing."""
        events = sorted(seed(), key=lambda e: e.ts_ms)
        quiet_dn02 = [e for e in events if e.host == "dn02.example.com" and isinstance(e, BlockWrite)]
        early = sorted([e for e in events if e.host != "dn02.example.com"]
                       + [e for e in read_too(T0 - 600_000, T0 + 400_000) if e.role == "namenode"],
                       key=lambda e: e.ts_ms)
        engine = Engine()
        [first] = self._decided_without_dn02(engine, early)
        assert first.root_cause.code == "INSUFFICIENT_DATA"
        progress = [ev(SourceProgress, t, "dn02.example.com", "datanode") for t in range(T0 - 600_000, T0 + 400_000,
                                                                                          20_000)]
        revised = [v for e in sorted(quiet_dn02 + progress, key=lambda e: e.ts_ms) for v in engine.feed(e)]
        revised += engine.finish()
        [v] = revised
        assert v.revision == 1 and v.root_cause.code != "INSUFFICIENT_DATA"
        assert "dn02.example.com" not in {m.host for m in v.missing}

    def test_late_evidence_that_changes_nothing_publishes_nothing(self) -> None:
        events = sorted(seed(), key=lambda e: e.ts_ms)
        engine = Engine()
        out = [v for e in events for v in engine.feed(e)] + engine.finish()
        assert len(out) == 1
        again = [v for e in events if e.host == "dn02.example.com" and isinstance(e, SlowIo | DatasetLockHeld)
                 for v in engine.feed(e)]
        assert again == [] and engine.stats["revised"] == 0

    def test_a_restored_engine_still_revises(self) -> None:
        early, late = self._late_dn02()
        engine = Engine()
        first = self._decided_without_dn02(engine, early)
        assert len(first) == 1
        restored = Engine.restore(EngineConfig(), engine.snapshot())
        [v] = [v for e in late for v in restored.feed(e)] + restored.finish()
        assert v.verdict_id == first[0].verdict_id and v.revision == 1 and v.root_cause.code == "HDFS_DIRECTORY_SCAN"
