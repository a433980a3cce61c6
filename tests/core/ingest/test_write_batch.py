"""A block's writes decided together give exactly the events and counts of deciding each line on its own."""

from __future__ import annotations

import itertools
from dataclasses import replace
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from correlator.core.events import BlockWrite, JvmPause
from correlator.core.ingest import block_lines
from correlator.core.ingest.block_lines import replica_pieces
from correlator.core.ingest.ingest import Ingest, IngestConfig
from correlator.core.ingest.prefilter import Scanner
from correlator.core.ingest.write_batch import CLOSE, plan_writes
from correlator.core.ingest.writes import WriteRules
from tests.core.ingest.test_writes import BP, HINT, REPLICA_DONE, finished, receiving, responder

NOISE = ("2020-01-02 {ts} INFO org.apache.hadoop.hdfs.server.datanode.DataNode.clienttrace: src: /10.20.30.42:9866, "
         "dest: /10.20.31.9:47499, bytes: 5557, op: HDFS_READ, cliID: DFSClient_NONMAPREDUCE_686406189_88, offset: 0, "
         "srvID: 6f0a7c9e, blockid: BP-1:blk_99_1, duration(ns): 60787850")
PAUSE = ("2020-01-02 {ts} WARN org.apache.hadoop.util.JvmPauseMonitor: Detected pause in JVM or host machine (eg GC): "
         "pause of approximately 1520ms")


SLOW_MS = 1000
"""The threshold these tests hold the two paths equal at (the strategies' durations lie around it); the default's
own rule is tested in ``test_writes``."""


def _stamp(ms: int) -> str:
    s, milli = divmod(ms, 1000)
    m, s = divmod(s, 60)
    h, m = divmod(m, 60)
    return f"{9 + h:02d}:{m:02d}:{s:02d},{milli:03d}"


def _ms(stamp: str) -> int:
    """``_stamp``'s inverse."""
    h, m, rest = stamp.split(":")
    s, milli = rest.split(",")
    return ((int(h) - 9) * 3600 + int(m) * 60 + int(s)) * 1000 + int(milli)


_SIZE = st.sampled_from([8761, 64 << 20, 128 << 20])
"""Bytes of a write: a small file's, or a big block's that a healthy pipeline needs seconds for (a big block, not a
stall, up to the floor rate's time)."""
_WRITE = st.tuples(
    st.integers(0, 900),  # gap after the previous write started, ms
    st.one_of(st.integers(1, 400), st.integers(900, 5000), st.none()),  # until it ends by the stamps (None: never)
    st.one_of(st.integers(1, 300), st.integers(990, 4500)),  # the clienttrace duration, ms
    _SIZE,
)


_AWAY_FROM_THE_THRESHOLD = st.tuples(
    st.integers(0, 900),
    st.one_of(st.integers(1, 400), st.integers(900, 960), st.integers(1040, 3000), st.none()),
    st.one_of(st.integers(1, 300), st.integers(990, 2500)),
    _SIZE,
)
"""Writes for logs out of stamp order by up to 30 ms: none ends within 40 ms of the 1 s threshold, where the two
paths may rightly differ (the line path's clock can pass a 999 ms write's deadline on a later-stamped line written
before its end; the block path reads the write's own two stamps)."""


Write = tuple[int, int | None, int, int]
"""Gap after the previous write started, ms until it ends by the stamps (``None``: never), clienttrace ms, bytes."""


