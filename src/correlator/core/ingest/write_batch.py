"""A block's block-write lines decided together: a routine write never reaches Python line by line.

On a busy DataNode most lines are the ``Receiving …`` and the clienttrace ``op: HDFS_WRITE … duration(ns)`` of
writes that start and end within one block. A ``WriteReader`` gives every start's block id and every end's block id
and duration as lists (``write_lines``); set operations pair them, and a pair whose end reports less than ``slow_ms``
is counted and forgotten (the clienttrace duration spans the whole write, from before its ``Receiving`` line to its
end).

Writes that cross a block's edge are decided in bulk too: an end whose start came in an earlier block (its start
time is in the tracker) is counted when it was fast, and a start still open at the block's end whose deadline lies
beyond the block is added to the tracker's open writes once the block's steps have run. On a sick DataNode many
writes take seconds, and a write that long usually crosses an edge.

What is left is few, and goes through the tracker's own rules at its own byte offset, so the block's events keep the
order of its lines: writes that were slow, and the moments the source's clock passes an open write's deadline (found
by binary search on the lines' stamps). So are the lines of a block id the sets cannot pair: one written again in the
block (a pipeline recovery, a re-replication: real DataNodes log both, often among other open writes), or started
while still open from before it. A block whose write phrases the reader could not all read is left to the
line-by-line path.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from correlator.core.ingest.write_lines import WriteLines, WriteReader
from correlator.core.ingest.write_timing import SIZED_MARGIN_MS, Pairs, StampAt, slow_writes
from correlator.core.ingest.writes import WriteRules, bytes_at

OBSERVE, OPEN, CLOSE = 0, 1, 2
"""Kinds of step; at one offset an observation comes first, as the line-by-line path observes before deciding."""


@dataclass(frozen=True, slots=True)
class Step:
    """One thing the tracker must do at byte ``at`` (a line start): see the clock reach ``ts_ms``, or decide a write."""

    at: int
    kind: int
    ts_ms: int
    block: str = ""
    duration_ms: int = 0


@dataclass(frozen=True, slots=True)
class WritePlan:
    routine: int
    """Writes that ended fast in the block (``closed`` among them): counted, never looked at again."""
    steps: list[Step]
    """What the tracker must do at a line, by ascending offset."""
    closed: list[str] = field(default_factory=list)
    """Writes open before the block that ended fast in it: they leave the tracker's open writes before the steps
    run (no step before their end could have emitted them: see ``_ended_fast``)."""
    opened: list[tuple[str, int, int]] = field(default_factory=list)
    """Writes still open at the block's end, each (block id, start ms, line offset) in line order: they join the
    tracker's open writes after the steps, as the last ones in (each starts after every ``OPEN`` step)."""




def plan_writes(block: bytes, start: int, lines: WriteLines, reader: WriteReader, open_before: Mapping[str, int],
                rules: WriteRules, stamp_at: StampAt) -> WritePlan | None:
    """The plan for ``block[start:]`` of one source. ``lines``: the write lines there, as ``reader`` read them;
    ``open_before``: the source's writes still open (block id → start ms); ``rules``: the tracker's. ``None`` when
    the block needs the line-by-line path."""
    if not lines.all_read:
        return None
    every_line = sorted(lines.opens + lines.closes)
    lines, steps = _set_apart(block, start, lines, _odd_ids(lines, open_before), stamp_at)
    if steps is None:
        return None
    pairs = Pairs.of(lines)
    slow = slow_writes(block, start, lines, pairs, every_line, rules, stamp_at, reader)
    if slow is None:
        return None
    routine = len(pairs.paired - slow)
    for raw in (pairs.started - pairs.durations.keys()) | (pairs.paired & slow):
        at = max(start, block.rfind(b"\n", 0, pairs.opened_at[raw]) + 1)
        if (ts := stamp_at(block, at)) is None:
            return None
        steps.append(Step(at, OPEN, ts, raw.decode("ascii")))
    bulk = 0 < rules.max_open and len(open_before) + len(every_line) < rules.max_open  # no start evicts a write
    closed: list[str] = []
    for raw in (pairs.durations.keys() - pairs.started) | (pairs.paired & slow):
        at = max(start, block.rfind(b"\n", 0, pairs.ended_at[raw]) + 1)
        if (ts := stamp_at(block, at)) is None:
            return None
        block_id, duration_ms = raw.decode("ascii"), int(pairs.durations[raw]) // 1_000_000
        began = open_before.get(block_id) if bulk and raw not in pairs.started else None
        if began is not None and _ended_fast(block, at, ts - began, duration_ms, rules):
            closed.append(block_id)
        else:
            steps.append(Step(at, CLOSE, ts, block_id, duration_ms))
    gone = set(closed)
    beyond = _deadline_steps(block, every_line, [ts for b, ts in open_before.items() if b not in gone], steps,
                             rules.open_ms, stamp_at)
    opened: list[tuple[str, int, int]] = []
    if bulk and beyond is not None:
        opened = _open_at_the_end(steps, rules.open_ms, beyond, open_before.keys())
        staying = {b for b, _, _ in opened}
        steps = [s for s in steps if s.kind != OPEN or s.block not in staying]
    steps.sort(key=lambda s: (s.at, s.kind))
    return WritePlan(routine + len(closed), steps, closed, opened)


def _deadline_steps(block: bytes, every_line: list[int], open_since: list[int], steps: list[Step], open_ms: int,
                    stamp_at: StampAt) -> int | None:
    """An ``OBSERVE`` step (appended to ``steps``) at the first write line whose stamp passes each open write's
    deadline (those open before the block, ``open_since``, and the block's ``OPEN`` steps); the first deadline no
    write line of the block passes, if any: it and the later ones are the block-end clock's."""
    deadlines = sorted({ts + open_ms for ts in open_since} | {s.ts_ms + open_ms for s in steps if s.kind == OPEN})
    probed: dict[int, int | None] = {}
    for deadline in deadlines:
        passed = _first_write_at_or_after(block, every_line, deadline, stamp_at, probed)
        if passed is None:
            return deadline
        steps.append(Step(passed, OBSERVE, deadline))
    return None


