"""Warnings that repeat one fact become one event: a DataNode's slow-IO warnings come one per packet, a
DirectoryScanner's reconcile warnings one per block.

During a slow-disk storm a DataNode logs ``Slow BlockReceiver write data to disk`` (or ``Slow flushOrSync``, ``Slow
PacketResponder send ack``) for nearly every packet of every write — tens of thousands of lines that say one thing:
this host's disk (or pipeline) was slow from then to then, at worst this long. A scanner that finds thousands of
differences logs a reconcile warning for each. The correlation needs the span, the count and the worst, so a
source's warnings of one kind that follow each other within the kind's gap are held and emitted as one event with
their ``count``, the earliest start (``start_ts_ms``) and the longest one's facts and line (``duration_ms``, ``ref``;
the first one's for reconcile warnings, which have no duration). A lone warning is emitted as it was.

A burst is emitted once its source's log has moved the gap past its last warning (any finding of the source shows
that; its progress reports do not, as the block path reports progress less often than the line path), when it has
spanned ``max_span_ms`` (so a storm never holds evidence back for long), when the source falls
silent for the idle bound of processing time, and at the end of the input.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from correlator.core.event_dicts import event_from_dict, event_to_dict
from correlator.core.events import DirectoryScanReconcile, Event, SlowIo, SourceProgress
from correlator.core.ingest.burst_lines import BurstRun, Held
from correlator.core.ingest.parse.hdfs import RULES as HDFS_RULES

Burstable = SlowIo | DirectoryScanReconcile
GAPS: dict[type, int] = {SlowIo: 1_500, DirectoryScanReconcile: 5_000}
"""As the correlation's own gaps: slow-IO warnings closer than 1.5 s stall one write together; reconcile warnings
closer than 5 s are one scan's fixing."""
MAX_SPAN_MS = 10_000


@dataclass(slots=True)
class _Burst:
    first: Burstable
    longest: Burstable
    last_ts_ms: int
    start_ms: int
    count: int
    touched_ms: int | None

    def event(self) -> Burstable:
        if self.count == 1:
            return self.first
        return replace(self.longest, ts_ms=self.last_ts_ms, count=self.count, start_ts_ms=self.start_ms)


def _key(e: Burstable) -> tuple[str, str, str, str]:
    return (e.cluster, e.host, e.role, _kind(e))


NEVER_MS = 1 << 62


def _kind(e: Burstable) -> str:
    return e.kind if isinstance(e, SlowIo) else "reconcile"


FAST_PHRASES: dict[str, str] = {rule.phrase: rule.burst for rule in HDFS_RULES if rule.burst}
"""Trigger phrases whose lines can extend a held burst of their kind from their bytes alone (see
:meth:`Bursts.extend`): the HDFS rule table's rows that name a burst kind."""


def _start(e: Burstable) -> int:
    return e.ts_ms - e.duration_ms if isinstance(e, SlowIo) else e.ts_ms


def _longer(e: Burstable, than: Burstable) -> bool:
    return isinstance(e, SlowIo) and isinstance(than, SlowIo) and e.duration_ms > than.duration_ms


