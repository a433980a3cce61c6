"""How long a block's paired writes took, from their clienttrace durations or their lines' stamps: which of them were
slow, found in bulk (runs of lines stamped in one second, pairs apart in the minute, the big blocks a size floor
excuses), and whether the block's stamps step back (the line-by-line path must then take it). ``write_batch`` plans
the block's steps from what this finds."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from correlator.core.ingest.write_lines import WriteLines, WriteReader
from correlator.core.ingest.writes import CLOCK_STEP_BACK_MS, WriteRules

StampAt = Callable[[bytes, int], "int | None"]


@dataclass(frozen=True, slots=True)
class Pairs:
    """A block's write lines by block id (each id once: ``write_batch`` set the others apart)."""

    opened_at: dict[bytes, int]
    ended_at: dict[bytes, int]
    durations: dict[bytes, bytes]
    """The clienttrace duration digits of each end, by id."""
    started: set[bytes]
    paired: set[bytes]

    @classmethod
    def of(cls, lines: WriteLines) -> Pairs:
        opens: list[bytes] = lines.open_ids  # type: ignore[assignment]  # all read: no None among them
        close_ids: list[bytes] = lines.close_ids  # type: ignore[assignment]
        digits: list[bytes] = lines.durations  # type: ignore[assignment]
        durations = dict(zip(close_ids, digits))
        started = set(opens)
        return cls(dict(zip(opens, lines.opens)), dict(zip(close_ids, lines.closes)), durations, started,
                   started & durations.keys())


def slow_writes(block: bytes, start: int, lines: WriteLines, pairs: Pairs, every_line: list[int], rules: WriteRules,
          stamp_at: StampAt, reader: WriteReader) -> set[bytes] | None:
    """The paired writes that were slow: by their clienttrace duration, or by their lines' stamps, less the big
    blocks the floor excuses. ``None`` when the block's stamps step back (the line path must take it)."""
    slow_ms = rules.slow_ms
    slow_ns = slow_ms * 1_000_000
    digits = len(str(slow_ns))
    slow = {b for b, d in pairs.durations.items() if len(d) >= digits and int(d) >= slow_ns} if max(
        map(len, pairs.durations.values()), default=0) >= digits else set()
    unsure = pairs.paired - slow
    if unsure and sparse(block, every_line, len(unsure), rules.seconds_per_pair, stamp_at):
        slow |= apart_in_the_minute(block, unsure, pairs.opened_at, pairs.ended_at, slow_ms, stamp_at, reader)
    else:
        if slow_ms >= 1000 and unsure:  # no pair to judge, no runs to find (a quiet DataNode's block, a Flink log's)
            unsure -= within_one_second(block, start, lines.open_ids, lines.opens,  # type: ignore[arg-type]
                                         lines.close_ids, lines.closes, reader)  # type: ignore[arg-type]
        slow |= late_ends(block, unsure, pairs.opened_at, pairs.ended_at, slow_ms, stamp_at)
    if reader.step_back(block, every_line, CLOCK_STEP_BACK_MS) >= 0:  # the deadlines' bisection needs them in order
        return None
    if rules.floor is not None:
        slow -= big_blocks(block, pairs.paired & slow, pairs.opened_at, pairs.ended_at, pairs.durations, stamp_at,
                            rules.floor, rules.open_ms - SIZED_MARGIN_MS, reader)
    return slow


def within_one_second(block: bytes, start: int, opens: Sequence[bytes], open_at: list[int],
                       close_ids: Sequence[bytes], close_at: list[int], reader: WriteReader) -> set[bytes]:
    """Writes whose start and end lines lie in one run of lines stamped in the same second: less than a second long.

    The runs are found by bisecting the block on its lines' stamps (a few dozen probes per block), and each run's
    starts and ends are intersected as sets, never one write at a time. The bisection assumes time order, which a
    real log leaves by a few ms wherever threads interleave (log4j stamps an event before its thread holds the
    appender; the lab's Flink logs show it), so a line of another second can hide between two probes. A run's pairs
    are therefore trusted only once the reader's ``in_second`` (C speed) shows that every write line of the run carries
    its second (a read stamped a few ms early, as many are on a busy DataNode, does not spoil the run: it is no
    write's start or end); the pairs of a run that fails go to ``late_ends``, which reads their own stamps."""
    runs = [*second_changes(block, start), len(block)]
    within: set[bytes] = set()
    o = c = 0
    run_start = start
    for edge in runs:
        o_end, c_end = bisect_left(open_at, edge, o), bisect_left(close_at, edge, c)
        if (o_end > o and c_end > c and reader.in_second(block, run_start, open_at[o:o_end])
                and reader.in_second(block, run_start, close_at[c:c_end])):
            within.update(set(opens[o:o_end]).intersection(close_ids[c:c_end]))
        o, c, run_start = o_end, c_end, edge
    return within