def _log(writes: list[Write], noise_every: int, lags: list[int] | None = None,
         ids: list[int] | None = None, start_ms: int = 0) -> list[str]:
    """Lines in the order they are written. With ``lags``, each line is written that many ms (taken in turn) after
    it was stamped, as log4j does when threads wait for the appender: lines of different threads then leave stamp
    order, while one write's own lines keep theirs (its thread goes on only once it has logged the line before).
    With ``ids``, write n names block ``ids[n - 1]``: a replica written again (a recovery, a re-replication).
    ``start_ms``: where the log's time begins (after 09:00)."""
    timed: list[tuple[int, int, str]] = []
    lag = itertools.cycle(lags or [0])
    at = start_ms
    for k, (gap, length, duration, size) in enumerate(writes, start=1):
        n = ids[k - 1] if ids is not None else k
        at += gap
        opened = at + next(lag)
        timed.append((opened, len(timed), receiving(_stamp(at), n)))
        if length is not None:
            end = max(at + length, opened)
            closed = end + next(lag)
            timed.append((closed, len(timed), finished(_stamp(end), n, duration * 1_000_000, size)))
            timed.append((max(closed, end + 1 + next(lag)), len(timed), responder(_stamp(end + 1), n)))
        if noise_every and k % noise_every == 0:
            other = PAUSE if k % (2 * noise_every) == 0 else NOISE
            timed.append((at + gap // 2 + next(lag), len(timed), other.format(ts=_stamp(at + gap // 2))))
    return [line for _, _, line in sorted(timed)]


def _decided(lines: list[str], cuts: list[int] | None, scanner: Scanner | None = None,
             seconds_per_pair: float | None = None) -> tuple[
        list[tuple[str, str, int, int | None]], int]:
    """Block writes in the order they came out, and the routine count; lines fed one by one (``cuts`` None) or as
    blocks cut before ``cuts``; the stdlib scanner and write reader unless ``scanner`` is given."""
    ingest = Ingest(IngestConfig(slow_write_ms=SLOW_MS), scanner)
    if seconds_per_pair is not None:
        ingest.writes.rules = replace(ingest.writes.rules, seconds_per_pair=seconds_per_pair)
    out = []
    if cuts is None:
        for i, line in enumerate(lines):
            out += ingest.feed_line(line, ref=f"dn1.log:{i + 1}", hint=HINT)
    else:
        edges = [0, *sorted({c for c in cuts if 0 < c < len(lines)}), len(lines)]
        for a, b in zip(edges, edges[1:]):
            data = ("\n".join(lines[a:b]) + "\n").encode()
            out += ingest.feed_block(data, file_ref="dn1.log", first_line=a + 1, hint=HINT).outputs
    out += ingest.flush_all()
    got = [(o.phase, o.block, o.ts_ms, o.duration_ms) if isinstance(o, BlockWrite) else (o.type, "", o.ts_ms, None)
           for o in out if isinstance(o, (BlockWrite, JvmPause))]
    return got, ingest.writes.routine


PAIRING = pytest.mark.parametrize("seconds_per_pair", [0.0, 1e9], ids=["stamps read per pair", "runs bisected"])
"""Both ways a plan times its pairs (``write_batch._sparse`` picks one per block) must decide as lines do."""


@PAIRING
@settings(max_examples=200, deadline=None)
@given(st.lists(_WRITE, min_size=1, max_size=60), st.integers(0, 7), st.lists(st.integers(1, 200), max_size=6))
def test_blocks_decide_writes_as_lines_do(seconds_per_pair: float, writes: list[Write], noise_every: int,
                                          cuts: list[int]) -> None:
    lines = _log(writes, noise_every)
    lines.append(receiving(_stamp(sum(w[0] for w in writes) + 5000), len(writes) + 1))
    # Blocks end on a write line: the block path also reads the source's clock off a block's last line, any line,
    # where the line-by-line path reads it off write lines only; that can only move a stalled write's event later.
    ends = [i + 1 for i, line in enumerate(lines) if "Receiving BP-" in line or "op: HDFS_WRITE" in line]
    blocks = [min((e for e in ends if e >= c), default=len(lines)) for c in [3, *cuts]]
    assert _decided(lines, blocks, seconds_per_pair=seconds_per_pair) == _decided(lines, None)  # from the second block on the address is known


@PAIRING
@settings(max_examples=200, deadline=None)
@given(st.lists(_AWAY_FROM_THE_THRESHOLD, min_size=1, max_size=60), st.integers(0, 7),
       st.lists(st.integers(1, 200), max_size=6), st.lists(st.integers(0, 30), min_size=1, max_size=20))
def test_blocks_decide_writes_as_lines_do_when_threads_log_a_little_out_of_stamp_order(
        seconds_per_pair: float, writes: list[Write], noise_every: int, cuts: list[int], lags: list[int]) -> None:
    """The block path finds second changes and deadlines by bisecting on stamps, which assumes time order; a real
    DataNode's lines leave it by a few ms wherever threads interleave. A run of one second is therefore checked
    before its pairs are called fast (an early-stamped line can hide a second between two probes)."""
    lines = _log(writes, noise_every, lags)
    lines.append(receiving(_stamp(sum(w[0] for w in writes) + 5000), len(writes) + 1))
    ends = [i + 1 for i, line in enumerate(lines) if "Receiving BP-" in line or "op: HDFS_WRITE" in line]
    blocks = [min((e for e in ends if e >= c), default=len(lines)) for c in [3, *cuts]]
    assert _decided(lines, blocks, seconds_per_pair=seconds_per_pair) == _decided(lines, None)


@PAIRING
@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(_WRITE, st.integers(1, 6)), min_size=1, max_size=60), st.integers(0, 7),
       st.lists(st.integers(1, 200), max_size=6))
