"""The Faust application: the raw-ingest loop beside it, one short agent and a timer around the core.

ingest     raw topics ──> confluent-kafka batches, one scan each (core ``Ingest``) ──> ``correlator.events`` keyed by
           cluster, ``correlator.deadletter`` with the reason; one transaction with the raw offsets
           (``correlator.stream.raw_ingest``, in a process of its own: the firehose never goes through Faust)
correlate  ``correlator.events`` (committed records only) ──> the cluster's ``Engine`` ──> ``correlator.verdicts``
timer      processing time ──> idle sources advanced (only while live and caught up; idle clocks restart after
           any outage)

The engine state lives in a changelog-backed table (one snapshot per cluster, written once per batch, to the
partition its input came from) so a crash or a rebalance resumes where the last batch ended.

``create_app`` only wires the named parts: ``ClusterStates`` (the cache and its table), the ``Publisher``, the
``CorrelateProcessor`` (the agent's batches), the ``Punctuator`` (the timer) and ``Liveness`` (lags, probes,
``/healthz``); ``RawIngestProcesses`` runs raw ingest beside them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import faust
from confluent_kafka.admin import AdminClient
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from correlator.config import Settings
from correlator.core.correlate.engine import EngineConfig
from correlator.stream import no_autocreate  # noqa: F401  (on import: aiokafka never auto-creates topics)
from correlator.stream.clusters import ClusterStates
from correlator.stream.guard import Guard, Health
from correlator.stream.liveness import Liveness, Probe, Progress
from correlator.stream.metrics import WorkerMetrics
from correlator.stream.processor import CorrelateProcessor
from correlator.stream.publisher import Publisher
from correlator.stream.punctuator import Punctuator
from correlator.stream.raw_clients import consumer_group
from correlator.stream.raw_process import RawIngestProcesses
from correlator.stream.report_pages import RecentVerdicts
from correlator.stream.report_pages import register as register_report_pages
from correlator.stream.transport import bytes_topic, faust_app, read_committed


@dataclass(frozen=True, slots=True)
class WorkerOptions:
    """Batching: each batch costs one state snapshot, which dominates at small sizes (``bench stream`` prints it).
    A quiet events stream waits ``correlate_within_s`` for its batch to fill: that wait is part of every verdict's
    latency, so it stays a fraction of the latency goal."""

    correlate_batch: int = 10_000
    correlate_within_s: float = 0.25
    tick_s: float = 1.0
    ready_max_lag: int = 10_000


SNAPSHOT_LIMIT = 64 * 1024 * 1024
CHANGELOG_CONFIGS = {"max.message.bytes": str(SNAPSHOT_LIMIT), "cleanup.policy": "compact"}


class TopicsMissing(RuntimeError):
    """The worker's topics do not exist; ``correlator topics apply`` creates them."""


def partition_counts(settings: Settings, names: Iterable[str]) -> dict[str, int]:
    metadata = AdminClient(settings.kafka_client(**{"log_level": 0})).list_topics(timeout=10)
    missing = [n for n in names if n not in metadata.topics]
    if missing:
        raise TopicsMissing(f"topics {', '.join(missing)} do not exist (run: correlator topics apply)")
    return {n: len(metadata.topics[n].partitions) for n in names}


@dataclass(frozen=True, slots=True)
class Worker:
    """The parts of one worker app (``app.correlator_worker``): what each stage reads and changes, in one place."""

    metrics: WorkerMetrics
    raw_ingest: RawIngestProcesses
    clusters: ClusterStates
    publisher: Publisher
    processor: CorrelateProcessor
    punctuator: Punctuator
    liveness: Liveness
    pages: RecentVerdicts


def worker_app(settings: Settings) -> faust.App:
    """The Faust app: all acks, no auto-created topics, snapshots up to ``SNAPSHOT_LIMIT``, committed reads."""
    app = faust_app(
        settings, web_port=settings.web_port, web_bind=settings.web_host, web_host=settings.web_host,
        producer_acks=-1, topic_disable_leader=True, stream_wait_empty=True, producer_max_request_size=SNAPSHOT_LIMIT,
        topic_replication_factor=settings.state_replication,
    )
    read_committed()
    return app


