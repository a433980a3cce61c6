"""The engine's evidence events, each kept with the interval it measures (``interval_of``), computed as it arrives.

Every case decided within the retention reads the evidence from its own horizon (the retention before its first
event, as the engine's eviction keeps it) to its deadline: computed per decision, the intervals of a busy cluster's
store would be built again by each of its cases. The horizon makes a case read the same offline, where every case is
decided at the end of the input with all evidence held, as streamed.

Arrival order is nearly time order, so a case reads only a slice found by binary search: from where the evidence's
running newest time first reaches its horizon to where the oldest time of all that follows passes its deadline.
Offline every case is decided at the end, and each would otherwise walk all the evidence held.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from itertools import accumulate

from correlator.core.correlate.evidence import Interval, interval_of
from correlator.core.events import Event

FLOOR_MENDS = 64
"""How far back an arrival older than those before it lowers the floors in place; further, they are made anew."""


@dataclass(slots=True)
class EvidenceStore:
    """Evidence events in arrival order, ``intervals[i]`` the interval of ``events[i]`` (``None``: it measures none),
    ``reach[i]`` the newest time among ``events[:i + 1]`` (never decreasing: what a read's start is searched in).
    The indexes follow the events only through :meth:`add` and :meth:`keep`: a store is made empty or by :meth:`of`."""

    events: list[Event] = field(default_factory=list)
    intervals: list[Interval | None] = field(default_factory=list)
    reach: list[int] = field(default_factory=list, init=False)
    clusters: set[str] = field(default_factory=set, init=False)
    """The clusters of the events held."""
    _floor: list[int] | None = field(default=None, init=False)
    """The oldest time among ``events[i:]`` (never decreasing: what a read's end is searched in), mended by an arrival
    a little out of order, made anew by the next read after one far out of order or an eviction."""

    @classmethod
    def of(cls, events: Iterable[Event]) -> EvidenceStore:
        store = cls()
        for event in events:
            store.add(event)
        return store

    def add(self, event: Event) -> None:
        self.events.append(event)
        self.intervals.append(interval_of(event))
        reach = self.reach
        ts = event.ts_ms
        reach.append(max(reach[-1], ts) if reach else ts)
        self.clusters.add(event.cluster)
        floor = self._floor
        if floor is not None:  # lowered back to the last entry already older, or made anew if that is far back
            floor.append(ts)
            at = len(floor) - 2
            while at >= 0 and floor[at] > ts:
                if len(floor) - at > FLOOR_MENDS:
                    self._floor = None
                    break
                floor[at] = ts
                at -= 1

    def up_to(self, cluster: str, deadline_ms: int, since_ms: int | None = None, links: tuple[type, ...] = (),
              links_since_ms: int | None = None) -> tuple[tuple[Event, ...], tuple[Interval, ...]]:
        """The cluster's evidence stamped by ``deadline_ms`` and from ``since_ms`` on (instances of ``links`` from
        ``links_since_ms``), and the intervals of those that measure one, in order."""
        low = -(1 << 62) if since_ms is None else since_ms
        link_low = low if links_since_ms is None else links_since_ms
        first = bisect_left(self.reach, min(low, link_low) if links else low)  # all before it are older than both
        end = bisect_right(self._floors(), deadline_ms)  # all from it on are newer than the deadline
        kept = [(e, iv) for e, iv in zip(self.events[first:end], self.intervals[first:end]) if e.cluster == cluster
                and (link_low if links and isinstance(e, links) else low) <= e.ts_ms <= deadline_ms]
        return tuple(e for e, _ in kept), tuple(iv for _, iv in kept if iv is not None)

    def keep(self, wanted: Callable[[Event], bool], wanted_from_ms: int | None = None) -> int:
        """Keep the events ``wanted`` takes (with their intervals); how many were dropped. ``wanted_from_ms``: the
        caller's word that ``wanted`` takes every event stamped from then on, which are then not asked (most of a
        store, as eviction keeps it: offline, where every case stays open to the end, all of it)."""
        events, intervals = self.events, self.intervals
        asked = len(events) if wanted_from_ms is None else bisect_left(self._floors(), wanted_from_ms)
        kept = [(e, iv) for e, iv in zip(events[:asked], intervals[:asked]) if wanted(e)]
        dropped = asked - len(kept)
        if dropped:
            self.events = [e for e, _ in kept] + events[asked:]
            self.intervals = [iv for _, iv in kept] + intervals[asked:]
            self.reach = list(accumulate((e.ts_ms for e in self.events), max))
            self.clusters = {e.cluster for e in self.events}
            self._floor = None
        return dropped

    def _floors(self) -> list[int]:
        floor = self._floor
        if floor is None:
            floor = self._floor = list(accumulate(reversed([e.ts_ms for e in self.events]), min))[::-1]
        return floor