def test_blocks_decide_writes_as_lines_do_when_a_block_id_comes_again(
        seconds_per_pair: float, writes: list[tuple[Write, int]], noise_every: int, cuts: list[int]) -> None:
    """Real DataNodes write a replica again under the same block id (a pipeline recovery, a re-replication), often
    while other writes are open: a block naming an id twice, or ending one before starting it, is still decided
    in bulk for its other writes, and the same as line by line."""
    lines = _log([w for w, _ in writes], noise_every, ids=[i for _, i in writes])
    lines.append(receiving(_stamp(sum(w[0][0] for w in writes) + 5000), 99))
    ends = [i + 1 for i, line in enumerate(lines) if "Receiving BP-" in line or "op: HDFS_WRITE" in line]
    blocks = [min((e for e in ends if e >= c), default=len(lines)) for c in [3, *cuts]]
    assert _decided(lines, blocks, seconds_per_pair=seconds_per_pair) == _decided(lines, None)


@PAIRING
@settings(max_examples=200, deadline=None)
@given(st.lists(_WRITE, min_size=1, max_size=60), st.integers(0, 7), st.lists(st.integers(1, 200), max_size=6),
       st.sets(st.integers(1, 60), max_size=8))
def test_blocks_decide_writes_as_lines_do_when_replicas_are_copied_in(
        seconds_per_pair: float, writes: list[Write], noise_every: int, cuts: list[int], copied: set[int]) -> None:
    """A replica copied in ends with ``Received … of size`` instead of a clienttrace, and nearly every block of a real
    DataNode's file holds one: a block is read in pieces around each (``replica_pieces``), whose writes are decided
    as line by line."""
    lines = []
    for line in _log(writes, noise_every):
        n = int(line.split("blk_", 1)[1].split("_", 1)[0]) if "op: HDFS_WRITE" in line else 0
        lines.append(REPLICA_DONE.format(ts=line[11:23], blk=n, size=8761).replace(
            "BP-2071334356-127.0.0.1-1796118856804", BP) if n in copied else line)
    lines.append(receiving(_stamp(sum(w[0] for w in writes) + 5000), len(writes) + 1))
    ends = [i + 1 for i, line in enumerate(lines)
            if "Receiving BP-" in line or "op: HDFS_WRITE" in line or "Received BP-" in line]
    blocks = [min((e for e in ends if e >= c), default=len(lines)) for c in [3, *cuts]]
    assert _decided(lines, blocks, seconds_per_pair=seconds_per_pair) == _decided(lines, None)


@PAIRING
@pytest.mark.parametrize("probed_from", [block_lines.STEP_MIN_BYTES, 0], ids=["big blocks probed", "all probed"])
@settings(max_examples=200, deadline=None)
@given(st.lists(_WRITE, min_size=1, max_size=40), st.lists(_WRITE, min_size=1, max_size=40), st.integers(31_000, 90_000),
       st.integers(0, 7), st.lists(st.integers(1, 200), max_size=6))
def test_blocks_decide_writes_as_lines_do_when_the_clock_steps_back(
        seconds_per_pair: float, probed_from: int, before: list[Write], after: list[Write], back_ms: int,
        noise_every: int, cuts: list[int]) -> None:
    """An NTP step or a DST fall-back sets a DataNode's stamps back: the source's time runs on from the jump, and a
    plan, which needs its write lines' stamps in order, must not see the step. A block holding one is read in pieces
    around its first stepped-back write line (``step_pieces``, which probes big blocks only), and decides as line by
    line wherever the blocks are cut."""
    first = _log(before, noise_every, start_ms=200_000)
    last_ms = max(_ms(line[11:23]) for line in first)
    lines = first + _log(after, noise_every, ids=list(range(len(before) + 1, len(before) + len(after) + 1)),
                         start_ms=last_ms - back_ms)
    lines.append(receiving(_stamp(last_ms - back_ms + sum(w[0] for w in after) + 5000), 999))
    ends = [i + 1 for i, line in enumerate(lines) if "Receiving BP-" in line or "op: HDFS_WRITE" in line]
    blocks = [min((e for e in ends if e >= c), default=len(lines)) for c in [3, *cuts]]
    with mock.patch.object(block_lines, "STEP_MIN_BYTES", probed_from):
        assert _decided(lines, blocks, seconds_per_pair=seconds_per_pair) == _decided(lines, None)


