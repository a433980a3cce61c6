"""Offline analysis: log files → events (the shared parser) → the engine → verdicts, in one process.

Events reach the engine in event-time order across files, as an ideal stream would deliver them, so a case is
decided with every source's lines in view no matter in which order the files were named. Files are read side by
side and merged (each through a short reorder window) rather than collected and sorted, so a file of any size
is analysed in bounded memory.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Iterator, Sequence
from zoneinfo import ZoneInfo

from correlator.core.correlate.engine import Engine, EngineConfig
from correlator.core.events import Event, LogUnread
from correlator.core.explain.foresight import Foresight
from correlator.core.explain.risk import Risk, RiskWatch
from correlator.core.explain.transactions import TransactionLoss, TransactionWatch
from correlator.core.explain.verdict import Verdict
from correlator.core.ingest.records import ParseError
from correlator.offline.summary import Summary

REORDER_MS = 600_000
"""Within one file, events are emitted in order once the file has moved this far past them (multi-line records
close late; GC lines lag their JVM's log)."""


def ordered_events(paths: Sequence[str], *, tz: str = "UTC", cluster: str = "default",
                   on_item: Callable[[Event | ParseError], None] | None = None,
                   summary: Summary | None = None, cluster_from_dir: bool = False,
                   layout: str | None = None) -> Iterator[Event]:
    """Every event of the inputs in event-time order (stable within a file, then by file order)."""
    from correlator.adapters.scanners import fastest_scanner
    from correlator.core.ingest.ingest import Ingest, IngestConfig
    from correlator.offline.files import LogFile, discover, facts_guessed, read_file, unread_file
    from correlator.offline.reading import Overlong

    summary = summary if summary is not None else Summary()
    scanner = fastest_scanner()
    config = IngestConfig(tz=tz, default_cluster=cluster, layout=layout)
    skipped: list[tuple[str, str]] = []
    files = discover(paths, skipped, summary=summary, cluster_from_dir=cluster_from_dir, tz=ZoneInfo(tz),
                     layout=layout)
    summary.files += len(files)
    # a log that could not be opened is named in the verdicts' coverage, not only on stderr
    yield from (unread for path, why in skipped if why.startswith("unreadable")
                and (unread := unread_file(path, why, cluster)) is not None)

    def one(index: int, log: LogFile) -> Iterator[tuple[int, int, int, Event]]:
        ingest = Ingest(config, scanner)
        seen = Overlong()
        items = read_file(ingest, log, cluster, seen)
        for item in _reordered(index, _events(items, ingest.flush_all, on_item)):
            if isinstance(item[3], LogUnread):
                summary.notes.append((log.path, f"damaged: {item[3].why}"))
            yield item
        summary.add_ingest(ingest.stats, seen)
        summary.read(log.path, log.how, log.host, log.host_from, facts_guessed(log), ingest.stats)

    for _, _, _, event in heapq.merge(*(one(i, log) for i, log in enumerate(files))):
        yield event


def _events(items: Iterable[Event | ParseError], flush: Callable[[], list[Event | ParseError]],
            on_item: Callable[[Event | ParseError], None] | None) -> Iterator[Event]:
    def every() -> Iterator[Event | ParseError]:
        yield from items
        yield from flush()  # the last open record closes only once the file has been read to its end

    for item in every():
        if on_item is not None:
            on_item(item)
        if not isinstance(item, ParseError):
            yield item


def _reordered(index: int, events: Iterable[Event]) -> Iterator[tuple[int, int, int, Event]]:
    """The file's events sorted by (time, position) within a window of ``REORDER_MS`` behind its newest event."""
    heap: list[tuple[int, int, int, Event]] = []
    newest = None
    for seq, event in enumerate(events):
        heapq.heappush(heap, (event.ts_ms, index, seq, event))
        newest = event.ts_ms if newest is None else max(newest, event.ts_ms)
        while heap and heap[0][0] < newest - REORDER_MS:
            yield heapq.heappop(heap)
    while heap:
        yield heapq.heappop(heap)


def collect_events(paths: Sequence[str], *, tz: str = "UTC", cluster: str = "default",
                   on_item: Callable[[Event | ParseError], None] | None = None) -> tuple[list[Event], int]:
    """Every event of the inputs in event-time order (stable within a source), and the number of parse errors."""
    summary = Summary()
    events = list(ordered_events(paths, tz=tz, cluster=cluster, on_item=on_item, summary=summary))
    return events, sum(summary.errors.values())


def run_analysis(events: Iterable[Event], config: EngineConfig | None = None,
                 losses: list[TransactionLoss] | None = None) -> tuple[list[Verdict], list[Risk]]:
    """Feed events, then end the input: verdicts sorted by failure time (then id) for a deterministic output, and the
    early-warning records in the order they were due (a trend's and an exactly-once Kafka sink's); ``losses``, when
    given, receives the records that sink lost, in the order they were found.

    Each verdict gets its outlook and what-if figures (:class:`Foresight`) as the engine decides it."""
    engine = Engine(config or EngineConfig())
    foresight = Foresight()
    watch = RiskWatch()
    transactions = TransactionWatch()
    verdicts: list[Verdict] = []
    risks: list[Risk] = []
    for event in events:
        foresight.observe(event)
        risks.extend(watch.observe(event))
        risks.extend(transactions.observe(event))
        if losses is not None:
            losses.extend(transactions.take_losses())
        verdicts.extend(foresight.annotate(v) for v in engine.feed(event))
    verdicts.extend(foresight.annotate(v) for v in engine.finish())
    return sorted(verdicts, key=lambda v: (v.failure.failed_at_ms, v.verdict_id)), risks


def run_engine(events: Iterable[Event], config: EngineConfig | None = None) -> list[Verdict]:
    """The verdicts of :func:`run_analysis`."""
    return run_analysis(events, config)[0]


def analyze(paths: Sequence[str], *, tz: str = "UTC", cluster: str = "default",
            config: EngineConfig | None = None, summary: Summary | None = None,
            cluster_from_dir: bool = False, layout: str | None = None) -> list[Verdict]:
    """Verdicts for every failed checkpoint found in the given files/directories, ordered by failure time."""
    return run_engine(ordered_events(paths, tz=tz, cluster=cluster, summary=summary,
                                     cluster_from_dir=cluster_from_dir, layout=layout), config)
