"""Routine block writes are counted at ingest; slow, stalled and address-telling write lines become events."""

from __future__ import annotations

import pytest

from correlator.core.events import BlockWrite, Event, SourceProgress
from correlator.core.ingest.ingest import Ingest, IngestConfig, SourceHint

DN = "org.apache.hadoop.hdfs.server.datanode.DataNode"
BP = "BP-1473651231-10.20.30.40-1546300800000"
HINT = SourceHint(cluster="c", host="dn1", file="/l/hadoop-hdfs-datanode-dn1.log", role="datanode", family="hdfs")


def receiving(ts: str, blk: int) -> str:
    return f"2020-01-02 {ts} INFO {DN}: Receiving {BP}:blk_{blk}_1 src: /10.20.30.41:53412 dest: /10.20.30.42:9866"


def finished(ts: str, blk: int, ns: int = 1_812_345, size: int = 8761) -> str:
    return (f"2020-01-02 {ts} INFO {DN}.clienttrace: src: /10.20.30.41:53412, dest: /10.20.30.42:9866, bytes: {size}, "
            f"op: HDFS_WRITE, cliID: DFSClient_NONMAPREDUCE_-1340311245_88, offset: 0, srvID: 6f0a7c9e, blockid: "
            f"{BP}:blk_{blk}_1, duration(ns): {ns}")


def responder(ts: str, blk: int) -> str:
    return f"2020-01-02 {ts} INFO {DN}: PacketResponder: {BP}:blk_{blk}_1, type=LAST_IN_PIPELINE terminating"


def writes(lines: list[str], *, blocks: bool = True, slow_ms: int = 1000) -> list[BlockWrite]:
    ingest = Ingest(IngestConfig(slow_write_ms=slow_ms))
    data = ("\n".join(lines) + "\n").encode()
    if blocks:
        out = ingest.feed_block(data, file_ref="/l/dn1.log", first_line=1, hint=HINT).outputs
    else:
        out = [o for i, line in enumerate(lines) for o in ingest.feed_line(line, ref=f"x:{i}", hint=HINT)]
    out += ingest.flush_all()
    return [o for o in out if isinstance(o, BlockWrite)]


FIRST = [receiving("09:00:00,000", 1), finished("09:00:00,010", 1), responder("09:00:00,011", 1)]