def _line_steps(first: str, data: bytes) -> tuple[int, Ingest]:
    """The tracker's one-by-one decisions while ``data`` is fed as a block after the line ``first`` (which tells
    the source's address, so the block's writes may be planned)."""
    ingest = Ingest(IngestConfig(slow_write_ms=SLOW_MS))
    ingest.feed_line(first, ref="dn1.log:1", hint=HINT)
    steps: list[int] = []
    decide = ingest.writes.decide
    ingest.writes.decide = lambda *a, **k: (steps.append(1), decide(*a, **k))[1]  # type: ignore[method-assign]
    ingest.feed_block(data, file_ref="dn1.log", first_line=2, hint=HINT)
    return len(steps), ingest


def test_a_block_whose_clock_steps_back_leaves_its_other_writes_to_the_plan() -> None:
    """Only the piece that ends with the first stepped-back write line goes line by line: the writes before and after
    it are planned, and every write is decided as line by line."""
    before = [line for k in range(1, 400) for line in (receiving(_stamp(600_000 + 100 * k), k),
                                                       finished(_stamp(600_000 + 100 * k + 5), k))]
    after = [line for k in range(400, 800) for line in (receiving(_stamp(500_000 + 100 * k), k),
                                                        finished(_stamp(500_000 + 100 * k + 5), k))]
    lines = [*before, *after, receiving(_stamp(600_000), 999)]
    data = ("\n".join(lines[1:]) + "\n").encode()
    stepped = data.find(after[0].encode())
    assert len(data) >= block_lines.STEP_MIN_BYTES
    assert block_lines.step_pieces(data, 0, len(data)) == [(0, stepped, True), (stepped, data.find(b"\n", stepped) + 1,
                                                                                 False),
                                                           (data.find(b"\n", stepped) + 1, len(data), True)]
    steps, ingest = _line_steps(lines[0], data)
    assert steps <= 3  # the stepped-back line, where the source's time starts anew; the others were planned
    assert ingest.stats["clock_steps_back"] == 1
    assert _decided(lines, [1]) == _decided(lines, None)


def test_a_block_with_a_replica_copied_in_leaves_its_other_writes_to_the_plan() -> None:
    """Only the piece that ends with the ``Received`` line goes line by line: the writes around it are planned."""
    lines = [receiving(_stamp(10 * k), k) for k in range(1, 40)] + [finished(_stamp(10 * k + 5), k) for k in range(1, 40)]
    lines.insert(40, REPLICA_DONE.format(ts=_stamp(400), blk=7, size=2503))
    data = ("\n".join(lines[1:]) + "\n").encode()
    received = data.find(b"Received BP-")
    assert [end for _, end in replica_pieces(data)] == [data.rfind(b"\n", 0, received) + 1,
                                                        data.find(b"\n", received) + 1, len(data)]
    steps, _ = _line_steps(lines[0], data)
    assert steps <= 3  # the Received line and its block id's other lines; the other writes were planned


def test_a_block_id_written_twice_leaves_the_blocks_other_writes_to_the_plan() -> None:
    lines = [receiving(_stamp(0), 7), finished(_stamp(20), 7), receiving(_stamp(30), 8), finished(_stamp(40), 8),
             receiving(_stamp(50), 7), finished(_stamp(60), 7)]
    from correlator.core.ingest.write_lines import StdlibWriteReader

    data = ("\n".join(lines) + "\n").encode()
    ingest = Ingest(IngestConfig(slow_write_ms=SLOW_MS))
    plan = plan_writes(data, 0, StdlibWriteReader().find(data), StdlibWriteReader(), {},
                       WriteRules(SLOW_MS, 4000, None, 5000), ingest.writes.stamps("dn1").stamp_at)
    assert plan is not None
    assert plan.routine == 1  # blk_8, in bulk
    assert sorted((s.kind, s.block) for s in plan.steps if s.kind != 0) == [
        (1, "blk_7"), (1, "blk_7"), (CLOSE, "blk_7"), (CLOSE, "blk_7")]


