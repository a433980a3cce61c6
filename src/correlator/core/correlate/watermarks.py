"""Per-source event-time watermarks with bounded out-of-orderness and processing-time idleness.

A source is one log producer: (cluster, host, role). Its watermark is the largest event time seen minus the allowed
out-of-orderness, so it never regresses. A source that has been silent (in processing time, ``now_ms`` passed in) for
longer than the idle timeout stops holding decisions back — it may be silent because it is stuck, which the lookahead
covers, but it may also simply be gone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

SourceKey = tuple[str, str, str]
"""(cluster, host, role)."""


@dataclass(slots=True)
class SourceClock:
    first_ts_ms: int
    max_ts_ms: int
    last_arrival_ms: int | None = None
    """Processing time of the latest event, when the caller gave one (streaming); ``None`` offline."""
    events: int = 0


class Watermarks:
    """Event-time progress of every source seen so far."""

    def __init__(self, out_of_orderness_ms: int, idle_timeout_ms: int) -> None:
        self.out_of_orderness_ms = out_of_orderness_ms
        self.idle_timeout_ms = idle_timeout_ms
        self._sources: dict[SourceKey, SourceClock] = {}
        self._now_ms: int | None = None
        self._first_now_ms: int | None = None
        self._finished = False

    def observe(self, source: SourceKey, ts_ms: int) -> None:
        clock = self._sources.get(source)
        if clock is None:
            self._sources[source] = SourceClock(ts_ms, ts_ms, self._now_ms, 1)
            return
        clock.events += 1
        clock.first_ts_ms = min(clock.first_ts_ms, ts_ms)
        clock.max_ts_ms = max(clock.max_ts_ms, ts_ms)
        if self._now_ms is not None:
            clock.last_arrival_ms = self._now_ms

    def tick(self, now_ms: int) -> None:
        """Record processing time; arrivals after this tick are stamped with it. Processing time never regresses."""
        self._now_ms = now_ms if self._now_ms is None else max(self._now_ms, now_ms)
        if self._first_now_ms is None:
            self._first_now_ms = now_ms
        for clock in self._sources.values():
            if clock.last_arrival_ms is None:
                clock.last_arrival_ms = self._now_ms

    def restart_idle(self, now_ms: int) -> None:
        """Processing time that passed while the caller could not read (down, rebalancing, behind, broker gone) is
        not silence of the sources: every idle clock starts again from ``now_ms``."""
        self._now_ms = now_ms if self._now_ms is None else max(self._now_ms, now_ms)
        for clock in self._sources.values():
            clock.last_arrival_ms = self._now_ms

    def restart_warm_up(self) -> None:
        """A state reloaded after a restart or rebalance knows only the sources its snapshot saw; others may still be
        in the backlog. Until processing time flows again no source is idle, and then the warm-up waits one idle
        timeout anew. (An outage alone keeps the warm-up: its sources were all seen live.)"""
        self._first_now_ms = None
        for clock in self._sources.values():
            clock.last_arrival_ms = self._now_ms

    def warmed_up(self) -> bool:
        """Whether decisions may be taken before the end of input.

        A source never seen cannot hold a decision back, so an engine that has no processing time yet (a worker still
        reading its backlog, or an offline run) decides nothing until ``finish``; once processing time flows, it
        waits one idle timeout for every live source to show up.
        """
        if self._finished:
            return True
        if self._first_now_ms is None or self._now_ms is None:
            return False
        return self._now_ms - self._first_now_ms >= self.idle_timeout_ms

    def finish(self) -> None:
        """End of input: every source has said all it will say."""
        self._finished = True

    def watermark(self, source: SourceKey) -> int | None:
        clock = self._sources.get(source)
        return None if clock is None else clock.max_ts_ms - self.out_of_orderness_ms

    def is_idle(self, source: SourceKey) -> bool:
        clock = self._sources.get(source)
        if clock is None or self._now_ms is None:
            return False
        last = clock.last_arrival_ms
        return last is not None and self._now_ms - last >= self.idle_timeout_ms

    def has_passed(self, source: SourceKey, ts_ms: int) -> bool:
        """True once the source can no longer bring events at or before ``ts_ms`` (or never will)."""
        if self._finished or self.is_idle(source):
            return True
        mark = self.watermark(source)
        return mark is not None and mark >= ts_ms

    def sources(self, cluster: str) -> list[SourceKey]:
        return sorted(k for k in self._sources if k[0] == cluster)

    def clusters(self) -> list[str]:
        return sorted({k[0] for k in self._sources})

    def count(self) -> int:
        return len(self._sources)

    def clock(self, source: SourceKey) -> SourceClock | None:
        return self._sources.get(source)

    def max_event_ms(self, cluster: str) -> int | None:
        marks = [c.max_ts_ms for k, c in self._sources.items() if k[0] == cluster]
        return max(marks) if marks else None

    def snapshot(self) -> dict[str, Any]:
        return {
            "now_ms": self._now_ms,
            "first_now_ms": self._first_now_ms,
            "finished": self._finished,
            "sources": [
                [list(key), c.first_ts_ms, c.max_ts_ms, c.last_arrival_ms, c.events]
                for key, c in sorted(self._sources.items())
            ],
        }

    @classmethod
    def restore(cls, out_of_orderness_ms: int, idle_timeout_ms: int, data: dict[str, Any]) -> Watermarks:
        marks = cls(out_of_orderness_ms, idle_timeout_ms)
        marks._now_ms = data.get("now_ms")
        marks._first_now_ms = data.get("first_now_ms")
        marks._finished = bool(data.get("finished", False))
        for key, first, last, arrival, events in data.get("sources", ()):
            marks._sources[(key[0], key[1], key[2])] = SourceClock(first, last, arrival, events)
        return marks