def create_app(
    settings: Settings,
    *,
    engine_config: EngineConfig | None = None,
    options: WorkerOptions | None = None,
    metrics: WorkerMetrics | None = None,
    health: Health | None = None,
) -> faust.App:
    engine_config = engine_config or settings.engine_config()
    options, metrics, health = options or WorkerOptions(), metrics or WorkerMetrics(), health or Health()
    raw_names = settings.raw_topics
    counts = partition_counts(settings, (*raw_names, settings.topic_events))
    ingest_config = settings.ingest_config()
    app = worker_app(settings)
    table = app.Table("engine", partitions=counts[settings.topic_events], key_type=bytes, value_type=bytes,
                      extra_topic_configs=CHANGELOG_CONFIGS)
    clusters = ClusterStates(table, engine_config, metrics)
    raw_ingest = RawIngestProcesses(settings, ingest_config, metrics, tick_s=options.tick_s)
    progress, guard = Progress(metrics), Guard(health, metrics)
    probe = Probe(settings, {settings.topic_events: counts[settings.topic_events]}, settings.worker_id,
                  transactional=(settings.topic_events,))
    raw_probe = Probe(settings, {name: counts[name] for name in raw_names}, consumer_group(settings))
    liveness = Liveness(probe, raw_probe, raw_ingest, progress, health, metrics, options.ready_max_lag)
    publisher = Publisher(app, metrics, verdicts=bytes_topic(app, settings.topic_verdicts),
                          risks=bytes_topic(app, settings.topic_risks),
                          deadletter=bytes_topic(app, settings.topic_deadletter))
    processor = CorrelateProcessor(app, settings.cluster, clusters, publisher, progress, guard, metrics)
    punctuator = Punctuator(app, settings.topic_events, clusters, publisher, liveness, raw_ingest, health, guard)

    @app.agent(bytes_topic(app, settings.topic_events))
    async def correlate(stream: faust.StreamT[bytes]) -> None:
        await processor.consume(stream, options.correlate_batch, options.correlate_within_s)

    @app.timer(options.tick_s)  # type: ignore[untyped-decorator]  # faust's decorators are unannotated
    async def tick() -> None:
        await punctuator.tick()

    async def forget_partitions(*_: Any, **__: Any) -> None:
        """After a rebalance the tables, not the caches, are the truth: reload lazily from them."""
        clusters.clear()
        progress.forget()
        punctuator.outage()

    app.on_partitions_revoked.connect(forget_partitions)
    app.on_partitions_assigned.connect(forget_partitions)
    run_raw_ingest(app, raw_ingest)
    add_pages(app, liveness, metrics)
    app.correlator_worker = Worker(  # type: ignore[attr-defined]
        metrics, raw_ingest, clusters, publisher, processor, punctuator, liveness, register_report_pages(app, settings))
    return app


def run_raw_ingest(app: faust.App, raw_ingest: RawIngestProcesses) -> None:
    """Raw ingest starts with the app and stops before it shuts down."""

    @app.task  # type: ignore[untyped-decorator]  # faust's decorators are unannotated
    async def start_raw_ingest() -> None:
        raw_ingest.start()  # from the main thread: the child's death signal follows the thread that started it

    @app.on_before_shutdown.connect
    async def stop_raw_ingest(*_: Any, **__: Any) -> None:
        await asyncio.get_running_loop().run_in_executor(None, raw_ingest.stop)


def add_pages(app: faust.App, liveness: Liveness, metrics: WorkerMetrics) -> None:
    """``/healthz`` (200 when ready, else 503 with the reason) and ``/metrics`` (Prometheus)."""

    @app.page("/healthz")
    async def healthz(web: Any, request: Any) -> Any:
        assigned = len(app.consumer.assignment()) if app.consumer else 0
        body, ready = liveness.report(assigned, app.rebalancing)
        return web.json(body, status=200 if ready else 503)

    @app.page("/metrics")
    async def prometheus(web: Any, request: Any) -> Any:
        return web.bytes(generate_latest(metrics.registry), content_type=CONTENT_TYPE_LATEST.split(";", 2)[0] + "; version=0.0.4")
