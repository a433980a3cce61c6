"""The block path of :class:`correlator.core.ingest.ingest.Ingest`: one scan over many lines, only hits looked at.

A block is complete lines of one source: a slice of a plain log file, or the values of consecutive Kafka records of
one source joined by newlines. Noise lines between hits are counted, never decoded.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from correlator.core.events import Event
from correlator.core.ingest.block_lines import is_burst_line, is_write_line, line_end, line_fits, no_hit_on_line
from correlator.core.ingest.block_port import BlockIngest
from correlator.core.ingest.burst_lines import BurstRun, HeldBursts
from correlator.core.ingest.bursts import FAST_PHRASES
from correlator.core.ingest.config import Output
from correlator.core.ingest.line_numbers import LineNumbers
from correlator.core.ingest.multiline import NEXT_RECORD_BYTES, RECORD_START_BYTES
from correlator.core.ingest.prefilter import (OPEN_INDEX, PHRASES, WRITE, WRITE_FROM, WRITE_PHRASES, BlockHits,
                                              with_received)
from correlator.core.ingest.progress import local_stamp
from correlator.core.ingest.records import Origin
from correlator.core.ingest.write_batch import OBSERVE, OPEN, Step, WritePlan, plan_writes
from correlator.core.ingest.writes import Line, block_at, duration_at


FAST_BURSTS = {PHRASES.index(p): kind for p, kind in FAST_PHRASES.items()}
WRITE_BYTES = tuple(p.encode() for p in WRITE_PHRASES)
KIND_INDEXES = {kind: [i for i, its in FAST_BURSTS.items() if its == kind] for kind in set(FAST_BURSTS.values())}
"""Per burst kind, the phrase indexes of its lines."""
_SLOW_MS = re.compile(rb"[ :](\d+)ms \(threshold=")


@functools.cache
def _mask(kinds: tuple[str, ...]) -> bytes:
    """A ``HeldBursts``' ``kinds`` for bursts of these kinds, in this order."""
    mask = bytearray(len(PHRASES))
    for slot, kind in enumerate(kinds):
        for index in KIND_INDEXES[kind]:
            mask[index] = slot + 1
    return bytes(mask)


