"""Multi-line reassembly per source: joined or one line per record, idle bound, orphans, interleaved sources."""

from __future__ import annotations

import json

from correlator.core.events import CheckpointFailed, DatasetLockHeld, Event, JvmPause, TaskStatus
from correlator.core.ingest.ingest import Ingest, IngestConfig, SourceHint
from correlator.core.ingest.multiline import Stitcher, is_record_start
from correlator.core.ingest.records import Origin

INCIDENT = [
    "2020-01-02 17:18:53,337 INFO  org.apache.flink.runtime.executiongraph.ExecutionGraph        - Source: s -> m (1/1) "
    "(c2e77749126a67db62d38bdb166b5696) switched from RUNNING to FAILED.",
    "AsynchronousException{java.lang.Exception: Could not materialize checkpoint 60 for operator Source: s -> m (1/1).}",
    "\tat org.apache.flink.streaming.runtime.tasks.StreamTask$AsyncCheckpointExceptionHandler.tryHandleCheckpointException"
    "(StreamTask.java:1153)",
    "Caused by: java.io.IOException: Could not flush and close the file system output stream to "
    "hdfs:/ck/1a3bc71ac57f33961637adf340e9c28f/chk-60/253fc668 in order to obtain the stream state handle",
    "\t... 7 more",
]
NEXT = "2020-01-02 17:18:53,345 INFO  org.apache.flink.runtime.executiongraph.ExecutionGraph        - Job j (" \
       "1a3bc71ac57f33961637adf340e9c28f) switched from state RUNNING to FAILING."
LOCK = [
    "2020-01-02 17:19:20,912 WARN org.apache.hadoop.hdfs.server.datanode.fsdataset.impl.FsDatasetImpl: Lock held time "
    "above threshold: lock identifier: FsDatasetImpl lockHeldTimeMs=37690 ms. Suppressed 0 lock warnings. The stack "
    "trace is: java.lang.Thread.getStackTrace(Thread.java:1559)",
    "org.apache.hadoop.util.InstrumentedLock.unlock(InstrumentedLock.java:133)",
    "org.apache.hadoop.hdfs.server.datanode.DirectoryScanner.scan(DirectoryScanner.java:395)",
    "",
]


def _events(out: list[object]) -> list[Event]:
    """Findings only (``source_progress`` is coverage bookkeeping, tested in ``test_ingest``)."""
    return [o for o in out if isinstance(o, Event) and o.type != "source_progress"]


class TestRecordStart:
    def test_headers_and_continuations(self) -> None:
        """Timestamps, GC stamps and level-led layouts start records; frames, causes and banners continue them."""
        assert is_record_start(INCIDENT[0]) and is_record_start(NEXT)
        assert is_record_start("26/06/28 19:27:42 ERROR datanode.DirectoryScanner: x")
        assert is_record_start("[2020-01-02T17:18:53.635+0800][12383.801s][info][gc] GC(1) Pause Full 1ms")
        assert is_record_start("WARN [JvmPauseMonitor] util.JvmPauseMonitor: Detected pause")
        for line in INCIDENT[1:] + ["GC pool 'ParNew' had collection(s): count=1 time=0ms", "STARTUP_MSG:   version = 3",
                                    "\tNumber of suppressed write-lock reports: 0", "org.apache.Foo.bar(Foo.java:1)"]:
            assert not is_record_start(line), line


