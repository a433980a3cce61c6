"""Ranking: overlap, magnitude and host relevance decide; causes outrank their symptoms."""

from __future__ import annotations

from correlator.core.correlate.evidence import interval_of
from correlator.core.correlate.ranking import Window, rank
from correlator.core.events import DatasetLockHeld, JvmPause, SlowIo

WINDOW = Window(0, 38_000, 10_000)


def lock(host: str, end: int, held: int, holder: str = "DirectoryScanner.scan"):
    iv = interval_of(DatasetLockHeld(ts_ms=end, cluster="c", host=host, role="datanode", lock="l", held_ms=held,
                                     holder=holder))
    assert iv is not None
    return iv


class TestRank:
    def test_pipeline_datanode_beats_cluster_wide_overlap(self) -> None:
        """The same scan on a DataNode of the write outranks one on another DataNode."""
        [best] = rank([lock("dn02", 37_900, 37_500), lock("dn05", 37_900, 37_500)], WINDOW,
                      pipeline=frozenset({"dn02"}), tm_hosts=frozenset(), skew_ms=2_000)
        assert best.code == "HDFS_DIRECTORY_SCAN" and best.hosts == ("dn02",)

    def test_off_pipeline_scan_alone_stays_below_the_bar(self) -> None:
        """A scan on a DataNode outside the known pipeline is not enough to blame it."""
        [only] = rank([lock("dn05", 37_900, 37_500)], WINDOW, pipeline=frozenset({"dn02"}), tm_hosts=frozenset(),
                      skew_ms=2_000)
        assert only.score < 0.35

    def test_interval_outside_the_write_is_ignored(self) -> None:
        assert rank([lock("dn02", -60_000, 20_000)], WINDOW, pipeline=frozenset({"dn02"}), tm_hosts=frozenset(),
                    skew_ms=2_000) == []

    def test_bigger_overlap_scores_higher(self) -> None:
        """A pause covering the whole write outranks a short one on another pipeline DataNode."""
        long = interval_of(JvmPause(ts_ms=37_000, cluster="c", host="dn03", role="datanode", pause_ms=36_000, gc=True))
        short = interval_of(JvmPause(ts_ms=20_000, cluster="c", host="dn04", role="datanode", pause_ms=2_000, gc=True))
        [best] = rank([long, short], WINDOW, pipeline=frozenset({"dn03", "dn04"}), tm_hosts=frozenset(), skew_ms=0)
        assert best.hosts == ("dn03",)

    def test_slow_disk_under_a_scanner_is_a_symptom(self) -> None:
        """Slow writes on the DataNode whose scanner held the lock are demoted below the scanner."""
        disk = interval_of(SlowIo(ts_ms=37_800, cluster="c", host="dn02", role="datanode", kind="disk_write",
                                  duration_ms=37_000))
        ranked = rank([lock("dn02", 37_900, 30_000), disk], WINDOW, pipeline=frozenset({"dn02"}),
                      tm_hosts=frozenset(), skew_ms=2_000)
        assert [c.code for c in ranked] == ["HDFS_DIRECTORY_SCAN", "HDFS_SLOW_DISK"]
        assert ranked[1].scored[0].symptom_of == "HDFS_DIRECTORY_SCAN"


def _refusal(kind: str, host: str, role: str, at: int):
    from correlator.core.events import HdfsRefusal

    iv = interval_of(HdfsRefusal(ts_ms=at, cluster="c", host=host, role=role, kind=kind))
    assert iv is not None
    return iv


def test_no_datanode_left_is_the_symptom_of_the_refusals_that_say_why() -> None:
    """The NameNode finding no DataNode follows from each refusing for a reason of its own (a full volume, its
    transfer threads): the reason ranks first, clearly, not by the codes' order; alone, no DataNode left stays a
    cause."""
    from correlator.core.correlate.ranking import SYMPTOM_FACTOR

    none_left = _refusal("no_datanodes", "nn", "namenode", 30_000)
    for kind, code in (("disk_full", "DATANODE_DISK_FULL"), ("xceiver_limit", "DATANODE_XCEIVER_LIMIT")):
        ranked = rank([none_left, _refusal(kind, "dn02", "datanode", 29_900)], WINDOW, pipeline=frozenset({"dn02"}),
                      tm_hosts=frozenset(), skew_ms=2_000)
        assert [c.code for c in ranked] == [code, "HDFS_NO_DATANODES"]
        assert ranked[1].score <= round(ranked[0].score * SYMPTOM_FACTOR, 2) + 0.01
    [alone] = rank([none_left], WINDOW, pipeline=frozenset({"dn02"}), tm_hosts=frozenset(), skew_ms=2_000)
    assert alone.code == "HDFS_NO_DATANODES" and alone.score >= 0.5


def test_a_full_disk_is_named_on_the_datanodes_that_refused_not_on_the_namenode_that_counted_them() -> None:
    """The NameNode's NOT_ENOUGH_STORAGE_SPACE count is evidence of a full volume, but the space is on the DataNodes:
    when one of them refused, the verdict names the DataNodes; with the NameNode's line alone, the NameNode."""
    counted = _refusal("disk_full", "nn", "namenode", 30_000)
    [both] = rank([counted, _refusal("disk_full", "dn02", "datanode", 29_900)], WINDOW, pipeline=frozenset({"dn02"}),
                  tm_hosts=frozenset(), skew_ms=2_000)
    assert (both.code, both.hosts) == ("DATANODE_DISK_FULL", ("dn02",))
    [alone] = rank([counted], WINDOW, pipeline=frozenset({"dn02"}), tm_hosts=frozenset(), skew_ms=2_000)
    assert (alone.code, alone.hosts) == ("DATANODE_DISK_FULL", ("nn",))
