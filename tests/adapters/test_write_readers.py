"""The native write reader is the stdlib reader's twin: equal results on any bytes, well-formed or not."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from correlator.adapters.scanners import available_scanners, fastest_scanner
from correlator.adapters.write_readers import NativeWriteReader
from correlator.core.ingest.ingest import Ingest, IngestConfig
from correlator.core.ingest.burst_lines import Held, HeldBursts
from correlator.core.ingest.write_lines import StdlibWriteReader
from tests.core.ingest.test_write_batch import _AWAY_FROM_THE_THRESHOLD, _decided, _log, _stamp
from tests.core.ingest.test_writes import HINT, finished, receiving, responder

NATIVE = NativeWriteReader()
STDLIB = StdlibWriteReader()

# Pieces of real write lines and what breaks them: a log line cut anywhere, a field missing or doubled, a phrase
# inside another line's fields, bytes the patterns stop at.
_PIECES = [
    b"2020-01-02 08:00:01,001 INFO DataNode: ", b"2020-01-02 08:00:02,999 ", b"Receiving BP-", b"Receiving BP-1-2-3",
    b"BP-1473651231-10.20.30.40-1546300800000", b":blk_", b"blk_", b"1117000001", b"_", b"_44000001", b" src: /1:2",
    b"op: HDFS_WRITE", b"op: HDFS_READ", b", cliID: ", b"DFSClient_1", b", offset: ", b"0", b", srvID: ", b"6f0a",
    b", blockid: ", b", duration(ns): ", b", duration: ", b"(ns)", b": ", b"18123450", b"9" * 30, b"\n", b" ", b":",
    b",", b"\xff\xfe", b"\r\n", b"\x00",
]
_LINES = [
    receiving("08:00:00,001", 7).encode(), finished("08:00:00,400", 7).encode(), responder("08:00:00,401", 7).encode(),
    finished("08:00:03,000", 8, ns=2_500_000_000).encode(),
    finished("08:00:00,400", 9).replace("duration(ns)", "duration").encode(),
]


@st.composite
def _blocks(draw: st.DrawFn) -> bytes:
    parts = draw(st.lists(st.one_of(st.sampled_from(_PIECES), st.sampled_from(_LINES), st.binary(max_size=6),
                                    st.sampled_from(_LINES).flatmap(lambda line: st.integers(0, len(line)).map(
                                        lambda cut, line=line: line[:cut]))), max_size=40))
    return b"".join(parts)


@settings(max_examples=1500, deadline=None)
@given(_blocks())
def test_native_reader_finds_and_reads_what_the_stdlib_reader_does(block: bytes) -> None:
    assert NATIVE.find(block) == STDLIB.find(block)


@settings(max_examples=1000, deadline=None)
@given(_blocks(), st.integers(-2, 400), st.lists(st.integers(-2, 420), max_size=8))
def test_native_reader_sees_lines_of_one_second_as_the_stdlib_reader_does(block: bytes, first: int,
                                                                         offsets: list[int]) -> None:
    assert NATIVE.in_second(block, first, offsets) == STDLIB.in_second(block, first, offsets)


_SIZED = [
    b"2020-01-02 08:00:01,100 INFO Receiving\n", b"2020-01-02 08:00:59,999 INFO src: a, bytes: 134217728, op\n",
    b"2020-01-02 08:01:00,000 INFO bytes:  12 ,\n", b"2020-01-02 08:00:0x,100 INFO bytes: 7\n",
    b"2020-01-02T08:00:01,100 bytes: 99999999999999999999999\n", b"2020-01-02 08:00:01.1 bytes: -5, x\n",
]


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(_SIZED), st.sampled_from(_LINES), st.binary(max_size=6)), max_size=20)
       .map(b"".join).flatmap(lambda block: st.tuples(st.just(block), st.lists(
           st.tuples(st.integers(0, len(block)), st.integers(0, len(block))), max_size=12))))
def test_native_reader_times_and_sizes_pairs_as_the_stdlib_reader_does(case: tuple[bytes, list[tuple[int, int]]]) -> None:
    block, pairs = case
    opens, closes = [o for o, _ in pairs], [c for _, c in pairs]
    assert NATIVE.spans(block, opens, closes) == STDLIB.spans(block, opens, closes)


_STAMPED = [
    b"2020-01-02 08:00:01,100 INFO x\n", b"2020-01-02 07:59:00,000 INFO x\n", b"2020-01-02 08:00:31,101 INFO x\n",
    b"2019-12-31 23:59:59,999 x\n", b"2020-02-30 08:00:00,000 x\n", b"2020-02-29 08:00:00,000 x\n",
    b"1900-02-29 08:00:00,000 x\n", b"0000-01-01 00:00:00,000 x\n", b"2020-01-02 24:00:00,000 x\n",
    b"2020-01-02 08:60:00,000 x\n", b"2020-01-02 08:00:99,999 x\n", b"2020-01-02T08:00:01,100 x\n",
    b"2020-01-02 08:00:01.100 x\n", b"2020-13-02 08:00:01,100 x\n", b"2020-01-02 08:00:01,1\n",
]


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(_STAMPED), st.binary(max_size=6)), max_size=20)
       .map(b"".join).flatmap(lambda block: st.tuples(st.just(block), st.lists(st.integers(0, len(block)), max_size=12)
                                                      .map(sorted), st.sampled_from([0, 1000, 30_000, 10**12]))))
def test_native_reader_finds_a_step_back_where_the_stdlib_reader_does(case: tuple[bytes, list[int], int]) -> None:
    block, offsets, back_ms = case
    assert NATIVE.step_back(block, offsets, back_ms) == STDLIB.step_back(block, offsets, back_ms)


def test_a_step_back_is_counted_from_the_newest_line_before_it_in_wall_time() -> None:
    lines = [b"2020-01-01 00:00:10,000 a\n", b"2019-12-31 23:59:59,000 b\n", b"2020-01-01 00:00:40,001 c\n",
             b"2020-01-01 00:00:10,000 d\n"]
    block = b"".join(lines)
    starts = [block.find(line) for line in lines]
    for reader in (NATIVE, STDLIB):
        assert reader.step_back(block, starts, 30_000) == 3  # 30.001 s back from the newest; 11 s back is no step
        assert reader.step_back(block, starts[:3], 30_000) == -1
        assert reader.step_back(block, starts, 10_000) == 1


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=300).flatmap(lambda block: st.tuples(st.just(block), st.integers(-400, 400),
                                                               st.integers(-400, 400))))
def test_native_reader_counts_newlines_as_bytes_count_does(case: tuple[bytes, int, int]) -> None:
    block, start, end = case
    assert NATIVE.newlines(block, start, end) == STDLIB.newlines(block, start, end) == block.count(b"\n", start, end)


def test_a_pair_is_timed_within_its_minute_only_and_sized_by_its_second_line() -> None:
    block = b"".join(_SIZED)
    starts = [0, len(_SIZED[0]), len(_SIZED[0]) + len(_SIZED[1])]
    for reader in (NATIVE, STDLIB):
        gaps, sizes = reader.spans(block, [starts[0] + 30, starts[0], starts[1]], [starts[1] + 40, starts[2], starts[2]])
        assert gaps == [58_899, None, None]  # 08:00:01,100 to 08:00:59,999; across a minute: no gap
        assert sizes == [134_217_728, 12, 12]
        with pytest.raises(IndexError):
            reader.spans(block, [len(block) + 1], [0])


def test_lines_of_one_second_are_told_from_a_line_of_the_next() -> None:
    lines = [receiving(f"08:00:07,{ms:03d}", ms).encode() + b"\n" for ms in (1, 500, 999)]
    block = b"".join(lines) + receiving("08:00:08,000", 1000).encode() + b"\n"
    starts = [0, len(lines[0]), len(lines[0]) + len(lines[1])]
    next_second = len(b"".join(lines))
    for reader in (NATIVE, STDLIB):
        assert reader.in_second(block, 0, [at + 30 for at in starts]) is True  # any offset within the line
        assert reader.in_second(block, 0, [starts[1], next_second + 5]) is False
        assert reader.in_second(block, next_second, [next_second + 40]) is True
        assert reader.in_second(b"08:00\n" + block, 0, [0]) is False  # a first line shorter than a stamp


def test_a_phrase_the_pattern_cannot_read_is_listed_unread() -> None:
    block = (receiving("08:00:00,001", 7) + "\n" + "2020-01-02 08:00:00,002 INFO x: Receiving BP-oops\n").encode()
    for reader in (NATIVE, STDLIB):
        lines = reader.find(block)
        assert lines.open_ids == [b"blk_7", None] and not lines.all_read
        assert lines.since(block.index(b"2020", 1)).open_ids == [None]


def test_bytes_a_c_string_would_stop_at_are_read_as_the_patterns_read_them() -> None:
    """A NUL inside a token is a token byte to ``re``, not an end; a line cut at the block's end reads nothing."""
    line = receiving("08:00:00,001", 7).encode()
    nul = line.replace(b"BP-1473651231", b"BP-14\x0073651231")
    cut = finished("08:00:00,400", 7).encode()[:-3]
    for block in (nul, nul + b"\n" + cut, cut):
        assert NATIVE.find(block) == STDLIB.find(block)
    assert NATIVE.find(nul).open_ids == [b"blk_7"]
    assert NATIVE.find(cut).close_ids == [b"blk_7"]  # the duration's digits end where the block does