class TestWriteTracker:
    def test_first_write_tells_the_address(self) -> None:
        """The first write of a DataNode is emitted whole (its dest is the DataNode's ip:port)."""
        got = writes(FIRST)
        assert [(w.phase, w.dest) for w in got] == [("receiving", "10.20.30.42:9866"), ("finished", "10.20.30.42:9866")]

    def test_fast_writes_are_counted_not_emitted(self) -> None:
        """Writes that end within the threshold cost no event, in blocks and line by line."""
        fast = [line for b in range(2, 50) for line in (receiving(f"09:00:{b:02d},000", b),
                                                         finished(f"09:00:{b:02d},300", b),
                                                         responder(f"09:00:{b:02d},301", b))]
        for blocks in (True, False):
            assert len(writes(FIRST + fast, blocks=blocks)) == 2

    def test_slow_write_emits_start_and_end(self) -> None:
        """A clienttrace 37 s after its Receiving (with only 1.8 ms of packet work) is a stalled write."""
        got = writes(FIRST + [receiving("09:00:01,000", 7), finished("09:00:38,500", 7)])
        assert [(w.phase, w.block.endswith("blk_7_1")) for w in got[2:]] == [("receiving", True), ("finished", True)]

    def test_slow_duration_is_emitted(self) -> None:
        """A ten-digit duration(ns) is slow even when the line comes soon after the start."""
        got = writes(FIRST + [receiving("09:00:01,000", 7), finished("09:00:01,100", 7, ns=2_500_000_000)])
        assert [w.phase for w in got[2:]] == ["receiving", "finished"]
        assert got[-1].duration_ms == 2500

    def test_open_past_a_full_blocks_time_is_emitted_when_the_clock_passes(self) -> None:
        """A write still open when a full 128 MiB block would have been written at the 32 MiB/s floor (4 s) is
        emitted as soon as a later line shows the time has passed; at 3.5 s it still waits."""
        ingest = Ingest(IngestConfig())
        ingest.feed_block(("\n".join(FIRST + [receiving("09:00:01,000", 7)]) + "\n").encode(),
                          file_ref="f", first_line=1, hint=HINT)
        early = ingest.feed_block((receiving("09:00:04,500", 8) + "\n").encode(), file_ref="f", first_line=5,
                                  hint=HINT).outputs
        assert not [w for w in early if isinstance(w, BlockWrite)]
        out = ingest.feed_block((receiving("09:00:05,100", 9) + "\n").encode(), file_ref="f", first_line=6,
                                hint=HINT).outputs
        assert [w.block for w in out if isinstance(w, BlockWrite)] == [f"{BP}:blk_7_1"]

    def test_a_big_block_written_in_its_time_is_routine_a_small_one_is_a_stall(self) -> None:
        """1.3 s for 128 MiB is ~98 MiB/s: routine; 1.3 s for 8 KiB is a stall, line by line and in blocks."""
        big = [receiving("09:00:01,000", 7), finished("09:00:02,300", 7).replace("bytes: 8761", "bytes: 134217728"),
               responder("09:00:02,301", 7)]
        small = [receiving("09:00:03,000", 8), finished("09:00:04,300", 8), responder("09:00:04,301", 8)]
        for blocks in (True, False):
            got = writes(FIRST + big + small, blocks=blocks)
            assert [(w.phase, w.block.endswith("blk_8_1")) for w in got[2:]] == [("receiving", True),
                                                                                   ("finished", True)], blocks

    def test_by_default_a_small_write_paced_by_its_writer_is_routine_a_stuck_one_is_evidence(self) -> None:
        """The default rule (``IngestConfig.slow_write_ms``): 8 KiB in 2.2 s is a writer sending as it produces (a
        tenth of the lab's real DataNodes' writes look so); 8 KiB in 3.5 s is evidence; 128 MiB in 3.5 s a big block."""
        paced = [receiving("09:00:01,000", 7), finished("09:00:03,200", 7, ns=2_150_000_000), responder("09:00:03,201", 7)]
        stuck = [receiving("09:00:04,000", 8), finished("09:00:07,500", 8, ns=3_450_000_000), responder("09:00:07,501", 8)]
        big = [receiving("09:00:08,000", 9), finished("09:00:11,500", 9, 3_450_000_000, 128 << 20),
               responder("09:00:11,501", 9)]
        default = IngestConfig().slow_write_ms
        for blocks in (True, False):
            got = writes(FIRST + paced + stuck + big, blocks=blocks, slow_ms=default)
            assert [(w.phase, w.block[-7:]) for w in got[2:]] == [("receiving", "blk_8_1"), ("finished", "blk_8_1")]

    def test_a_clock_stepping_back_keeps_routine_writes_routine(self) -> None:
        """After a 70 s step back (an NTP step) the source's time runs from the jump: no write looks stalled."""
        before = [line for b in range(2, 40) for line in (receiving(f"09:01:{b:02d},000", b),
                                                          finished(f"09:01:{b:02d},300", b))]
        after = [line for b in range(40, 90) for line in (receiving(f"09:00:{b - 40:02d},000", b),
                                                          finished(f"09:00:{b - 40:02d},300", b))]
        for blocks in (True, False):
            ingest = Ingest(IngestConfig())
            data = ("\n".join(FIRST + before + after) + "\n").encode()
            if blocks:
                out = ingest.feed_block(data, file_ref="f", first_line=1, hint=HINT).outputs
            else:
                out = [o for i, ln in enumerate(FIRST + before + after) for o in ingest.feed_line(ln, ref=f"x:{i}",
                                                                                                 hint=HINT)]
            out += ingest.flush_all()
            assert len([o for o in out if isinstance(o, BlockWrite)]) == 2, blocks
            assert ingest.stats["clock_steps_back"] == 1

    def test_never_ended_writes_are_emitted_at_the_end(self) -> None:
        """At the end of the input a write that never finished is still evidence."""
        got = writes(FIRST + [receiving("09:00:01,000", 7)])
        assert [w.phase for w in got[2:]] == ["receiving"]

    def test_snapshot_round_trip_keeps_open_writes(self) -> None:
        """An open write survives snapshot → restore and is decided by the restored ingest."""
        ingest = Ingest(IngestConfig())
        ingest.feed_block(("\n".join(FIRST + [receiving("09:00:01,000", 7)]) + "\n").encode(),
                          file_ref="f", first_line=1, hint=HINT)
        restored = Ingest.restore(IngestConfig(), ingest.snapshot())
        out = restored.feed_block((finished("09:00:09,000", 7) + "\n").encode(), file_ref="f", first_line=5,
                                  hint=HINT).outputs
        assert [w.phase for w in out if isinstance(w, BlockWrite)] == ["receiving", "finished"]
        assert restored.stats["routine_writes"] == 0


