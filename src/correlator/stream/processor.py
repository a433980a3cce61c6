"""The correlate stage: a batch of ``correlator.events`` records ──> each cluster's state ──> verdicts, risks.

Per batch: decode each record (a foreign or corrupt one is dead-lettered, never stops the worker), feed it to its
cluster's state (redeliveries skipped), note how far it read, publish what was decided, flush, then persist each
touched cluster's snapshot. A failed batch is retried from the snapshots (``guard``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from correlator.core.explain.verdict import Verdict
from correlator.core.ingest.limits import out_of_range
from correlator.core.ingest.records import parse_error
from correlator.stream import wire
from correlator.stream.clusters import ClusterStates
from correlator.stream.guard import Guard
from correlator.stream.liveness import Progress
from correlator.stream.metrics import WorkerMetrics
from correlator.stream.publisher import Publisher
from correlator.stream.state import ClusterState
from correlator.stream.steps import Steps


class CorrelateProcessor:
    """Batches of Faust events (``stream.take_events``) through the cluster states, each under the guard."""

    def __init__(self, app: Any, default_cluster: str, clusters: ClusterStates, publisher: Publisher,
                 progress: Progress, guard: Guard, metrics: WorkerMetrics) -> None:
        self.app = app
        self.default_cluster = default_cluster
        """The cluster of an unkeyed record."""
        self.clusters = clusters
        self.publisher = publisher
        self.progress = progress
        self.guard = guard
        self.metrics = metrics

    async def consume(self, stream: Any, size: int, within_s: float) -> None:
        """The agent's loop: batches of up to ``size`` records, or what came within ``within_s``."""
        async for batch in stream.take_events(size, within=within_s):
            self.count(batch)
            await self.guard.run("correlate", lambda: self.process(batch), self.clusters.clear)

    def count(self, batch: Sequence[Any]) -> None:
        for topic, n in Counter(event.message.topic for event in batch).items():
            self.metrics.records_in.labels(topic).inc(n)

    async def process(self, batch: Sequence[Any]) -> None:
        async with self.clusters.lock:
            steps = Steps()
            decided: list[tuple[Verdict, float | None]] = []
            touched: set[str] = set()
            for event in batch:
                msg = event.message
                cluster = msg.key.decode("utf-8", "replace") if msg.key else self.default_cluster
                state = self.feed(msg, cluster, decided)
                if state is not None:
                    touched.add(cluster)
            await self.progress.observe(self.app.consumer, batch)
            steps.lap("feed")
            self.publisher.verdicts(decided)
            for cluster in touched:
                self.publisher.risks(self.clusters[cluster])
            await self.publisher.flush()
            steps.lap("publish")
            for cluster in touched:
                self.metrics.late_evidence.labels(cluster).set(
                    self.clusters[cluster].engine.stats.get("late_evidence", 0))
                self.clusters.persist(cluster)
            steps.lap("snapshot")
        for step, seconds in steps.spent.items():
            self.metrics.correlate_seconds.labels(step).inc(seconds)

    def feed(self, msg: Any, cluster: str, decided: list[tuple[Verdict, float | None]]) -> ClusterState | None:
        """One record into its cluster's state (its verdicts appended to ``decided``); ``None`` when it was not an
        event and went to the dead letters."""
        try:
            parsed, position = wire.decode_event(msg.value)
            if (why := out_of_range(parsed)) is not None:
                raise ValueError(why)
        except Exception as exc:  # a foreign or corrupt record on our topic must not stop the worker
            ref = f"{msg.topic}/{msg.partition}@{msg.offset}"
            error = parse_error("bad_event", f"{type(exc).__name__}: {exc}"[:200], ref, msg.value or b"")
            self.publisher.dead_letter(error, wire.Position(msg.topic, msg.partition, msg.offset, 0), msg)
            return None
        state = self.clusters.get(cluster, msg.partition)
        before = state.duplicates
        decided += [(v, msg.timestamp) for v in state.feed(msg.offset, parsed, position)]
        if state.duplicates != before:
            self.metrics.duplicates.inc()
        return state