def test_the_installed_scanners_use_the_native_reader() -> None:
    """CI builds the extension: a silent fall back to the stdlib reader would cost half the parse."""
    assert fastest_scanner().write_reader.name == "native"
    assert all(scanner.write_reader.name == "native" for scanner in available_scanners())


@pytest.mark.parametrize("slow_ms", [300, 1000])
def test_blocks_decide_alike_with_either_reader(slow_ms: int) -> None:
    lines = []
    for n in range(200):
        second, ms = divmod(n * 37, 1000)
        took = 2_000_000_000 if n % 41 == 0 else 1_812_345
        lines += [receiving(f"08:{second // 60:02d}:{second % 60:02d},{ms:03d}", n),
                  finished(f"08:{second // 60:02d}:{second % 60:02d},{ms:03d}", n, ns=took)]
    data = ("\n".join(lines) + "\n").encode()
    outputs = []
    for scanner in (fastest_scanner(), None):
        ingest = Ingest(IngestConfig(slow_write_ms=slow_ms), scanner)
        result = ingest.feed_block(data, file_ref="dn1.log", first_line=1, hint=HINT).outputs + ingest.flush_all()
        outputs.append((result, ingest.writes.routine))
    assert outputs[0] == outputs[1]
    assert outputs[0][1] > 150  # most writes were routine: decided by the plan, not line by line