def second_changes(block: bytes, start: int) -> list[int]:
    """Starts of the lines of ``block[start:]`` whose first 19 bytes (a stamp to the second) differ from those of
    the line before, ascending, if lines are in time order (two equal probes are taken to mean equal lines between
    them; ``within_one_second`` checks that)."""
    def line_start(at: int) -> int:
        return max(start, block.rfind(b"\n", 0, at) + 1)

    def second(line: int) -> bytes:
        return block[line:line + 19]

    last = line_start(len(block) - 1)
    if last <= start:
        return []
    changes: list[int] = []
    todo = [(start, last)]
    while todo:
        lo, hi = todo.pop()
        if second(lo) == second(hi):
            continue
        after_lo = block.find(b"\n", lo) + 1
        if after_lo >= hi:
            changes.append(hi)
            continue
        mid = line_start((lo + hi) // 2)
        if mid <= lo:
            mid = after_lo
        todo += [(mid, hi), (lo, mid)]
    changes.sort()
    return changes


def sparse(block: bytes, every_line: list[int], pairs: int, seconds_per_pair: float, stamp_at: StampAt) -> bool:
    """Whether the block's writes are sparse in time (a quiet or real-world DataNode's log, where lines of other kinds
    separate the writes): its first and last write lines more than ``seconds_per_pair`` per pair apart."""
    first = stamp_at(block, block.rfind(b"\n", 0, every_line[0]) + 1)
    last = stamp_at(block, block.rfind(b"\n", 0, every_line[-1]) + 1)
    return first is not None and last is not None and (last - first) > pairs * seconds_per_pair * 1000


def apart_in_the_minute(block: bytes, pairs: set[bytes], opened_at: Mapping[bytes, int],
                         ended_at: Mapping[bytes, int], slow_ms: int, stamp_at: StampAt,
                         reader: WriteReader) -> set[bytes]:
    """``late_ends`` with each pair's time read natively (``WriteReader.spans``) where its two lines share a
    minute; only pairs across a minute's edge have their stamps read here. Like a run of one second on the other
    path, a pair within a minute is judged on its stamps' digits alone."""
    raws = list(pairs)
    gaps, _ = reader.spans(block, [opened_at[raw] for raw in raws], [ended_at[raw] for raw in raws])
    across = {raw for raw, gap in zip(raws, gaps) if gap is None}
    late = {raw for raw, gap in zip(raws, gaps) if gap is not None and gap >= slow_ms}
    return late | late_ends(block, across, opened_at, ended_at, slow_ms, stamp_at)


def late_ends(block: bytes, pairs: set[bytes], opened_at: Mapping[bytes, int], ended_at: Mapping[bytes, int],
               slow_ms: int, stamp_at: StampAt) -> set[bytes]:
    """Pairs that ended ``slow_ms`` or more after they started by their lines' stamps, although the clienttrace
    duration was short: it times only the last packet's acknowledgement, not the whole write.

    Two lines stamped within the same second (their first 19 bytes equal) are less than a second apart; only the
    other pairs, and all of them when ``slow_ms`` is under a second, have their stamps read."""
    late: set[bytes] = set()
    same_second_is_fast = slow_ms >= 1000
    for raw in pairs:
        o = block.rfind(b"\n", 0, opened_at[raw]) + 1
        c = block.rfind(b"\n", 0, ended_at[raw]) + 1
        if same_second_is_fast and block[o:o + 19] == block[c:c + 19]:
            continue
        began, ended = stamp_at(block, o), stamp_at(block, c)
        if began is None or ended is None or ended - began >= slow_ms:
            late.add(raw)
    return late


SIZED_MARGIN_MS = 1_000
"""The line path emits a write once any write line's stamp passes its start + ``open_ms``; lines leave stamp order
by a few ms, so a write that ended within this margin of that mark is left to the tracker's own step."""


def big_blocks(block: bytes, pairs: set[bytes], opened_at: Mapping[bytes, int], ended_at: Mapping[bytes, int],
                durations: Mapping[bytes, bytes], stamp_at: StampAt, floor: int, before_ms: int,
                reader: WriteReader) -> set[bytes]:
    """Slow pairs that are big blocks, not stalls (the tracker's ``_sized``): they took under ``before_ms`` by their
    stamps and their clienttrace duration, and their ``bytes`` needed that long at ``floor`` bytes per ms. On a
    sick cluster's DataNode big blocks are a large share of the writes; judged here they never become steps.

    The reader gives each pair's time within one minute and its size in one call; a pair's own stamps are read only
    when it spans minutes, and a minute's stamp once, to know that the tracker reads it at all."""
    big: set[bytes] = set()
    raws = list(pairs)
    gaps, sizes = reader.spans(block, [opened_at[raw] for raw in raws], [ended_at[raw] for raw in raws])
    minutes: set[bytes] = set()
    for raw, gap, size in zip(raws, gaps, sizes):
        o = block.rfind(b"\n", 0, opened_at[raw]) + 1
        if gap is None:
            began, ended = stamp_at(block, o), stamp_at(block, block.rfind(b"\n", 0, ended_at[raw]) + 1)
            if began is None or ended is None:
                continue
            gap = ended - began
        elif block[o:o + 16] not in minutes:
            if stamp_at(block, o) is None:
                continue
            minutes.add(block[o:o + 16])
        took = max(gap, int(durations[raw]) // 1_000_000)
        if took < before_ms and took * floor <= size:
            big.add(raw)
    return big