def test_a_line_stamped_early_at_a_blocks_end_hides_no_second_from_the_pairing() -> None:
    """Found by review: a line written 5 ms after its stamp, at a second's edge, closed a block with the second of
    its first line, and the bisection took every line between for that second. A write whose lines were 1,002 ms
    apart by their stamps was counted routine; the line path calls it slow."""
    writes = [(0, 5, 1, 8761), (900, None, 1, 8761), (101, 1002, 1, 8761), (800, 1, 1, 8761), (198, None, 1, 8761)]
    lines = _log(writes, 0, [0] * 10 + [5])
    lines.append(receiving(_stamp(sum(w[0] for w in writes) + 5000), len(writes) + 1))
    ends = [i + 1 for i, line in enumerate(lines) if "Receiving BP-" in line or "op: HDFS_WRITE" in line]
    blocks = [min((e for e in ends if e >= c), default=len(lines)) for c in [3, 11]]
    assert _decided(lines, blocks) == _decided(lines, None)


def test_the_write_line_that_tells_the_address_is_not_decided_twice() -> None:
    """Found by the disorder property test: a first block whose address line was the end of a write read after a
    trigger's record. The line was decided, then planned again from before it, and counted routine besides."""
    lines = _log([(2, 1, 1, 8761), (0, None, 1, 8761)], 1, [1, 0])
    lines.append(receiving(_stamp(5002), 3))
    assert "Detected pause" in lines[0] and "Receiving" in lines[1] and "op: HDFS_WRITE" in lines[2]
    assert _decided(lines, [3]) == _decided(lines, None)


def test_a_close_pattern_match_without_its_phrase_cannot_stand_in_for_another_line() -> None:
    """Found by review: with the pattern starting after ``op: ``, a line the scanner does not count (``op:HDFS_WRITE``)
    matched while a counted line in an older wording did not; the counts agreed and the ids went to the wrong lines,
    so a 5 s write was counted routine. Each pattern now starts with its phrase: such a block goes line by line."""
    older = finished("09:00:05,000", 2, 5_000_000_000).replace(
        "blockid: BP-1473651231-10.20.30.40-1546300800000:blk_2_1, duration(ns)", "blockid: blk_2_1, duration")
    unscanned = finished("09:00:05,001", 3).replace("op: HDFS_WRITE", "op:HDFS_WRITE")
    lines = [*_log([(0, 10, 5, 8761)], 0), receiving("09:00:00,000", 2), older, unscanned]
    assert "blockid: blk_2_1, duration:" in older and "op: HDFS_WRITE" not in unscanned
    got, routine = _decided(lines, [3])
    assert (got, routine) == _decided(lines, None)
    assert ("finished", "blk_2_1") in {(phase, block[-7:]) for phase, block, _, _ in got}


@settings(max_examples=150, deadline=None)
@given(st.lists(_WRITE, min_size=1, max_size=60), st.integers(0, 7))
def test_one_block_read_before_the_address_is_known_decides_as_lines_do(
        writes: list[Write], noise_every: int) -> None:
    """A source's first block: its first write lines tell the DataNode's address, and the rest is planned."""
    lines = _log(writes, noise_every)
    lines.append(receiving(_stamp(sum(w[0] for w in writes) + 5000), len(writes) + 1))
    assert _decided(lines, [len(lines)]) == _decided(lines, None)


def test_a_write_whose_lines_are_seconds_apart_is_slow_although_its_duration_is_short() -> None:
    """The clienttrace duration times only the last packet's acknowledgement; the stamps tell the whole write."""
    lines = [*_log([(0, 10, 5, 8761)], 0), receiving("09:00:01,000", 2), finished("09:00:04,500", 2, 2_000_000),
             responder("09:00:04,501", 2), receiving("09:00:05,000", 3), finished("09:00:05,020", 3, 2_000_000)]
    got, routine = _decided(lines, [3])
    assert [(phase, block[-7:]) for phase, block, _, _ in got if not block.endswith("blk_1_1")] == [
        ("receiving", "blk_2_1"), ("finished", "blk_2_1")]
    assert routine == 1


