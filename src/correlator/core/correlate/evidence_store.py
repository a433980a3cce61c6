"""The engine's evidence events, each kept with the interval it measures (``interval_of``), computed as it arrives.

Every case decided within the retention reads the evidence from its own horizon (the retention before its first
event, as the engine's eviction keeps it) to its deadline: computed per decision, the intervals of a busy cluster's
store would be built again by each of its cases. The horizon makes a case read the same offline, where every case is
decided at the end of the input with all evidence held, as streamed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from correlator.core.correlate.evidence import Interval, interval_of
from correlator.core.events import Event


@dataclass(slots=True)
class EvidenceStore:
    """Evidence events in arrival order, ``intervals[i]`` the interval of ``events[i]`` (``None``: it measures none)."""

    events: list[Event] = field(default_factory=list)
    intervals: list[Interval | None] = field(default_factory=list)

    @classmethod
    def of(cls, events: Iterable[Event]) -> EvidenceStore:
        store = cls()
        for event in events:
            store.add(event)
        return store

    def add(self, event: Event) -> None:
        self.events.append(event)
        self.intervals.append(interval_of(event))

    def up_to(self, cluster: str, deadline_ms: int, since_ms: int | None = None, links: tuple[type, ...] = (),
              links_since_ms: int | None = None) -> tuple[tuple[Event, ...], tuple[Interval, ...]]:
        """The cluster's evidence stamped by ``deadline_ms`` and from ``since_ms`` on (instances of ``links`` from
        ``links_since_ms``), and the intervals of those that measure one, in order."""
        low = -(1 << 62) if since_ms is None else since_ms
        link_low = low if links_since_ms is None else links_since_ms
        kept = [(e, iv) for e, iv in zip(self.events, self.intervals) if e.cluster == cluster
                and (link_low if links and isinstance(e, links) else low) <= e.ts_ms <= deadline_ms]
        return tuple(e for e, _ in kept), tuple(iv for _, iv in kept if iv is not None)

    def keep(self, wanted: Callable[[Event], bool]) -> int:
        """Keep the events ``wanted`` takes (with their intervals); how many were dropped."""
        before = len(self.events)
        kept = [(e, iv) for e, iv in zip(self.events, self.intervals) if wanted(e)]
        self.events = [e for e, _ in kept]
        self.intervals = [iv for _, iv in kept]
        return before - len(self.events)