class BlockReader:
    """Walks one block: skip noise between hits, feed each hit's whole record (and the line that closes it).

    Block-write lines go to the write tracker one by one (most are counted there); after the block, the source's
    clock is the time of its last line. Refs are ``file_ref:line``, or ``file_ref@offset`` when each line of the block
    is one Kafka record and ``offsets`` lists their offsets. Every line of the block is of the source ``origin``
    names, and its stamps are read by that source's clock (``stamps``).
    """

    def __init__(self, ingest: BlockIngest, block: bytes, file_ref: str, first_line: int, origin: Origin,
                 out: list[Output], *, offsets: Sequence[int] | None = None, now_ms: int | None = None,
                 planned: bool = True):
        self.ingest = ingest
        self.block = block
        self.file_ref = file_ref
        self.first_line = first_line
        self.offsets = offsets
        self.now_ms = now_ms
        self.origin = origin
        self.planned = planned
        """Whether the block's writes may be planned (a piece holding a clock's step back is read line by line)."""
        self.key = origin.key
        self.stamps = ingest.writes.stamps(self.key)
        self.out = out
        self.pos = 0
        self.decided_until = 0
        """End of the last write line decided from its bytes without moving ``pos``; a plan starts after it."""
        self._numbers = LineNumbers(block, first_line, ingest.scanner.write_reader.newlines)
        self.fed_newlines = 0
        """Newlines of the lines handed on one by one; all others were skipped as noise without being counted."""
        self.newlines = 0
        """The block's newlines, known once ``run`` ends: the next block's first line follows without a recount."""

    def run(self) -> None:
        self._edge_progress(first=True)
        try:
            self._run()
        finally:
            self.ingest.writes.settle(self.key, self._materialise)
        self.newlines = self._numbers.at(len(self.block)) - self.first_line
        self.ingest.count_skipped(self.newlines - self.fed_newlines)
        self._observe_clock(self._edge_progress(first=False))

    def _run(self) -> None:
        block, n = self.block, len(self.block)
        if self.ingest.open_record(self.key) is not None:
            while self.pos < n and not RECORD_START_BYTES.match(block, self.pos):
                self._feed_to(line_end(self.block, self.pos))
        found = with_received(self.ingest.scanner.hits(block), block)
        addressed = self.ingest.writes.addressed(self.key) is not None
        plan = self._plan(found)
        if plan is None and self._walk(found.merged(), None, until_addressed=not addressed):
            plan = self._plan(found)  # the line that told the source's address was just read: plan the rest
            self._walk(found.triggers if plan is not None else found.merged(), plan)
        elif plan is not None:
            self._walk(found.triggers, plan)
        if self.pos < n:
            self.pos = self._record_start(n - 1)
            if plan is not None and is_write_line(self.block, self.pos):
                self.decided_until = n
            if self.pos < self.decided_until:  # the last line was a write decided without being read
                self.pos = n
            else:
                self._feed_to(n)

    def _walk(self, hits: list[tuple[int, int]], plan: WritePlan | None, *, until_addressed: bool = False) -> bool:
        """Feed each trigger hit's record and run the plan's steps in offset order; without a plan, write hits go
        one by one. True when it stopped after the write line that told the source's address (``until_addressed``)."""
        block, n = self.block, len(self.block)
        steps = plan.steps if plan is not None else []
        step = 0
        i = 0
        while i < len(hits):
            hit, index = hits[i]
            i += 1
            if hit < self.pos:
                continue
            if index >= WRITE_FROM:
                if plan is None:
                    self._write_fast(hit, index == OPEN_INDEX)
                    if until_addressed and self.ingest.writes.addressed(self.key) is not None:
                        return True
                continue
            if hit < self.decided_until:
                continue
            if index in FAST_BURSTS:
                line = block.rfind(b"\n", 0, hit) + 1
                while step < len(steps) and steps[step].at < line:  # the plan's steps keep their place in line order
                    self._step(steps[step])
                    step += 1
                step_at = steps[step].at if step < len(steps) else n
                if not self._open_is_candidate():
                    after = self._burst_run(hits, i - 1, FAST_BURSTS[index], line, step_at)  # from this line on
                    if after >= i:
                        i = after
                        continue
                if self._burst_fast(hit, index, line):
                    i = self._burst_run(hits, i, FAST_BURSTS[index], line, step_at)
                    continue
            start = self._record_start(hit)
            while step < len(steps) and steps[step].at < start:
                self._step(steps[step])
                step += 1
            self.pos = start
            if not self._whole_line_record(hit):
                self._feed_record(hit, hits, i, plan)
        for rest in steps[step:]:
            self._step(rest)
        if plan is not None and plan.opened:
            source = self.ingest.writes.addressed(self.key)
            assert source is not None
            self.ingest.writes.still_open(source, plan.opened)
        return False

    def _plan(self, found: BlockHits) -> WritePlan | None:
        """The block's writes decided together, once the source's address is known (see ``write_batch``)."""
        tracker = self.ingest.writes
        source = tracker.addressed(self.key)
        if source is None or found.received or not self.planned:
            return None
        pos = self.pos if self.decided_until <= self.pos else line_end(self.block, self.decided_until)  # never twice
        plan = plan_writes(self.block, pos, found.writes.since(pos), self.ingest.scanner.write_reader,
                           tracker.open_starts(source), tracker.rules, self.stamps.stamp_at)
        if plan is not None:
            tracker.planned(source, plan.routine, plan.closed, self.now_ms)
        return plan

    def _step(self, step: Step) -> None:
        """One step of the plan, at a write line (or, for a deadline, the line where the clock passes it): like that
        write line on the line-by-line path, it first ends the source's open record."""
        self.ingest.end_open_record(self.key, self.out, self._materialise)
        tracker = self.ingest.writes
        source = tracker.addressed(self.key)
        assert source is not None
        lines: list[Line] = []
        if step.kind == OBSERVE:
            tracker.observe(source, step.ts_ms, lines, self._materialise, read=False)
        else:
            tracker.decide(source, step.ts_ms, step.block, step.kind == OPEN, step.duration_ms, (None, None, step.at),
                           lines, self._materialise)
        if lines:
            self.ingest.parse_lines(lines, self.out)

    def _feed_record(self, hit: int, hits: list[tuple[int, int]], i: int, plan: WritePlan | None) -> None:
        """Feed the hit's record from ``pos``: its lines to the hit's, the lines that continue it, and the line that
        closes it where that line must be read (``hits[i:]``: the hits not walked yet)."""
        block, n = self.block, len(self.block)
        self._feed_to(line_end(block, hit))
        while self.pos < n:
            starts = RECORD_START_BYTES.match(block, self.pos) is not None
            if not starts and self._open_is_candidate():
                self._feed_continuation()
                continue
            if starts and line_fits(block, self.pos, self.ingest.max_line_bytes) and (
                    no_hit_on_line(block, hits, i, self.pos) or (plan is not None and is_write_line(block, self.pos))
                    or is_burst_line(block, self.pos)):
                # a record start ends the hit's record without being read: a noise line is skipped like any other,
                # the plan decided a write line, a burst line is the next hit's, for its fast path
                self.ingest.end_open_record(self.key, self.out, self._materialise)
                return
            self._feed_to(line_end(block, self.pos))
            if starts and not self._open_is_candidate():
                return

    def _whole_line_record(self, hit: int) -> bool:
        """The hit's line, at ``pos``, is a record of its own (the next line of the block starts one): parsed at once,
        as ``take_line`` would have it when the next start closes it. Not so at the block's end (the next block may
        continue it), for a write line (the tracker's), or where this line or the next is too long (``take_line``
        refuses it: a refused next line closes nothing)."""
        block, start = self.block, self.pos
        end = block.find(b"\n", hit)
        if (end < 0 or block.rfind(b"\n", 0, hit) + 1 != start or RECORD_START_BYTES.match(block, end + 1) is None
                or is_write_line(block, start) or not line_fits(block, end + 1, self.ingest.max_line_bytes)):
            return False
        line = block[start:end].decode("utf-8", errors="replace").removesuffix("\r")
        if not self.ingest.take_record(self.origin, line, self._ref(self._numbers.at(start)), self.out,
                                       self._materialise):
            return False
        self.fed_newlines += 1
        self.pos = end + 1
        return True

    def _burst_fast(self, hit: int, index: int, start: int) -> bool:
        """A slow-IO or reconcile warning that extends its source's held burst: its stamp and duration read from
        its bytes, nothing decoded (like a routine write, ``pos`` does not move). Anything else — a line with
        continuation lines, a source mid-record, a new longest warning — takes the parsers' path."""
        block = self.block
        end = line_end(self.block, hit)
        if start < self.pos or (end < len(block) and RECORD_START_BYTES.match(block, end) is None):
            return False
        pending = self.ingest.open_record(self.key)
        if pending is not None and pending.candidate:
            return False
        ts = self.stamps.stamp_at(block, start)
        if ts is None:
            return False
        kind = FAST_BURSTS[index]
        duration = 0
        if kind != "reconcile":
            m = _SLOW_MS.search(block, start, end)
            if m is None:
                return False
            duration = int(m[1])
        emitted: list[Event] = []
        if not self.ingest.bursts.extend(self.key, kind, ts, duration, emitted):
            return False
        if emitted:
            self.ingest.emit(emitted, self.out)
        self.decided_until = end
        return True

    def _burst_run(self, hits: list[tuple[int, int]], i: int, kind: str, line: int, step_at: int) -> int:
        """After a line that extended its burst (at ``line``): the hits from ``i`` on that extend the source's held
        bursts too, read by the write reader in one go (``burst_lines``) as ``_burst_fast`` would take them one by
        one. The next hit to walk."""
        of = self.ingest.bursts.held_of(self.key, kind)
        second = self.stamps.second_ms_at(self.block, line)
        if of is None or second is None or i >= len(hits):
            return i
        kinds, held, until_ts = of
        bursts = HeldBursts(tuple(held), _mask(tuple(kinds)), self.block[line:line + 19], second,
                            self.ingest.bursts.max_span_ms, until_ts, step_at, self.decided_until, WRITE_FROM)
        run: BurstRun = self.ingest.scanner.write_reader.burst_run(self.block, hits, i, bursts)
        if run.decided_until != self.decided_until:
            self.ingest.bursts.extended(self.key, kinds, run)
            self.decided_until = run.decided_until
        return run.next_hit

    def _ref(self, line_no: int) -> str:
        if self.offsets is None:
            return f"{self.file_ref}:{line_no}"
        return f"{self.file_ref}@{self.offsets[line_no - self.first_line]}"

    def _write_fast(self, hit: int, opening: bool) -> None:
        """A routine write line of a source whose address is known: decided from its bytes, nothing decoded.

        ``pos`` does not move (the next trigger's skip counts the line as noise); lines that must become events are
        made from their byte offset. Anything unusual takes the line-by-line path of ``_write_at``.
        """
        block = self.block
        start = block.rfind(b"\n", 0, hit) + 1
        if start < self.pos:
            return
        tracker = self.ingest.writes
        source = tracker.addressed(self.key)
        pending = self.ingest.open_record(self.key)
        ts = self.stamps.stamp_at(block, start) if source is not None else None
        if source is None or ts is None or (pending is not None and pending.candidate):
            self._write_at(hit)
            return
        end = block.find(b"\n", hit)
        end = len(block) if end < 0 else end
        blk = block_at(block, start, end)
        if blk is None:
            self._write_at(hit)
            return
        source.touched_ms = self.now_ms
        self.decided_until = end
        lines: list[Line] = []
        tracker.decide(source, ts, blk, opening, 0 if opening else duration_at(block, start, end), (None, None, start),
                       lines, self._materialise)
        if lines:
            self.ingest.parse_lines(lines, self.out)

    def _materialise(self, at: int) -> tuple[str, str]:
        end = self.block.find(b"\n", at)
        raw = self.block[at:len(self.block) if end < 0 else end]
        return raw.decode("utf-8", errors="replace").removesuffix("\r"), self._ref(self._numbers.at(at))

    def _write_at(self, hit: int) -> None:
        """A block-write line (if the hit starts a record): straight to the tracker, never stitched."""
        start = self.block.rfind(b"\n", 0, hit) + 1
        if start < self.pos or RECORD_START_BYTES.match(self.block, start) is None:
            return
        self.pos = start
        end = line_end(self.block, hit)
        line = self.block[start:end].rstrip(b"\n").decode("utf-8", errors="replace").removesuffix("\r")
        self.fed_newlines += self.block.count(b"\n", start, end)
        self.ingest.take_write_line(self.origin, line, self._ref(self._numbers.at(start)), self.now_ms,
                                    self.out, self._materialise)
        self.pos = end

    def _edge_progress(self, *, first: bool, tries: int = 64) -> str | None:
        """The block's first and last stamped lines report the source's time even when all between is skipped;
        returns the head of the stamped line found."""
        block, n = self.block, len(self.block)
        at = 0 if first else block.rfind(b"\n", 0, max(0, n - 1)) + 1
        for _ in range(tries):
            head = block[at:at + 32].decode("utf-8", errors="replace")
            if local_stamp(head):
                line_no = self.first_line if first else self._numbers.at(at)
                self.ingest.report_progress(head, self.origin, self._ref(line_no), self.out)
                return head
            if first:
                at = block.find(b"\n", at) + 1
                if at <= 0 or at >= n:
                    return None
            else:
                if at == 0:
                    return None
                at = block.rfind(b"\n", 0, at - 1) + 1
        return None

    def _observe_clock(self, head: str | None) -> None:
        """The block's last stamped line (found by ``_edge_progress``) dates the source's open writes too."""
        if head is None or self.ingest.writes.clock_ms(self.key) is None:
            return
        self.ingest.observe_clock(self.key, self.stamps.stamp_ms(head), self.out)  # after ``settle``: all lines made

    def _open_is_candidate(self) -> bool:
        """Whether the record just opened needs its continuation lines too (it holds a hit of its own)."""
        pending = self.ingest.open_record(self.key)
        return pending is not None and pending.candidate

    def _record_start(self, at: int) -> int:
        """Start of the record holding offset ``at``: back over continuation lines, never before ``pos``. A write line
        heads no record (``take_line`` hands it to the tracker), so the continuation lines after one are a record of
        their own: fed from the write line, it would be decided twice, its step left to end a later record."""
        line = self.block.rfind(b"\n", 0, at) + 1
        start = line
        while start > self.pos and RECORD_START_BYTES.match(self.block, start) is None:
            start = self.block.rfind(b"\n", 0, start - 1) + 1
        if start < line and RECORD_START_BYTES.match(self.block, start) is not None and self._takes_as_write(start):
            return line_end(self.block, start)
        return max(start, self.pos)

    def _takes_as_write(self, at: int) -> bool:
        """Whether ``take_line`` takes the record-start line at ``at`` as a write line (a write phrase, no trigger)."""
        end = line_end(self.block, at)
        raw = self.block[at:end].rstrip(b"\n")
        if not any(phrase in raw for phrase in WRITE_BYTES):
            return False
        return self.ingest.scanner.classify(raw.decode("utf-8", errors="replace").removesuffix("\r")) == WRITE

    def _feed_continuation(self) -> None:
        """The open candidate record's continuation lines from ``pos`` to the next record start, in one step."""
        found = NEXT_RECORD_BYTES.search(self.block, self.pos)
        end = found.end() if found is not None else len(self.block)
        chunk = self.block[self.pos:end]
        newlines = chunk.count(b"\n")
        text = chunk.removesuffix(b"\n").decode("utf-8", errors="replace")  # a newline ends no UTF-8 sequence
        lines = text.split("\n") if "\r" not in text else [line.removesuffix("\r") for line in text.split("\n")]
        if not self.ingest.continue_record(self.key, lines, self.now_ms):
            self._feed_to(end)
            return
        self.fed_newlines += newlines
        self.pos = end

    def _feed_to(self, end: int) -> None:
        chunk = self.block[self.pos:end]
        self.fed_newlines += chunk.count(b"\n")
        if chunk.endswith(b"\n"):
            chunk = chunk[:-1]
        line_no = self._numbers.at(self.pos)
        for raw in chunk.split(b"\n"):
            line = raw.decode("utf-8", errors="replace").removesuffix("\r")
            self.ingest.take_line(self.origin, line, self._ref(line_no), self.now_ms, self.out, self._materialise)
            line_no += 1
        self.pos = end