class TestIngestReassembly:
    def test_one_line_per_record_equals_joined(self) -> None:
        """A stack sent line by line and the same stack joined by the shipper give the same events."""
        apart = Ingest(IngestConfig())
        out_apart: list[object] = []
        for i, line in enumerate([*INCIDENT, NEXT]):
            out_apart += apart.feed(line.encode(), ref=f"t/0@{i}")
        out_apart += apart.flush_all()
        joined = Ingest(IngestConfig())
        out_joined = joined.feed("\n".join(INCIDENT).encode(), ref="t/0@0") + joined.feed(NEXT.encode(), ref="t/0@1")
        out_joined += joined.flush_all()
        assert [type(e) for e in _events(out_apart)] == [type(e) for e in _events(out_joined)]
        failed = [e for e in _events(out_joined) if isinstance(e, CheckpointFailed)]
        assert failed[0].path == "hdfs:/ck/1a3bc71ac57f33961637adf340e9c28f/chk-60/253fc668"
        assert failed[0].job_id == "1a3bc71ac57f33961637adf340e9c28f" and failed[0].ref == "t/0@0"

    def test_record_closes_at_next_header_only(self) -> None:
        """Until the next header or a flush, the failed task stays open (its cause chain may still grow)."""
        ingest = Ingest(IngestConfig())
        out: list[object] = []
        for line in INCIDENT:
            out += ingest.feed(line.encode(), ref="r", now_ms=1000)
        assert _events(out) == []
        closed = ingest.feed(NEXT.encode(), ref="r2", now_ms=1100)
        assert {type(e) for e in _events(closed)} == {TaskStatus, CheckpointFailed}

    def test_idle_flush(self) -> None:
        """A source silent longer than ``idle_flush_ms`` has its open record closed by ``flush_idle``."""
        ingest = Ingest(IngestConfig(idle_flush_ms=2000))
        for line in LOCK[:-1]:
            ingest.feed(line.encode(), ref="r", now_ms=10_000)
        assert ingest.flush_idle(11_000) == []
        [held] = _events(ingest.flush_idle(12_001))
        assert isinstance(held, DatasetLockHeld) and held.holder == "DirectoryScanner.scan"

    def test_sources_do_not_mix(self) -> None:
        """Interleaved lines of two hosts are stitched per host: a frame of one never joins the other's record."""
        ingest = Ingest(IngestConfig())
        a, b = SourceHint(host="dn1"), SourceHint(host="dn2")
        out = ingest.feed(LOCK[0].encode(), ref="a1", hint=a)
        out += ingest.feed(b"2020-01-02 17:19:21,000 INFO org.apache.hadoop.hdfs.server.datanode.DataNode: noise", ref="b1",
                           hint=b)
        out += ingest.feed(LOCK[2].encode(), ref="a2", hint=a)
        out += ingest.flush_all()
        [held] = _events(out)
        assert isinstance(held, DatasetLockHeld) and held.host == "dn1" and held.stack == ("DirectoryScanner.scan",)

    def test_orphan_continuations_at_start(self) -> None:
        """Continuation lines before any header do not crash; they form a record that is noise or a typed error."""
        ingest = Ingest(IngestConfig())
        out = ingest.feed(b"\tat org.apache.flink.Foo.bar(Foo.java:1)", ref="o1")
        out += ingest.feed(b"Caused by: java.lang.Exception: Could not materialize checkpoint 3 for operator x.", ref="o2")
        out += ingest.flush_all()
        assert [getattr(o, "reason", None) for o in out] == ["unknown_layout"]

    def test_jvm_pause_gc_pool_lines(self) -> None:
        """JvmPauseMonitor's GC-pool continuation decides ``gc``."""
        ingest = Ingest(IngestConfig())
        out = ingest.feed(b"2020-01-03 12:23:16,855 WARN org.apache.hadoop.util.JvmPauseMonitor: Detected pause in JVM or "
                          b"host machine (eg GC): pause of approximately 12345ms\nGC pool 'ParNew' had collection(s): "
                          b"count=1 time=45ms", ref="p")
        [pause] = _events(out + ingest.flush_all())
        assert isinstance(pause, JvmPause) and pause.gc and pause.pause_ms == 12345


