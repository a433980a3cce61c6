"""Prometheus metrics of the worker, in a registry of its own so tests and several apps in one process stay apart."""

from __future__ import annotations

from dataclasses import dataclass, field

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram


@dataclass
class WorkerMetrics:
    registry: CollectorRegistry = field(default_factory=CollectorRegistry)

    def __post_init__(self) -> None:
        r = self.registry
        self.records_in = Counter("correlator_records_in", "Records consumed, by topic", ["topic"], registry=r)
        self.events = Counter("correlator_events", "Events parsed, by type", ["type"], registry=r)
        self.dead_letters = Counter("correlator_dead_letters", "Records dead-lettered, by reason", ["reason"], registry=r)
        self.verdicts = Counter("correlator_verdicts", "Verdicts published, by root-cause code", ["code"], registry=r)
        self.late_evidence = Gauge("correlator_late_evidence", "Evidence that arrived after its case was decided",
                                   ["cluster"], registry=r)
        self.duplicates = Counter("correlator_duplicate_events", "Redelivered events skipped", registry=r)
        self.decision_latency = Histogram(
            "correlator_decision_latency_seconds",
            "Wall time from a case's decision (event time of the deciding input) to the verdict's publication",
            buckets=(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300),
            registry=r,
        )
        self.consumer_lag = Gauge("correlator_consumer_lag", "Records behind the high watermark",
                                  ["topic", "partition"], registry=r)
        self.snapshot_seconds = Histogram(
            "correlator_snapshot_seconds", "Time to serialise one state snapshot, by stage", ["stage"],
            buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1), registry=r,
        )
        self.state_bytes = Gauge("correlator_state_bytes", "Size of the persisted state snapshot", ["table", "key"],
                                 registry=r)