@settings(max_examples=300, deadline=None)
@given(st.lists(_AWAY_FROM_THE_THRESHOLD, min_size=1, max_size=60), st.integers(0, 7),
       st.lists(st.integers(1, 200), max_size=6), st.lists(st.integers(0, 30), min_size=1, max_size=20))
def test_with_the_native_reader_blocks_decide_writes_as_lines_do_out_of_stamp_order(
        writes: list[tuple[int, int | None, int]], noise_every: int, cuts: list[int], lags: list[int]) -> None:
    """The core's disorder property (``test_write_batch``), on the scanner and reader the worker and CLI use."""
    lines = _log(writes, noise_every, lags)
    lines.append(receiving(_stamp(sum(w[0] for w in writes) + 5000), len(writes) + 1))
    ends = [i + 1 for i, line in enumerate(lines) if "Receiving BP-" in line or "op: HDFS_WRITE" in line]
    blocks = [min((e for e in ends if e >= c), default=len(lines)) for c in [3, *cuts]]
    assert _decided(lines, blocks, fastest_scanner()) == _decided(lines, None)


_STORM = [
    b"WARN DataNode: Slow BlockReceiver write data to disk cost:%dms (threshold=300ms), volume=file:/d/1, blockId=7",
    b"WARN DataNode: Slow flushOrSync took %dms (threshold=300ms), isSync:true, blockId=7",
    b"WARN FsDatasetImpl: Removed block 7 from memory with missing block file on the disk %d",
    b"WARN DataNode: Slow PacketResponder send ack to upstream took  %dms (threshold=300ms)",
    b"INFO DataNode: noise %d ms (threshold=",
]


