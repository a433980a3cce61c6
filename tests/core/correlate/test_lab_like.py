"""Verdicts on what real HDFS 3.3.6 / 3.4 and Flink 1.20 write: scanner only with scanner evidence, a lock held by
someone else, a scanner that waited, allocation-derived pipelines on one IP, user-code failures, coverage."""

from __future__ import annotations

from correlator.core.events import (
    BlockAllocated,
    BlockWrite,
    CheckpointDeclined,
    DaemonStart,
    DatasetLockHeld,
    DatasetLockWait,
    DirectoryScanStats,
    DnWriteError,
    Event,
    HdfsClientError,
    SourceProgress,
)
from tests.core.correlate.factory import BP, JOB, T0, ev, failure, noise, with_event
from tests.core.correlate.test_engine import run

LAB = {"dn1": "127.0.0.1:9866", "dn2": "127.0.0.1:9867", "dn3": "127.0.0.1:9868"}
CHK = f"/flink/checkpoints/{JOB}/chk-60/0f3b"
BLK = "blk_1073741901_1077"


def lab(version: str = "3.3.6", order: tuple[str, ...] = ("dn1", "dn2", "dn3")) -> list[Event]:
    """Three DataNodes on 127.0.0.1 told apart by port, each telling its address by its own lines."""
    out: list[Event] = [ev(DaemonStart, T0 - 600_000, h, "datanode", component="DataNode", version=version)
                        for h in LAB]
    for i, t in enumerate(range(T0 - 300_000, T0 - 1_000, 20_000)):
        for h, addr in LAB.items():
            blk = f"{BP}:blk_{1073700000 + i * 10 + int(h[-1])}_1"
            out.append(ev(BlockWrite, t, h, "datanode", block=blk, src="127.0.0.1:50000", dest=addr))
            out.append(ev(BlockWrite, t + 20, h, "datanode", block=blk, src="127.0.0.1:50000", dest=addr,
                          duration_ms=2, phase="finished"))
    for t in range(T0 - 300_000, T0 + 200_000, 10_000):
        out += [ev(SourceProgress, t, h, "datanode") for h in LAB] + [ev(SourceProgress, t, "nn", "namenode")]
    out.append(ev(BlockAllocated, T0 + 40, "nn", "namenode", path=CHK, block=BLK,
                  replicas=tuple(LAB[h] for h in order)))
    return out


def flink(write_ms: int = 30_500) -> list[Event]:
    return failure(write_ms=write_ms, with_client=False)


class TestScannerOnlyWithScannerEvidence:
    def test_totals_with_no_differences_are_never_a_cause(self) -> None:
        stats = ev(DirectoryScanStats, T0 + 5_000, "dn2", "datanode", block_pool=BP, total_blocks=3, missing_meta=0,
                   missing_block=0, missing_memory=0, mismatched=0)
        for version in ("3.3.6", "2.7.7", "3.4.1"):
            [v] = run(with_event(lab(version) + flink(), stats))
            assert v.root_cause.code != "HDFS_DIRECTORY_SCAN", version

    def test_differences_without_a_lock_report_on_336_are_not_the_scanner(self) -> None:
        """3.3.6 reports long lock holds; totals with differences and no scanner lock report explain nothing."""
        stats = ev(DirectoryScanStats, T0 + 5_000, "dn2", "datanode", block_pool=BP, total_blocks=30,
                   missing_meta=0, missing_block=4, missing_memory=0, mismatched=0)
        [v] = run(with_event(lab("3.3.6") + flink(), stats))
        assert v.root_cause.code != "HDFS_DIRECTORY_SCAN"

    def test_differences_on_27_are_the_scanner_and_say_why_from_the_version(self) -> None:
        stats = ev(DirectoryScanStats, T0 + 20_000, "dn2", "datanode", block_pool=BP, total_blocks=4_000_000,
                   missing_meta=0, missing_block=3, missing_memory=1200, mismatched=0)
        [v] = run(with_event(lab("2.7.7") + flink(), stats))
        assert (v.root_cause.code, v.root_cause.hosts) == ("HDFS_DIRECTORY_SCAN", ("dn2",))
        assert "Hadoop 2.7.7 logs no dataset-lock hold times" in v.root_cause.explanation
        assert "while it still holds the lock" in v.root_cause.explanation