class TestStitcherSnapshot:
    def test_round_trip(self) -> None:
        """An open record survives snapshot → restore with its lines and candidate flag."""
        s = Stitcher()
        origin = Origin("c", "dn1", "datanode", "hdfs", "/l/dn1.log", file_date=(2024, 3, 1), stream="k")
        s.add("k", "head", ref="r", origin=origin, start=True, candidate=True, now_ms=5)
        s.add("k", "cont", ref="r2", origin=origin, start=False, candidate=False, now_ms=6)
        restored = Stitcher.restore(json.loads(json.dumps(s.snapshot())), 2000)
        [closed] = restored.close_all()
        assert closed.lines == ("head", "cont") and closed.candidate and closed.ref == "r"
        assert closed.origin == origin and closed.origin.key == origin.key


class TestGcTwins:
    def test_safepoint_line_of_a_gc_pause_is_not_a_second_pause(self) -> None:
        """A GC pause and the safepoint line of the same stop give one ``jvm_pause``; a lone safepoint stays."""
        ingest = Ingest(IngestConfig())
        hint = SourceHint(family="gc", role="taskmanager", host="tm1")
        lines = [
            "[2020-01-02T17:18:53.635+0800][12383.801s][info][gc          ] GC(123) Pause Full (G1 Compaction Pause) "
            "3900M->3100M(4096M) 38123.456ms",
            "[2020-01-02T17:18:53.643+0800][12383.809s][info][safepoint] Total time for which application threads were "
            "stopped: 38.1302345 seconds, Stopping threads took: 0.0001234 seconds",
            "[2020-01-02T17:20:00.000+0800][12450.000s][info][safepoint] Total time for which application threads were "
            "stopped: 2.5 seconds, Stopping threads took: 0.0001234 seconds",
        ]
        out: list[object] = []
        for i, line in enumerate(lines):
            out += ingest.feed(line.encode(), ref=f"gc:{i + 1}", hint=hint)
        pauses = _events(out + ingest.flush_all())
        assert [(p.pause_ms, p.ref, p.role) for p in pauses if isinstance(p, JvmPause)] == [
            (38123, "gc:1", "taskmanager"), (2500, "gc:3", "taskmanager")]


def test_kafka_key_separates_unnamed_sources() -> None:
    """Raw lines without host headers are stitched per Kafka key (shippers key by host+file)."""
    ingest = Ingest(IngestConfig())
    out = ingest.feed(LOCK[0].encode(), ref="l/0@1", key=b"dn1|dn.log")
    out += ingest.feed(b"2020-01-02 17:19:21,000 INFO org.apache.hadoop.hdfs.server.datanode.DataNode: noise", ref="l/0@2",
                       key=b"dn2|dn.log")
    out += ingest.feed(LOCK[2].encode(), ref="l/0@3", key=b"dn1|dn.log")
    [held] = _events(out + ingest.flush_all())
    assert isinstance(held, DatasetLockHeld) and held.holder == "DirectoryScanner.scan"


def test_a_record_start_too_long_to_read_closes_nothing_on_either_path() -> None:
    """A trigger line, then a record start longer than ``max_line_bytes`` (refused), then the stack of the trigger's
    record: fed line by line the refused line closes nothing and the stack joins the trigger's record; the block path
    must read it so too, not take the trigger line for a record of its own."""
    long_start = NEXT[:24] + " INFO x - " + "y" * 400
    lines = [INCIDENT[0], long_start, *INCIDENT[1:], NEXT]
    hint = SourceHint(host="jm", role="jobmanager", family="flink")

    def outputs(blocks: bool) -> list[str]:
        ingest = Ingest(IngestConfig(max_line_bytes=300))
        if blocks:
            out = ingest.feed_block(("\n".join(lines) + "\n").encode(), file_ref="jm.log", first_line=1,
                                    hint=hint).outputs
        else:
            out = [o for i, line in enumerate(lines) for o in ingest.feed_line(line, ref=f"jm.log:{i + 1}", hint=hint)]
        out += ingest.flush_all()
        return sorted(repr(o) for o in out if not (isinstance(o, Event) and o.type == "source_progress"))

    by_lines = outputs(blocks=False)
    assert any("CheckpointFailed" in o for o in by_lines) and any("line_too_long" in o for o in by_lines)
    assert outputs(blocks=True) == by_lines