@st.composite
def _storm(draw: st.DrawFn) -> tuple[bytes, list[tuple[int, int]], int, HeldBursts]:
    """A block of storm lines (stamps in two seconds, some broken, continuation lines), hits at its phrases and
    anywhere, and held bursts with limits near the lines' values."""
    lines = []
    for _ in range(draw(st.integers(0, 14))):
        second = draw(st.sampled_from([b"07", b"08", b"7x"]))
        millis = draw(st.sampled_from([b"%03d" % draw(st.integers(0, 999)), b"1x3", b"12"]))
        sep = draw(st.sampled_from([b",", b",", b".", b":"]))
        body = draw(st.sampled_from(_STORM)) % draw(st.sampled_from([0, 300, 999, 1200, 10 ** 17]))
        lines.append(draw(st.sampled_from([b"2020-01-02 08:00:" + second + sep + millis + b" " + body,
                                           b"\tat continuation", body])))
    block = b"\n".join(lines) + draw(st.sampled_from([b"\n", b""]))
    hits = sorted({(at, i % 5) for i, phrase in enumerate((b"Slow", b"Removed", b"noise")) for at in
                   _all(block, phrase)} | set(draw(st.lists(st.tuples(st.integers(-3, len(block) + 3),
                                                                    st.integers(-1, 7)), max_size=4))))
    held = tuple(Held(draw(st.integers(T - 2000, T + 1500)), draw(st.integers(T - 12_000, T + 500)),
                      draw(st.sampled_from([-1, 0, 999, 1200, 5000])), draw(st.sampled_from([1500, 5000])),
                      draw(st.booleans())) for _ in range(draw(st.integers(0, 3))))
    kinds = bytes(draw(st.lists(st.integers(0, 4), min_size=0, max_size=7)))
    bursts = HeldBursts(held, kinds, draw(st.sampled_from([b"2020-01-02 08:00:07", b"2020-01-02 08:00:0", b""])),
                        T, draw(st.sampled_from([10_000, 500])), draw(st.sampled_from([T + 600, 1 << 62])),
                        draw(st.integers(-1, len(block) + 1)), draw(st.integers(0, len(block))),
                        draw(st.integers(0, 7)))
    return block, hits, draw(st.integers(-1, len(hits))), bursts


T = 1_577_952_007_000


def _all(block: bytes, phrase: bytes) -> list[int]:
    found, at = [], block.find(phrase)
    while at >= 0:
        found.append(at)
        at = block.find(phrase, at + 1)
    return found


@settings(max_examples=600, deadline=None)
@given(_storm())
def test_native_reader_runs_bursts_as_the_stdlib_reader_does(case: tuple[bytes, list[tuple[int, int]], int,
                                                                         HeldBursts]) -> None:
    block, hits, first, bursts = case
    assert NATIVE.burst_run(block, hits, first, bursts) == STDLIB.burst_run(block, hits, first, bursts)


def test_a_storm_second_is_one_run_until_a_line_it_cannot_vouch_for() -> None:
    stamp = b"2020-01-02 08:00:07,%03d "
    lines = [stamp % 1 + _STORM[0] % 400, stamp % 2 + _STORM[1] % 900, stamp % 3 + _STORM[0] % 350,
             stamp % 4 + _STORM[0] % 2000,  # longer than the held burst's longest: its event's sample changes
             stamp % 5 + _STORM[0] % 310]
    block = b"\n".join(lines) + b"\n"
    hits = [(block.index(b"Slow", block.index(line)), 0 if b"disk" in line else 1) for line in lines]
    bursts = HeldBursts((Held(T, T - 500, 1000, 1500, True), Held(T, T - 100, 1000, 1500, True)), b"\x01\x02",
                        b"2020-01-02 08:00:07", T, 10_000, 1 << 62, len(block), 0, 5)
    for reader in (NATIVE, STDLIB):
        run = reader.burst_run(block, hits, 0, bursts)
        assert run.next_hit == 3 and run.decided_until == block.index(lines[3])
        assert run.extended == ((2, T + 3, T - 500), (1, T + 2, T + 2 - 900))