class TestFeedRecords:
    def test_a_batch_of_records_gives_what_record_by_record_gives(self) -> None:
        """One scan over a batch's joined values yields the events (and refs) of feeding each record alone."""
        lines = FIRST + [receiving("09:00:01,000", 7), finished("09:00:38,500", 7),
                         "2020-01-02 09:00:39,000 WARN org.apache.hadoop.util.JvmPauseMonitor: Detected pause in JVM "
                         "or host machine (eg GC): pause of approximately 1520ms", "GC pool 'ParNew' had collection(s)"]
        values = [line.encode() for line in lines]
        offsets = list(range(100, 100 + len(values)))
        headers = {"cluster": b"c", "host": b"dn1", "role": b"datanode"}
        one = Ingest(IngestConfig())
        by_record = [o for v, off in zip(values, offsets)
                     for o in one.feed(v, ref=f"logs.hdfs/0@{off}", headers=headers, key=b"dn1/dn.log")]
        by_record += one.flush_all()
        batch = Ingest(IngestConfig())
        got = batch.feed_records(values, offsets, stream_ref="logs.hdfs/0", key=b"dn1/dn.log", headers=headers)
        got += batch.flush_all()
        progress = [o for o in got if isinstance(o, SourceProgress)]
        assert progress and progress[0].ts_ms == min(o.ts_ms for o in by_record if isinstance(o, SourceProgress))
        assert progress[-1].ts_ms == max(o.ts_ms for o in by_record if isinstance(o, SourceProgress))
        # the block path skips noise between hits, so it samples a source's time more sparsely than record by record
        got = [o for o in got if not isinstance(o, SourceProgress)]
        assert got == [o for o in by_record if not isinstance(o, SourceProgress)]
        assert [e.type for e in got] == ["block_write", "block_write", "block_write", "block_write", "jvm_pause"]
        assert got[2].ref == "logs.hdfs/0@103"

    def test_envelopes_and_binary_go_record_by_record(self) -> None:
        """A batch holding a JSON envelope or a binary value is decoded per record: errors keep their reasons."""
        batch = Ingest(IngestConfig())
        got = batch.feed_records([b'{"message": 5}', bytes(range(256))], [1, 2], stream_ref="logs.hdfs/0")
        assert sorted(e.reason for e in got) == ["bad_envelope", "binary"]


