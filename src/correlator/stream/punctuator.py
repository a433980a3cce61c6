"""The time-driven side of the worker: each tick, processing time advances the idle sources of every cluster.

Idleness means 'nothing more is coming': it only counts while this worker is live and caught up, and after any
outage (restart, rebalance, broker gone, backlog) every idle clock starts again. A tick therefore first asks
``Liveness``; after an outage it only restarts the idle clocks (loading the owned clusters no event has touched
yet); otherwise it advances each cluster and publishes what became decidable.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from correlator.stream.clusters import ClusterStates
from correlator.stream.guard import Guard, Health
from correlator.stream.liveness import Liveness
from correlator.stream.publisher import Publisher
from correlator.stream.raw_process import RawIngestProcesses


def now_ms() -> int:
    return int(time.time() * 1000)


class Punctuator:
    """One ``tick`` per timer period; ``outage`` (on every rebalance) makes the next live tick restart idleness."""

    def __init__(self, app: Any, events_topic: str, clusters: ClusterStates, publisher: Publisher,
                 liveness: Liveness, raw_ingest: RawIngestProcesses, health: Health, guard: Guard,
                 clock: Callable[[], int] = now_ms) -> None:
        self.app = app
        self.events_topic = events_topic
        self.clusters = clusters
        self.publisher = publisher
        self.liveness = liveness
        self.raw_ingest = raw_ingest
        self.health = health
        self.guard = guard
        self.clock = clock
        self.since_outage = True
        """An outage (start, rebalance, not live) happened since idle clocks were last restarted."""

    async def tick(self) -> None:
        if self.raw_ingest.failed is not None:
            self.health.fail(self.raw_ingest.failed)
        if self.health.failed is not None or self.app.consumer is None:
            return
        status = await asyncio.to_thread(self.liveness.check, self.app.consumer)
        live = self.liveness.settle(status)
        if status.fatal is not None:
            self.health.fail(status.fatal)
            return
        if not live or self.app.rebalancing:
            self.since_outage = True
            return
        if self.since_outage:
            await self.restart_idle()
            self.since_outage = False
            return
        await self.guard.run("timer", self.advance, self.clusters.clear)

    async def restart_idle(self) -> None:
        """After an outage: every idle clock, of the owned clusters and of raw ingest, starts again now."""
        async with self.clusters.lock:
            owned = {tp.partition for tp in self.app.consumer.assignment() if tp.topic == self.events_topic}
            self.clusters.load_owned(owned)
            now = self.clock()
            for _, _, state in self.clusters.items():
                state.engine.restart_idle(now)
        self.raw_ingest.restart_idle(self.clock())

    async def advance(self) -> None:
        """Processing time into every cluster: publish, flush and persist where it decided something."""
        now = self.clock()
        async with self.clusters.lock:
            for cluster, _, state in self.clusters.items():
                verdicts = state.advance(now)
                if verdicts:
                    self.publisher.verdicts([(v, None) for v in verdicts])
                    await self.publisher.flush()
                    self.clusters.persist(cluster)

    def outage(self) -> None:
        self.since_outage = True
