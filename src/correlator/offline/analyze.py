"""Offline analysis: log files → events (the shared parser) → the engine → verdicts, in one process.

Events are ordered by event time across files before they reach the engine, as an ideal stream would deliver them,
so a case is decided with every source's lines in view no matter in which order the files were named.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from correlator.core.engine import Engine, EngineConfig
from correlator.core.events import Event
from correlator.core.records import ParseError
from correlator.core.verdict import Verdict


def collect_events(paths: Sequence[str], *, tz: str = "UTC", cluster: str = "default",
                   on_item: Callable[[Event | ParseError], None] | None = None) -> tuple[list[Event], int]:
    """Every event of the inputs in event-time order (stable within a source), and the number of parse errors."""
    from correlator.offline.files import iter_events

    events: list[Event] = []
    errors = 0
    for item in iter_events(paths, tz=tz, cluster=cluster):
        if on_item is not None:
            on_item(item)
        if isinstance(item, ParseError):
            errors += 1
        else:
            events.append(item)
    events.sort(key=lambda e: e.ts_ms)
    return events, errors


def run_engine(events: Iterable[Event], config: EngineConfig | None = None) -> list[Verdict]:
    """Feed events, then end the input; verdicts sorted by failure time (then id) for a deterministic output."""
    engine = Engine(config or EngineConfig())
    verdicts: list[Verdict] = []
    for event in events:
        verdicts.extend(engine.feed(event))
    verdicts.extend(engine.finish())
    return sorted(verdicts, key=lambda v: (v.failure.failed_at_ms, v.verdict_id))


def analyze(paths: Sequence[str], *, tz: str = "UTC", cluster: str = "default",
            config: EngineConfig | None = None) -> list[Verdict]:
    """Verdicts for every failed checkpoint found in the given files/directories, ordered by failure time."""
    events, _ = collect_events(paths, tz=tz, cluster=cluster)
    return run_engine(events, config)