class TestLockHeldBySomeoneElse:
    def lock(self) -> list[Event]:
        return [
            ev(DatasetLockHeld, T0 + 30_100, "dn2", "datanode", lock="FsDatasetRWLock", held_ms=30_004,
               holder="LabLockHolder.holdDatasetLock", stack=("LabLockHolder.holdDatasetLock", "LabLockHolder.main")),
            ev(DatasetLockWait, T0 + 30_120, "dn2", "datanode", lock="FsDatasetRWLock", wait_ms=25_000,
               waiter="DirectoryScanner.scan", stack=("DirectoryScanner.scan", "DirectoryScanner.reconcile")),
            ev(BlockWrite, T0 + 60, "dn1", "datanode", block=f"{BP}:{BLK}", src="127.0.0.1:51000", dest=LAB["dn1"]),
            ev(BlockWrite, T0 + 70, "dn2", "datanode", block=f"{BP}:{BLK}", src="127.0.0.1:51001", dest=LAB["dn2"]),
        ]

    def test_holder_named_and_scanner_a_victim(self) -> None:
        [v] = run(with_event(lab("3.3.6") + flink(), *self.lock()))
        assert (v.root_cause.code, v.root_cause.hosts) == ("DATANODE_LOCK_HELD", ("dn2",))
        assert "LabLockHolder.holdDatasetLock" in v.root_cause.title
        assert "LabLockHolder.holdDatasetLock" in v.root_cause.explanation
        assert "victim" in v.root_cause.explanation
        assert "HDFS_DIRECTORY_SCAN" not in {a.code for a in v.alternatives}

    def test_on_34_the_datanode_that_stopped_is_slow_pipeline_and_says_the_lock_is_invisible(self) -> None:
        events = [e for e in self.lock() if isinstance(e, BlockWrite)]
        events.append(ev(HdfsClientError, T0 + 9_000, "tm01.example.com", "taskmanager",
                         kind="create_block_output_stream", block=BLK, datanode=LAB["dn1"],
                         exception="java.net.SocketTimeoutException: 65000 millis timeout … remote=/127.0.0.1:9866]"))
        events.append(ev(DnWriteError, T0 + 28_000, "dn2", "datanode", kind="slow_nn_commands", duration_ms=23_976))
        [v] = run(with_event(lab("3.4.1") + flink(), *events))
        assert (v.root_cause.code, v.root_cause.hosts) == ("HDFS_SLOW_PIPELINE", ("dn2",))
        assert "cannot be seen in this version" in v.root_cause.explanation
        assert "dn1" in v.root_cause.explanation  # the timeout's remote= is named, and why it is not the cause


class TestPipelineAndCoverage:
    def test_allocation_names_the_pipeline_by_port_and_a_missing_datanode_log(self) -> None:
        events = [e for e in lab() if e.host != "dn3"]
        [v] = run(events + flink())
        missing = {(m.host, m.why) for m in v.missing}
        assert ("127.0.0.1:9868", "no log from this DataNode of the write pipeline") in missing
        assert not {m.host for m in v.missing} & {"dn1", "dn2", "nn"}

    def test_logs_spanning_the_write_are_never_missing(self) -> None:
        [v] = run(lab() + flink() + noise(T0 - 100_000, T0 + 100_000)[:0])
        assert {(c.host, c.role) for c in v.covered} >= {("dn1", "datanode"), ("dn2", "datanode"),
                                                        ("dn3", "datanode"), ("nn", "namenode")}
        assert not [m for m in v.missing if m.role in ("datanode", "namenode")]


