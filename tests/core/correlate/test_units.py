"""Unit specifications of the engine's parts: watermarks, intervals, knowledge, verdict wire shape."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from correlator.core.correlate.evidence import interval_of, overlap_ms, reconcile_bursts
from correlator.core.correlate.watermarks import Watermarks
from correlator.core.events import DatasetLockHeld, DirectoryScanReconcile, JvmPause
from correlator.core.explain.knowledge import HDFS_14476, HDFS_15415, parse_version, scanner_issue, scanner_part
from correlator.core.explain.verdict import SCHEMA, verdict_from_dict, verdict_to_dict
from tests.core.correlate.factory import seed
from tests.core.correlate.test_engine import run


class TestWatermarks:
    @given(st.lists(st.integers(min_value=0, max_value=10**13), min_size=1, max_size=50))
    def test_never_regresses(self, times: list[int]) -> None:
        """Whatever order events come in, a source's watermark only moves forward."""
        marks = Watermarks(5_000, 60_000)
        last = None
        for t in times:
            marks.observe(("c", "h", "datanode"), t)
            mark = marks.watermark(("c", "h", "datanode"))
            assert mark is not None and (last is None or mark >= last)
            last = mark

    def test_idle_after_timeout_of_processing_time(self) -> None:
        """A source silent for the idle timeout (processing time) has passed any event time."""
        marks = Watermarks(5_000, 60_000)
        marks.tick(1_000)
        marks.observe(("c", "h", "datanode"), 100)
        assert not marks.has_passed(("c", "h", "datanode"), 10**12)
        marks.tick(61_000)
        assert marks.has_passed(("c", "h", "datanode"), 10**12)

    def test_snapshot_round_trip(self) -> None:
        marks = Watermarks(5_000, 60_000)
        marks.observe(("c", "h", "datanode"), 100)
        again = Watermarks.restore(5_000, 60_000, marks.snapshot())
        assert again.snapshot() == marks.snapshot()


class TestIntervals:
    def test_logged_at_the_end(self) -> None:
        """A lock-held warning at ts with lockHeldTimeMs=N covers [ts - N, ts]."""
        iv = interval_of(DatasetLockHeld(ts_ms=50_000, cluster="c", host="dn", role="datanode", lock="l",
                                         held_ms=30_000, holder="DirectoryScanner.scan"))
        assert iv is not None and (iv.kind, iv.start_ms, iv.end_ms) == ("scanner_lock", 20_000, 50_000)

    def test_overlap_tolerates_clock_skew(self) -> None:
        """Intervals 1 s apart overlap once a 2 s skew is allowed."""
        assert overlap_ms(0, 10_000, 11_000, 20_000) == 0
        assert overlap_ms(0, 10_000, 11_000, 20_000, skew_ms=2_000) == 1_000

    def test_pause_kind_follows_the_role(self) -> None:
        iv = interval_of(JvmPause(ts_ms=10, cluster="c", host="tm", role="taskmanager", pause_ms=5, gc=True))
        assert iv is not None and iv.kind == "tm_pause"

    def test_reconcile_warnings_form_bursts(self) -> None:
        """Reconcile warnings within seconds merge into one burst; a later one starts another."""
        points = [interval_of(DirectoryScanReconcile(ts_ms=t, cluster="c", host="dn", role="datanode",
                                                     action="a")) for t in (0, 100, 200, 60_000)]
        bursts = reconcile_bursts([p for p in points if p is not None])
        assert [(b.start_ms, b.end_ms, b.magnitude_ms) for b in bursts] == [(0, 200, 3), (60_000, 60_000, 1)]