def test_a_big_block_written_at_a_healthy_rate_is_no_step_of_the_plan() -> None:
    """128 MiB in 2.2 s is 58 MiB/s, above the 32 MiB/s floor: routine on both paths, and the block path counts it
    without handing it to the tracker; 128 MiB in 4.5 s and 8 KiB in 2.2 s are stalls on both."""
    lines = [*_log([(0, 10, 5, 8761)], 0),
             receiving("09:00:01,000", 2), finished("09:00:03,200", 2, 2_150_000_000, 128 << 20),
             receiving("09:00:04,000", 3), finished("09:00:06,200", 3, 2_150_000_000, 8761),
             receiving("09:00:07,000", 4), finished("09:00:11,500", 4, 4_450_000_000, 128 << 20),
             receiving("09:00:20,000", 5)]
    got, routine = _decided(lines, [3])
    assert (got, routine) == _decided(lines, None)
    assert {block[-7:] for _, block, _, _ in got} - {"blk_1_1"} == {"blk_3_1", "blk_4_1", "blk_5_1"}  # 5: never ended
    assert routine == 1
    ingest = Ingest(IngestConfig(slow_write_ms=SLOW_MS))
    reader = ingest.scanner.write_reader
    data = "\n".join(lines[3:]).encode() + b"\n"
    plan = plan_writes(data, 0, reader.find(data), reader, {}, replace(ingest.writes.rules, max_open=0),
                       ingest.writes.stamps("dn1").stamp_at)
    assert plan is not None and plan.routine == 1
    assert {s.block for s in plan.steps if s.block} == {"blk_3", "blk_4", "blk_5"}  # blk_2 is no step


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 2500), min_size=1, max_size=80), st.integers(0, 3))
def test_second_changes_are_found_by_bisection(gaps: list[int], start_line: int) -> None:
    """For lines in time order, bisecting on the stamps finds every line whose second differs from the line
    before, exactly as reading every line would."""
    from correlator.core.ingest.write_timing import second_changes

    at, lines = 0, []
    for gap in gaps:
        at += gap
        lines.append(NOISE.format(ts=_stamp(at)))
    data = ("\n".join(lines) + "\n").encode()
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    first = min(start_line, len(lines) - 1)
    expected = [starts[i] for i in range(first + 1, len(lines)) if lines[i][:19] != lines[i - 1][:19]]
    assert second_changes(data, starts[first]) == expected


def test_a_write_across_a_blocks_edge_that_ended_fast_is_no_step_of_either_plan() -> None:
    """Most slow-looking writes of a sick DataNode only cross a block's edge: the first block's plan leaves the start
    open after its steps, the second counts the end against the start time the tracker kept."""
    lines = [*_log([(0, 10, 5, 8761)], 0), receiving("09:00:01,000", 2), receiving("09:00:01,100", 3),
             finished("09:00:01,600", 2, 500_000_000), finished("09:00:01,700", 3, 500_000_000),
             receiving("09:00:20,000", 4)]
    assert _decided(lines, [3, 5]) == _decided(lines, None)
    ingest = Ingest(IngestConfig(slow_write_ms=SLOW_MS))
    reader, tracker = ingest.scanner.write_reader, ingest.writes
    stamp_at = tracker.stamps("dn1").stamp_at
    first, second = ("\n".join(lines[3:5]) + "\n").encode(), ("\n".join(lines[5:7]) + "\n").encode()
    plan = plan_writes(first, 0, reader.find(first), reader, {}, tracker.rules, stamp_at)
    assert plan is not None and plan.steps == [] and [b for b, _, _ in plan.opened] == ["blk_2", "blk_3"]
    before = {b: ts for b, ts, _ in plan.opened}
    plan = plan_writes(second, 0, reader.find(second), reader, before, tracker.rules, stamp_at)
    assert plan is not None and plan.steps == [] and sorted(plan.closed) == ["blk_2", "blk_3"] and plan.routine == 2
    plan = plan_writes(second, 0, reader.find(second), reader, before, replace(tracker.rules, max_open=0),
                       stamp_at)  # max_open 0: each end is a step, and so is the clock passing a deadline
    assert plan is not None and plan.closed == [] and plan.routine == 0
    assert sorted(s.block for s in plan.steps if s.kind == CLOSE) == ["blk_2", "blk_3"]
