"""Prometheus metrics of the worker, in a registry of its own so tests and several apps in one process stay apart."""

from __future__ import annotations

import logging
import time
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
        self.risks = Counter("correlator_risks", "Early-warning records published, by status", ["status"], registry=r)
        self.late_evidence = Gauge("correlator_late_evidence", "Evidence that arrived after its case was decided",
                                   ["cluster"], registry=r)
        self.clock_steps_back = Counter(
            "correlator_clock_steps_back", "Times a DataNode's log clock jumped back more than 30 s (its write timing "
            "restarts there), by raw topic", ["topic"], registry=r)
        self.guessed_times = Counter(
            "correlator_guessed_times", "Local log stamps the zone alone could not place, by why: dst_repeated_hour "
            "(placed by their source's order), dst_gap (in the hour a spring-forward skips)", ["why"], registry=r)
        self.ingest_seconds = Counter(
            "correlator_ingest_seconds", "Time the raw-ingest loop spent on non-empty batches, by step (consume: "
            "taking records; group: by source; parse; produce: events; snapshot; commit: the transaction)", ["step"],
            registry=r)
        self.correlate_seconds = Counter(
            "correlator_correlate_seconds", "Time the correlate stage spent on batches of events, by step (feed: "
            "decoding them and deciding; publish: verdicts, risks and the flush; snapshot: the cluster states)",
            ["step"], registry=r)
        self.duplicates = Counter("correlator_duplicate_events", "Redelivered events skipped", registry=r)
        self.topics_recreated = Counter(
            "correlator_raw_topic_recreated", "Raw partitions found belonging to a topic deleted and created again under "
            "its name: the old snapshot was dropped and the new topic read from its first record", ["topic"],
            registry=r)
        self.decision_latency = Histogram(
            "correlator_decision_latency_seconds",
            "Wall time from a case's decision (event time of the deciding input) to the verdict's publication",
            buckets=(0.05, 0.1, 0.25, 0.5, 1, 1.5, 2, 2.5, 5, 10, 30, 60, 300),
            registry=r,
        )
        self.consumer_lag = Gauge("correlator_consumer_lag", "Records behind the high watermark",
                                  ["topic", "partition"], registry=r)
        self.unknown_source = Counter(
            "correlator_unknown_source_records", "Parsed records whose host nothing names (no header, envelope field, "
            "key or file name; unkeyed partitions mix files, so their banners are not trusted)", ["topic"], registry=r)
        self.stage_errors = Counter("correlator_stage_errors", "Batches a stage failed on (each retried)", ["stage"],
                                    registry=r)
        self.crashes = Counter("correlator_stage_crashes", "Stages that failed past their retries (the worker stops)",
                               ["stage"], registry=r)
        self.live = Gauge("correlator_live", "1 while the broker answers and every input partition is read to its end "
                          "(only then does processing-time idleness count)", registry=r)
        self.snapshot_seconds = Histogram(
            "correlator_snapshot_seconds", "Time to serialise one state snapshot, by stage", ["stage"],
            buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1), registry=r,
        )
        self.state_bytes = Gauge("correlator_state_bytes", "Size of the persisted state snapshot", ["table", "key"],
                                 registry=r)


log = logging.getLogger("correlator.worker")


@dataclass
class UnknownSources:
    """Counts records of unknown host and warns once per source (topic, partition, key) per ``every_s``."""

    metrics: WorkerMetrics
    every_s: float = 600.0
    _warned: dict[tuple[str, int, bytes | None], float] = field(default_factory=dict)

    def seen(self, topic: str, partition: int, key: bytes | None) -> None:
        self.metrics.unknown_source.labels(topic).inc()
        source = (topic, partition, key)
        now = time.monotonic()
        if now - self._warned.get(source, -self.every_s) < self.every_s:
            return
        if len(self._warned) > 10_000:
            self._warned.clear()
        self._warned[source] = now
        shown = key.decode("utf-8", "replace")[:200] if key else "none"
        log.warning(
            "records of %s[%d] with key %s name no host: verdicts show it as 'unknown'; ship with a key host:path "
            "or a 'host' header, or in an envelope that names the host", topic, partition, shown)