class TestKnowledge:
    def test_versions(self) -> None:
        assert parse_version("2.6.0-cdh5.8.0") == (2, 6, 0)
        assert HDFS_14476.affects((3, 1, 0)) and HDFS_14476.affects((2, 7, 3)) and HDFS_14476.affects((3, 2, 1))
        assert not HDFS_14476.affects((3, 2, 2)) and not HDFS_14476.affects((3, 3, 0))
        assert HDFS_15415.affects((3, 3, 0)) and not HDFS_15415.affects((3, 3, 1))

    def test_scanner_issue_by_part_and_datanode_version(self) -> None:
        """The compare (a hold in ``scan``) is HDFS-15415, fixed 3.2.2 / 3.3.1; the reconcile HDFS-14476, fixed
        2.10.1 / 3.2.2 / 3.3.0; an unknown version names the defect the stack shows."""
        assert scanner_issue(None, "compare") is HDFS_15415
        assert scanner_issue(None, "reconcile") is HDFS_14476
        assert scanner_issue("3.2.1", "compare") is HDFS_15415
        assert scanner_issue("3.3.0", "compare") is HDFS_15415
        assert scanner_issue("3.3.0", "reconcile") is None
        assert scanner_issue("3.3.1", "compare") is None
        assert scanner_issue("2.10.0", "reconcile") is HDFS_14476
        assert scanner_issue("2.10.1", "reconcile") is None
        assert scanner_issue("2.10.2", "compare") is HDFS_15415
        assert scanner_issue("3.4.0", "compare") is None

    def test_scanner_part_from_the_holder_frame(self) -> None:
        """The seed's stack holds in ``scan`` (``reconcile`` only its caller): the compare."""
        assert scanner_part("scanner_lock", "DirectoryScanner.scan") == "compare"
        assert scanner_part("scanner_lock", "FsDatasetImpl.checkAndUpdate") == "reconcile"
        assert scanner_part("scan_reconcile", None) == "reconcile"
        assert scanner_part("scan_stats", None) == "compare"


class TestVerdictWire:
    def test_round_trip(self) -> None:
        """verdict_from_dict(verdict_to_dict(v)) == v, and the dict carries the schema."""
        [v] = run(seed())
        d = verdict_to_dict(v)
        assert d["schema"] == SCHEMA
        assert list(d)[:6] == ["schema", "verdict_id", "cluster", "job_id", "checkpoint_id", "failure"]
        assert verdict_from_dict(d) == v


class TestIdleBeforeFirstTick:
    def test_sources_seen_before_any_tick_can_go_idle(self) -> None:
        """Events fed before the first processing-time tick still let their source go idle later."""
        marks = Watermarks(5_000, 60_000)
        marks.observe(("c", "h", "datanode"), 100)
        marks.tick(1_000)
        assert not marks.has_passed(("c", "h", "datanode"), 10**12)
        marks.tick(61_000)
        assert marks.has_passed(("c", "h", "datanode"), 10**12)


class TestDatanodeTraits:
    """Per-version lock reporting and scanner facts (Hadoop sources by release line, see knowledge.py)."""

    def test_lock_reports_and_totals_by_version(self) -> None:
        from correlator.core.explain.knowledge import datanode_traits

        table = {
            "2.7.7": (False, False, True), "2.10.1": (True, False, True), "3.1.0": (True, False, True),
            "3.2.1": (True, False, True), "3.2.2": (True, False, False), "3.3.0": (True, True, True),
            "3.3.6": (True, True, False), "3.4.1": (False, False, False),
        }
        for version, want in table.items():
            t = datanode_traits(version)
            assert t is not None and (t.lock_reports, t.lock_waits, t.totals_under_lock) == want, version
        assert datanode_traits(None) is None and datanode_traits("garbage") is None

    def test_sentences_follow_the_version(self) -> None:
        from correlator.core.explain.knowledge import datanode_traits

        t336, t341 = datanode_traits("3.3.6"), datanode_traits("3.4.1")
        assert t336 is not None and t341 is not None
        assert "reports dataset-lock holds and lock waits" in t336.lock_sentence()
        assert "after releasing the lock" in t336.totals_sentence()
        assert "DataSetLockManager" in t341.lock_sentence() and "no dataset-lock hold times" in t341.lock_sentence()


def test_back_to_back_slow_writes_form_one_run() -> None:
    """One slow-IO warning per packet: a run of them covers the stuck write together, gaps split runs."""
    from correlator.core.correlate.evidence import slow_runs
    from correlator.core.events import SlowIo

    def slow(end: int, host: str = "dn") -> SlowIo:
        return SlowIo(ts_ms=end, cluster="c", host=host, role="datanode", kind="disk_write", duration_ms=2000)

    ivs = [iv for iv in (interval_of(slow(t)) for t in (2000, 4001, 6002, 20_000)) if iv is not None]
    ivs += [iv for iv in (interval_of(slow(4000, "other")),) if iv is not None]
    runs = sorted(slow_runs(ivs), key=lambda i: (i.host, i.start_ms))
    assert [(r.host, r.start_ms, r.end_ms) for r in runs] == [("dn", 0, 6002), ("dn", 18_000, 20_000),
                                                              ("other", 2000, 4000)]
    assert "3 slow disk warnings" in runs[0].summary