class TestUserCode:
    def test_user_exception_is_flink_task_error_with_the_frame(self) -> None:
        decline = ev(CheckpointDeclined, T0 + 400, "jm01.example.com", "jobmanager", job_id=JOB, checkpoint_id=60,
                     reason="Could not complete snapshot 60 for operator Source (1/1)#0. Failure reason: Checkpoint "
                            "was declined.",
                     user_exception="java.lang.IllegalStateException: snapshot failure injected",
                     user_frame="FailingSource.snapshotState(FailingSource.java:58)")
        [v] = run(with_event(lab(), decline))
        assert v.root_cause.code == "FLINK_TASK_ERROR"
        assert "IllegalStateException" in v.root_cause.title and "FailingSource.snapshotState" in v.root_cause.title
        assert "FailingSource.java:58" in v.root_cause.explanation


def test_first_bad_link_names_the_unreachable_datanode_not_the_first() -> None:
    """``firstBadLink`` from the first DataNode points at the one behind it; the verdict names that one."""
    bad = ev(HdfsClientError, T0 + 8_000, "tm01.example.com", "taskmanager", kind="create_block_output_stream",
             block=BLK, datanode=LAB["dn3"],
             exception="java.io.IOException: Got error, status=ERROR, status message , ack with firstBadLink as "
                       "127.0.0.1:9868")
    [v] = run(with_event(lab("3.4.1") + flink(), bad))
    assert (v.root_cause.code, v.root_cause.hosts) == ("HDFS_SLOW_PIPELINE", ("dn3",))


def test_last_datanode_blocked_outside_packet_work_is_named() -> None:
    """Last of the pipeline and locked: every DataNode finishes late, but only it spent the time outside packet work
    (clienttrace duration short against Receiving → finish); the upstream ones waited on its acks."""
    block = f"{BP}:{BLK}"
    writes = []
    for k, h in enumerate(("dn1", "dn3", "dn2")):
        writes.append(ev(BlockWrite, T0 + 60 + k, h, "datanode", block=block, src="127.0.0.1:51000", dest=LAB[h]))
        duration = 5 if h == "dn2" else 30_000
        writes.append(ev(BlockWrite, T0 + 30_200 - k, h, "datanode", block=block, src="127.0.0.1:51000", dest=LAB[h],
                         duration_ms=duration, phase="finished"))
    [v] = run(with_event(lab("3.4.1", order=("dn1", "dn3", "dn2")) + flink(), *writes))
    assert (v.root_cause.code, v.root_cause.hosts) == ("HDFS_SLOW_PIPELINE", ("dn2",))
    assert "position 3" in v.root_cause.explanation


def test_34_slow_commands_from_the_namenode_point_at_the_locked_datanode() -> None:
    """Last of the pipeline and locked on 3.4: the block lines cannot tell, but its NameNode commands waited."""
    block = f"{BP}:{BLK}"
    writes = []
    for k, h in enumerate(("dn1", "dn3", "dn2")):
        writes.append(ev(BlockWrite, T0 + 60 + k, h, "datanode", block=block, src="127.0.0.1:51000", dest=LAB[h]))
        writes.append(ev(BlockWrite, T0 + 30_200 - k, h, "datanode", block=block, src="127.0.0.1:51000", dest=LAB[h],
                         duration_ms=20, phase="finished"))
    writes.append(ev(DnWriteError, T0 + 29_000, "dn2", "datanode", kind="slow_nn_commands", duration_ms=26_281))
    [v] = run(with_event(lab("3.4.1", order=("dn1", "dn3", "dn2")) + flink(), *writes))
    assert (v.root_cause.code, v.root_cause.hosts) == ("HDFS_SLOW_PIPELINE", ("dn2",))
    assert "cannot be seen in this version" in v.root_cause.explanation