# A replica copied between DataNodes, as Hadoop 3.4.1's lab DataNode logged it (tests/data/lab/3.4.1-2.1.1/task-error,
# hadoop-root-datanode-lab-dn1.log lines 94-95, addresses and path shortened): a ``Receiving`` like a client's write,
# then ``Received … of size N`` and no clienttrace.
REPLICA_IN = ("2020-01-02 {ts} INFO org.apache.hadoop.hdfs.server.datanode.DataNode: Receiving "
              "BP-2071334356-127.0.0.1-1796118856804:blk_{blk}_1004 src: /127.0.0.1:36416 dest: /127.0.0.1:47741")
REPLICA_DONE = ("2020-01-02 {ts} INFO org.apache.hadoop.hdfs.server.datanode.DataNode: Received "
                "BP-2071334356-127.0.0.1-1796118856804:blk_{blk}_1004 src: /127.0.0.1:36416 dest: /127.0.0.1:47741 "
                "volume: /data/lab-dn1/data of size {size}")


@pytest.mark.parametrize("blocks", [True, False], ids=["block path", "line path"])
def test_a_replica_copied_in_ends_with_its_received_line(blocks: bool) -> None:
    """Without its end a copied replica stayed open and became a stalled write once a full block's time passed."""
    lines = [receiving("08:00:00,000", 1), finished("08:00:00,010", 1),
             REPLICA_IN.format(ts="08:00:01,000", blk=2), REPLICA_DONE.format(ts="08:00:01,006", blk=2, size=2503),
             *(receiving(f"08:00:{s:02d},000", 10 + s) for s in range(2, 20)),
             *(finished(f"08:00:{s:02d},005", 10 + s) for s in range(2, 20))]
    assert [w.block for w in writes(lines, blocks=blocks) if "blk_2_" in w.block] == []


@pytest.mark.parametrize("blocks", [True, False], ids=["block path", "line path"])
def test_a_replica_copied_in_slowly_is_still_evidence(blocks: bool) -> None:
    """Its start becomes the event (no parser reads a ``Received`` line: it carries no duration of its own)."""
    lines = [receiving("08:00:00,000", 1), finished("08:00:00,010", 1),
             REPLICA_IN.format(ts="08:00:01,000", blk=2), REPLICA_DONE.format(ts="08:00:03,500", blk=2, size=2503)]
    found = [(w.phase, w.ts_ms % 60_000) for w in writes(lines, blocks=blocks) if "blk_2_" in w.block]
    assert found == [("receiving", 1000)]


def test_a_batch_read_in_pieces_around_a_replica_names_each_records_offset() -> None:
    """A batch of records is read in pieces around its ``Received`` lines: each event still names its own offset."""
    lines = [receiving("08:00:00,000", 1), finished("08:00:00,010", 1), REPLICA_IN.format(ts="08:00:01,000", blk=2),
             REPLICA_DONE.format(ts="08:00:09,500", blk=2, size=5), receiving("08:00:10,000", 3),
             finished("08:00:15,000", 3), "2020-01-02 08:00:16,000 WARN org.apache.hadoop.util.JvmPauseMonitor: "
             "Detected pause in JVM or host machine (eg GC): pause of approximately 1520ms"]
    values, offsets = [line.encode() for line in lines], [100 + 7 * i for i in range(len(lines))]
    batch, single = Ingest(IngestConfig()), Ingest(IngestConfig())
    got = batch.feed_records(values, offsets, stream_ref="logs/0", key=b"dn1") + batch.flush_all()
    one = [e for v, o in zip(values, offsets) for e in single.feed(v, ref=f"logs/0@{o}", key=b"dn1")]
    one += single.flush_all()

    def found(out: list[object]) -> list[tuple[str, str]]:
        return [(e.type, e.ref) for e in out if isinstance(e, Event) and e.type != "source_progress"]

    assert found(got) == found(one)
    assert [ref for _, ref in found(got)] == ["logs/0@100", "logs/0@107", "logs/0@114", "logs/0@128", "logs/0@135",
                                              "logs/0@142"]