class Bursts:
    """Held bursts, one per (cluster, host, role, kind)."""

    def __init__(self, max_span_ms: int = MAX_SPAN_MS) -> None:
        self.max_span_ms = max_span_ms
        self._open: dict[tuple[str, str, str, str], _Burst] = {}
        self._of_source: dict[str, dict[str, tuple[str, str, str, str]]] = {}
        """Per ingest source, per kind: the key of the burst its lines last joined."""

    def take(self, events: list[Event], now_ms: int | None, source: str = "") -> list[Event]:
        """The events to emit now: every event of other kinds, and the bursts that ended before them. ``source``:
        the ingest source whose lines made them (its bytes may extend the bursts they join, see :meth:`extend`)."""
        if not self._open and not any(e.__class__ in GAPS for e in events):
            return events
        out: list[Event] = []
        for e in events:
            if self._open and e.__class__ is not SourceProgress:  # progress is reported on some paths, not others
                self._close_passed(e, out)
            if not isinstance(e, (SlowIo, DirectoryScanReconcile)):
                out.append(e)
                continue
            key = _key(e)
            held = self._open.get(key)
            start = _start(e)
            if held is not None and start - held.last_ts_ms <= GAPS[e.__class__] \
                    and e.ts_ms - held.start_ms <= self.max_span_ms:
                held.count += 1
                held.last_ts_ms = max(held.last_ts_ms, e.ts_ms)
                held.start_ms = min(held.start_ms, start)
                held.touched_ms = now_ms
                if _longer(e, held.longest):
                    held.longest = e
                self._of_source.setdefault(source, {})[key[3]] = key
                continue
            if held is not None:
                out.append(held.event())
            self._open[key] = _Burst(e, e, e.ts_ms, start, 1, now_ms)
            self._of_source.setdefault(source, {})[key[3]] = key
        return out

    def extend(self, source: str, kind: str, ts_ms: int, duration_ms: int, out: list[Event]) -> bool:
        """A line of ``source`` read from its bytes (its stamp, its duration) extends that source's held burst of
        ``kind`` exactly as :meth:`take` would extend it with the line's event; False when it would not (a gap, a
        span too long, a new longest warning, no burst held): then the line takes the parsers' path."""
        key = self._of_source.get(source, {}).get(kind)
        held = self._open.get(key) if key is not None else None
        if held is None or key is None:
            return False
        if ts_ms - held.last_ts_ms > GAPS[held.first.__class__] or ts_ms - held.start_ms > self.max_span_ms:
            return False
        if isinstance(held.longest, SlowIo) and duration_ms > held.longest.duration_ms:
            return False
        if len(self._open) > 1:  # another kind's burst of this host that this line's time has passed ends here
            for other_key, other in list(self._open.items()):
                if other_key != key and other_key[:2] == key[:2] \
                        and ts_ms - other.last_ts_ms > GAPS[other.first.__class__]:
                    out.append(other.event())
                    del self._open[other_key]
        held.count += 1
        held.last_ts_ms = max(held.last_ts_ms, ts_ms)
        held.start_ms = min(held.start_ms, ts_ms - duration_ms)
        held.touched_ms = None
        return True

    def held_of(self, source: str, kind: str) -> tuple[list[str], list[Held], int] | None:
        """What lines of ``source`` may do to its held bursts (that of ``kind`` and the others of its host) and still
        extend them as :meth:`extend` does: their kinds, a ``burst_lines.Held`` each, and the time past which a line
        would end a burst of the host held for another source. ``None`` when no burst of ``kind`` is held."""
        of_source = self._of_source.get(source, {})
        key = of_source.get(kind)
        if key is None or key not in self._open:
            return None
        kinds, held, mine = [], [], set()
        for its_kind, its_key in of_source.items():
            burst = self._open.get(its_key)
            if burst is not None and its_key[:2] == key[:2] and its_key not in mine:
                mine.add(its_key)
                kinds.append(its_kind)
                longest = burst.longest.duration_ms if isinstance(burst.longest, SlowIo) else -1
                held.append(Held(burst.last_ts_ms, burst.start_ms, longest, GAPS[burst.first.__class__],
                                 isinstance(burst.first, SlowIo)))
        until = min((other.last_ts_ms + GAPS[other.first.__class__] for other_key, other in self._open.items()
                     if other_key not in mine and other_key[:2] == key[:2]), default=NEVER_MS)
        return kinds, held, until

    def extended(self, source: str, kinds: list[str], run: BurstRun) -> None:
        """A run (``burst_lines.burst_run``) extended ``source``'s held bursts of ``kinds`` (as ``held_of`` gave)."""
        for kind, (count, last_ts_ms, start_ms) in zip(kinds, run.extended):
            if count:
                held = self._open[self._of_source[source][kind]]
                held.count += count
                held.last_ts_ms, held.start_ms, held.touched_ms = last_ts_ms, start_ms, None

    def _close_passed(self, e: Event, out: list[Event]) -> None:
        for key, held in list(self._open.items()):
            if key[1] == e.host and key[0] == e.cluster and e.ts_ms - held.last_ts_ms > GAPS[held.first.__class__]:
                out.append(held.event())
                del self._open[key]

    def flush_idle(self, now_ms: int, idle_ms: int) -> list[Event]:
        """Bursts not extended for ``idle_ms`` of processing time (since the first idle check after their last
        warning: the parsers that extend them do not know the processing time)."""
        out: list[Event] = []
        for key, held in list(self._open.items()):
            if held.touched_ms is None:
                held.touched_ms = now_ms
            elif now_ms - held.touched_ms > idle_ms:
                out.append(held.event())
                del self._open[key]
        return out

    def flush_all(self) -> list[Event]:
        out: list[Event] = [held.event() for held in self._open.values()]  # in the order they began
        self._open.clear()
        return out

    def snapshot(self) -> list[dict[str, Any]]:
        return [{"first": event_to_dict(b.first), "longest": event_to_dict(b.longest), "last_ts_ms": b.last_ts_ms,
                 "start_ms": b.start_ms, "count": b.count, "touched_ms": b.touched_ms}
                for b in self._open.values()]

    def restore(self, data: list[dict[str, Any]]) -> None:
        for d in data:
            first, longest = event_from_dict(d["first"]), event_from_dict(d["longest"])
            assert isinstance(first, (SlowIo, DirectoryScanReconcile))
            assert isinstance(longest, (SlowIo, DirectoryScanReconcile))
            self._open[_key(first)] = _Burst(first, longest, int(d["last_ts_ms"]), int(d["start_ms"]),
                                             int(d["count"]), d["touched_ms"])
