"""What the correlate stage sends: verdicts, early-warning risks and dead letters, each counted in the metrics.

Sends are queued (``send_soon``); ``flush`` waits until the broker has them all, which the stages do before they
persist the state that produced them (a crash in between redoes the batch, it never loses a verdict).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from correlator.core.explain.verdict import Verdict
from correlator.core.ingest.records import ParseError
from correlator.stream import wire
from correlator.stream.metrics import WorkerMetrics
from correlator.stream.state import ClusterState


class Publisher:
    """The verdicts, risks and dead-letter topics, and the producer that flushes them."""

    def __init__(self, app: Any, metrics: WorkerMetrics, *, verdicts: Any, risks: Any, deadletter: Any,
                 clock: Callable[[], float] = time.time) -> None:
        self.app = app
        self.metrics = metrics
        self.verdicts_topic = verdicts
        self.risks_topic = risks
        self.deadletter_topic = deadletter
        self.clock = clock

    def verdicts(self, decided: list[tuple[Verdict, float | None]]) -> None:
        """Each verdict with the time its deciding input was produced (``None`` for a tick's: no latency)."""
        for verdict, produced_at in decided:
            self.verdicts_topic.send_soon(key=wire.verdict_key(verdict), value=wire.encode_verdict(verdict))
            self.metrics.verdicts.labels(verdict.root_cause.code).inc()
            if produced_at:
                self.metrics.decision_latency.observe(max(0.0, self.clock() - produced_at))

    def risks(self, state: ClusterState) -> None:
        """The early warnings, and on the same topic the records an exactly-once Kafka sink lost (their ``schema``
        tells them apart)."""
        for risk in state.take_risks():
            self.risks_topic.send_soon(key=wire.risk_key(risk), value=wire.encode_risk(risk))
            self.metrics.risks.labels(risk.status).inc()
        for loss in state.take_losses():
            self.risks_topic.send_soon(key=wire.loss_key(loss), value=wire.encode_loss(loss))
            self.metrics.risks.labels("lost").inc()

    def dead_letter(self, error: ParseError, position: wire.Position, message: Any) -> None:
        """A record the stage cannot use, with the reason; the record itself travels along when ``error`` is about
        ``message``."""
        self.metrics.dead_letters.labels(error.reason).inc()
        is_current = wire.coordinates(error.ref) == (message.topic, message.partition, message.offset)
        self.deadletter_topic.send_soon(
            key=message.key if is_current else None,
            value=wire.encode_dead_letter(error, position, message.value if is_current else None),
        )

    async def flush(self) -> None:
        await self.app.producer.flush()