def _odd_ids(lines: WriteLines, open_before: Mapping[str, int]) -> set[bytes]:
    """Block ids the set pairing cannot take: started or ended twice in the block (a replica written again after a
    recovery or a re-replication: real DataNodes log both), started while still open from before the block, or
    ended before their only start there."""
    first_open: dict[bytes | None, int] = {}
    odd: set[bytes] = {raw.encode("ascii") for raw in open_before}.intersection(lines.open_ids) if open_before else set()
    for raw, at in zip(lines.open_ids, lines.opens):
        if first_open.setdefault(raw, at) != at:
            odd.add(raw)  # type: ignore[arg-type]  # all read
    seen: set[bytes | None] = set()
    for raw, at in zip(lines.close_ids, lines.closes):
        if raw in seen or first_open.get(raw, at) > at:
            odd.add(raw)  # type: ignore[arg-type]
        seen.add(raw)
    return odd


def _set_apart(block: bytes, start: int, lines: WriteLines, odd: set[bytes],
               stamp_at: StampAt) -> tuple[WriteLines, list[Step] | None]:
    """The write lines without those of ``odd`` ids, and those lines as steps: the tracker decides each one in line
    order, exactly as the line path would. ``None`` steps when such a line has no stamp."""
    if not odd:
        return lines, []
    steps: list[Step] = []
    keep_o = [i for i, raw in enumerate(lines.open_ids) if raw not in odd]
    keep_c = [i for i, raw in enumerate(lines.close_ids) if raw not in odd]
    for kind, offsets, ids, digits in ((OPEN, lines.opens, lines.open_ids, None),
                                       (CLOSE, lines.closes, lines.close_ids, lines.durations)):
        for i, raw in enumerate(ids):
            if raw not in odd:
                continue
            at = max(start, block.rfind(b"\n", 0, offsets[i]) + 1)
            ts = stamp_at(block, at)
            if ts is None or raw is None:
                return lines, None
            took = int(digits[i] or 0) // 1_000_000 if digits is not None else 0
            steps.append(Step(at, kind, ts, raw.decode("ascii"), took))
    kept = WriteLines([lines.opens[i] for i in keep_o], [lines.open_ids[i] for i in keep_o],
                      [lines.closes[i] for i in keep_c], [lines.close_ids[i] for i in keep_c],
                      [lines.durations[i] for i in keep_c])
    return kept, steps


def _ended_fast(block: bytes, at: int, gap_ms: int, duration_ms: int, rules: WriteRules) -> bool:
    """Whether the end at ``at`` of a write open before the block (``gap_ms`` after its start by the stamps) is one
    the tracker counts routine: it took under ``slow_ms``, or was a big block (``big_blocks``' rule). It must also
    have ended ``SIZED_MARGIN_MS`` or more before its deadline, so that no line before its end could have emitted it
    on the line path either."""
    if gap_ms >= rules.open_ms - SIZED_MARGIN_MS:
        return False
    took = max(gap_ms, duration_ms)
    return took < rules.slow_ms or (rules.floor is not None and took < rules.open_ms
                                    and took * rules.floor <= bytes_at(block, at))


def _open_at_the_end(steps: list[Step], open_ms: int, beyond: int,
                     open_before: Collection[str]) -> list[tuple[str, int, int]]:
    """The starts still open at the block's end that can join the tracker's open writes after the steps: each one's
    deadline is ``beyond`` or later (no step of the block emits it), no end of the block closes it, and no ``OPEN``
    step comes after it (the open writes keep line order: a deadline emits the oldest first, and waits for it)."""
    ending = {s.block for s in steps if s.kind == CLOSE}
    starts = sorted((s for s in steps if s.kind == OPEN), key=lambda s: s.at)
    again = {block for block, n in Counter(s.block for s in starts).items() if n > 1}.union(open_before)
    """Started again (twice in the block, or while open from before it): its new start time counts from its line on,
    and the tracker keeps it where its first start put it."""
    suffix: list[tuple[str, int, int]] = []
    for step in reversed(starts):
        if step.block in ending or step.block in again or step.ts_ms + open_ms < beyond:
            break
        suffix.append((step.block, step.ts_ms, step.at))
    suffix.reverse()
    return suffix


def _first_write_at_or_after(block: bytes, write_hits: list[int], ts_ms: int, stamp_at: StampAt,
                             probed: dict[int, int | None]) -> int | None:
    """Start of the first write line (``write_hits``: where its phrase is, ascending) stamped ``ts_ms`` or later:
    the line-by-line path looks at the source's clock on write lines only. A binary search finds it where the
    write lines are in time order; a few ms of disorder among them can move the step a few lines on, and with it
    where a stalled write's event falls among its neighbours'. ``None`` if there is none.

    ``probed`` keeps each probed line's stamp by index: the searches of one block's deadlines (one per open write)
    all start with the same probes, and a kept stamp changes no search's path."""
    lo, hi = 0, len(write_hits)
    while lo < hi:
        mid = (lo + hi) // 2
        if mid in probed:
            ts = probed[mid]
        else:
            ts = probed[mid] = stamp_at(block, block.rfind(b"\n", 0, write_hits[mid]) + 1)
        if ts is not None and ts >= ts_ms:
            hi = mid
        else:
            lo = mid + 1
    return block.rfind(b"\n", 0, write_hits[lo]) + 1 if lo < len(write_hits) else None
