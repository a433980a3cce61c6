"""How far back each cluster's evidence must be kept: the engine's eviction horizon, from the sources' clocks, the
open cases and the decided cases a revision may still read."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from correlator.core.correlate.cases import CaseKey
from correlator.core.correlate.decided import Decided
from correlator.core.correlate.watermarks import Watermarks
from correlator.core.events import Event

FLINK_ROLES = ("jobmanager", "taskmanager")
HOLD_LIMIT = 4
"""Nothing is held longer than this many retentions behind a cluster's newest event, which keeps the state bounded."""


def case_horizon(events: Iterable[Event], retention_ms: int) -> int:
    """How far back an open case's evidence is kept, and so what its judge reads from: the retention before its
    first event."""
    return min(e.ts_ms for e in events) - retention_ms


def eviction_horizons(marks: Watermarks, cases: Mapping[CaseKey, list[Event]], decided: Mapping[CaseKey, Decided],
                      held: Iterable[CaseKey], retention_ms: int) -> dict[str, int]:
    """The event time before which each cluster's evidence, triggers and decided marks may go.

    Evidence only matters to a case, and cases are opened by Flink lines: so evidence waits until every live Flink
    source has passed it, not the cluster's newest event — a Flink partition still catching up (a backlog after an
    outage, a topic read later than the HDFS one) may yet open a case whose DataNode evidence was logged long
    before. Idle sources hold nothing back; open cases hold their own window; ``held`` cases (waiting for a log, or
    with late evidence due) keep what a revision reads, within ``HOLD_LIMIT`` retentions of the newest event.
    """
    horizons: dict[str, int] = {}
    for cluster in marks.clusters():
        newest = marks.max_event_ms(cluster)
        if newest is None:
            continue
        flink = [c.max_ts_ms for src in marks.sources(cluster) if src[2] in FLINK_ROLES
                 and not marks.is_idle(src) and (c := marks.clock(src)) is not None]
        floor = newest - HOLD_LIMIT * retention_ms
        horizons[cluster] = max(floor, min(flink) - retention_ms) if flink else floor
    for key, events in cases.items():
        start = case_horizon(events, retention_ms)
        horizons[key[0]] = min(horizons.get(key[0], start), start)
    for key in held:
        if (d := decided.get(key)) is not None and (newest := marks.max_event_ms(key[0])) is not None:
            start = max(newest - HOLD_LIMIT * retention_ms, d.window_start_ms - retention_ms)
            horizons[key[0]] = min(horizons.get(key[0], start), start)
    return horizons
