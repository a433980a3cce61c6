"""The Faust application: the raw-ingest loop beside it, one short agent and a timer around the core.

ingest     raw topics ──> confluent-kafka batches, one scan each (core ``Ingest``) ──> ``correlator.events`` keyed by
           cluster, ``correlator.deadletter`` with the reason; one transaction with the raw offsets
           (``correlator.stream.raw_ingest``, in a process of its own: the firehose never goes through Faust)
correlate  ``correlator.events`` (committed records only) ──> the cluster's ``Engine`` ──> ``correlator.verdicts``
timer      processing time ──> idle sources advanced (only while live and caught up; idle clocks restart after
           any outage)

The engine state lives in a changelog-backed table (one snapshot per cluster, written once per batch, to the
partition its input came from) so a crash or a rebalance resumes where the last batch ended.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import faust
from confluent_kafka.admin import AdminClient
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from correlator.config import Settings
from correlator.core.correlate.engine import EngineConfig
from correlator.core.events import Event
from correlator.core.explain.verdict import Verdict
from correlator.core.ingest.limits import out_of_range
from correlator.core.ingest.records import ParseError, parse_error
from correlator.stream import (
    no_autocreate,  # noqa: F401  (on import: aiokafka never auto-creates topics)
    wire,
)
from correlator.stream.guard import Guard, Health
from correlator.stream.liveness import Probe, Status
from correlator.stream.metrics import WorkerMetrics
from correlator.stream.raw_ingest import consumer_group
from correlator.stream.raw_process import RawIngestProcesses
from correlator.stream.report_pages import register as register_report_pages
from correlator.stream.state import ClusterState
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


def now_ms() -> int:
    return int(time.time() * 1000)


def create_app(
    settings: Settings,
    *,
    engine_config: EngineConfig | None = None,
    options: WorkerOptions | None = None,
    metrics: WorkerMetrics | None = None,
    health: Health | None = None,
) -> faust.App:
    engine_config = engine_config or settings.engine_config()
    options = options or WorkerOptions()
    metrics = metrics or WorkerMetrics()
    health = health or Health()
    guard = Guard(health, metrics)
    raw_names = (settings.topic_logs_flink, settings.topic_logs_hdfs)
    counts = partition_counts(settings, (*raw_names, settings.topic_events))
    ingest_config = settings.ingest_config()

    app = faust_app(
        settings,
        web_port=settings.web_port,
        web_bind=settings.web_host,
        web_host=settings.web_host,
        producer_acks=-1,
        topic_disable_leader=True,
        stream_wait_empty=True,
        producer_max_request_size=SNAPSHOT_LIMIT,
        topic_replication_factor=settings.state_replication,
    )
    read_committed()
    events_topic = bytes_topic(app, settings.topic_events)
    verdicts_topic = bytes_topic(app, settings.topic_verdicts)
    risks_topic = bytes_topic(app, settings.topic_risks)
    deadletter_topic = bytes_topic(app, settings.topic_deadletter)
    engine_table = app.Table(
        "engine", partitions=counts[settings.topic_events], key_type=bytes, value_type=bytes,
        extra_topic_configs=CHANGELOG_CONFIGS,
    )

    cluster_states: dict[str, tuple[int, ClusterState]] = {}
    raw_ingest = RawIngestProcesses(settings, ingest_config, metrics, tick_s=options.tick_s)
    correlate_lock = asyncio.Lock()
    lags: dict[tuple[str, int], int] = {}
    processed: dict[tuple[str, int], int] = {}
    probe = Probe(settings, {settings.topic_events: counts[settings.topic_events]}, settings.worker_id,
                  transactional=(settings.topic_events,))
    raw_probe = Probe(settings, {name: counts[name] for name in raw_names}, consumer_group(settings))
    outage: dict[str, Any] = {"since_restart": True, "status": None}

    def persist(table: faust.Table, partition: int, key: bytes, blob: bytes) -> None:
        """Write one snapshot to the changelog partition of the input it summarises (not the 'current event')."""
        table.send_changelog(partition, key, blob)
        table.data[key] = blob
        metrics.state_bytes.labels(table.name, key.decode(errors="replace")).set(len(blob))

    def timed_dump(state: ClusterState) -> bytes:
        with metrics.snapshot_seconds.labels("engine").time():
            return state.dump()

    def cluster_state(cluster: str, partition: int) -> ClusterState:
        cached = cluster_states.get(cluster)
        if cached is None:
            state = ClusterState.load(cluster, engine_config, engine_table.get(cluster.encode()))
            state.partition = partition
            cluster_states[cluster] = (partition, state)
            return state
        return cached[1]

    def forward(produced: list[tuple[Event | ParseError, wire.Position]], message: Any | None) -> None:
        """Events to the events topic, parse errors to the dead-letter topic with their own coordinates."""
        by_type: Counter[str] = Counter()
        for item, position in produced:
            if isinstance(item, ParseError):
                metrics.dead_letters.labels(item.reason).inc()
                is_current = message is not None and wire.coordinates(item.ref) == (
                    message.topic, message.partition, message.offset
                )
                deadletter_topic.send_soon(
                    key=message.key if is_current else None,
                    value=wire.encode_dead_letter(item, position, message.value if is_current else None),
                )
            else:
                by_type[item.type] += 1
                events_topic.send_soon(
                    key=item.cluster.encode(),
                    value=wire.encode_event(item, position),
                    timestamp=message.timestamp if message is not None else time.time(),
                )
        for kind, n in by_type.items():
            metrics.events.labels(kind).inc(n)

    def publish(verdicts: list[tuple[Verdict, float | None]]) -> None:
        for verdict, produced_at in verdicts:
            verdicts_topic.send_soon(key=wire.verdict_key(verdict), value=wire.encode_verdict(verdict))
            metrics.verdicts.labels(verdict.root_cause.code).inc()
            if produced_at:
                metrics.decision_latency.observe(max(0.0, time.time() - produced_at))

    def publish_risks(state: ClusterState) -> None:
        for risk in state.take_risks():
            risks_topic.send_soon(key=wire.risk_key(risk), value=wire.encode_risk(risk))
            metrics.risks.labels(risk.status).inc()

    def count_by_topic(batch: list[Any]) -> None:
        for topic, n in Counter(event.message.topic for event in batch).items():
            metrics.records_in.labels(topic).inc(n)

    async def observe_lag(batch: list[Any]) -> None:
        last = {event.message.tp: event.message.offset for event in batch}
        assigned = app.consumer.assignment()
        for tp, offset in last.items():
            if tp not in assigned:  # revoked while this batch was processed
                continue
            processed[(tp.topic, tp.partition)] = max(offset, processed.get((tp.topic, tp.partition), -1))
            highwater = app.consumer.highwater(tp)
            if highwater is None:
                continue
            lag = max(0, highwater - offset - 1)
            if lag and (await app.consumer.position(tp) or 0) >= highwater:
                lag = 0  # what lies beyond is transaction markers (or fetched records, whose batch comes next)
            lags[(tp.topic, tp.partition)] = lag
            metrics.consumer_lag.labels(tp.topic, str(tp.partition)).set(lag)

    def caught_up() -> bool:
        """Idleness means 'nothing more is coming'; while this worker still has a backlog, nothing is idle."""
        return all(lag == 0 for lag in lags.values())  # the raw inputs: the probe's (``check_live``)

    @app.task
    async def start_raw_ingest() -> None:
        raw_ingest.start()  # from the main thread: the child's death signal follows the thread that started it

    @app.on_before_shutdown.connect
    async def stop_raw_ingest(*_: Any, **__: Any) -> None:
        await asyncio.get_running_loop().run_in_executor(None, raw_ingest.stop)

    async def correlate_batch(batch: list[Any]) -> None:
        async with correlate_lock:
            decided: list[tuple[Verdict, float | None]] = []
            touched: set[str] = set()
            for event in batch:
                msg = event.message
                cluster = msg.key.decode("utf-8", "replace") if msg.key else settings.cluster
                ref = f"{msg.topic}/{msg.partition}@{msg.offset}"
                try:
                    parsed, position = wire.decode_event(msg.value)
                    if (why := out_of_range(parsed)) is not None:
                        raise ValueError(why)
                except Exception as exc:  # a foreign or corrupt record on our topic must not stop the worker
                    error = parse_error("bad_event", f"{type(exc).__name__}: {exc}"[:200], ref, msg.value or b"")
                    forward([(error, wire.Position(msg.topic, msg.partition, msg.offset, 0))], msg)
                    continue
                state = cluster_state(cluster, msg.partition)
                before = state.duplicates
                decided += [(v, msg.timestamp) for v in state.feed(msg.offset, parsed, position)]
                if state.duplicates != before:
                    metrics.duplicates.inc()
                touched.add(cluster)
            await observe_lag(batch)
            publish(decided)
            for cluster in touched:
                publish_risks(cluster_states[cluster][1])
            await app.producer.flush()
            for cluster in touched:
                partition, state = cluster_states[cluster]
                metrics.late_evidence.labels(cluster).set(state.engine.stats.get("late_evidence", 0))
                persist(engine_table, partition, cluster.encode(), timed_dump(state))

    @app.agent(events_topic)
    async def correlate(stream: faust.StreamT[bytes]) -> None:
        async for batch in stream.take_events(options.correlate_batch, within=options.correlate_within_s):
            count_by_topic(batch)
            await guard.run("correlate", lambda: correlate_batch(batch), cluster_states.clear)

    async def tick_once() -> None:
        now = now_ms()
        async with correlate_lock:
            for cluster, (partition, state) in list(cluster_states.items()):
                verdicts = state.advance(now)
                if verdicts:
                    publish([(v, None) for v in verdicts])
                    await app.producer.flush()
                    persist(engine_table, partition, cluster.encode(), timed_dump(state))

    def load_owned_clusters() -> None:
        """Clusters whose snapshot this worker owns but no event has touched since it (re)started still have
        cases to decide."""
        owned = {tp.partition for tp in app.consumer.assignment() if tp.topic == settings.topic_events}
        for key in list(engine_table.keys()):
            cluster = key.decode("utf-8", "replace")
            if cluster not in cluster_states:
                state = ClusterState.load(cluster, engine_config, engine_table.get(key))
                if state.partition in owned:
                    cluster_states[cluster] = (state.partition, state)

    def check_live() -> Status:
        """Both probes, off the event loop: the correlate side (Faust's group) and raw ingest (its own group)."""
        assigned = {(tp.topic, tp.partition) for tp in app.consumer.assignment()}
        status = probe.check(assigned, dict(processed))
        if status.fatal is not None or not (status.live and status.caught_up):
            return status
        raw_status = raw_ingest.status
        if not raw_status.assignment_known:
            return Status(True, False, behind="raw ingest not assigned yet")
        raw = raw_probe.check(set(raw_status.assigned), dict(raw_status.processed))
        return Status(raw.live, raw.live and not raw.behind, raw.fatal, raw.behind)

    @app.timer(options.tick_s)
    async def tick() -> None:
        """Idleness means 'nothing more is coming': it only counts while this worker is live and caught up, and
        after any outage (restart, rebalance, broker gone, backlog) every idle clock starts again."""
        if raw_ingest.failed is not None:
            health.fail(raw_ingest.failed)
        if health.failed is not None or app.consumer is None:
            return
        status = await asyncio.to_thread(check_live)
        outage["status"] = status
        live = status.live and status.caught_up and caught_up() and raw_ingest.healthy
        raw_ingest.live = live
        metrics.live.set(1 if live else 0)
        if status.fatal is not None:
            health.fail(status.fatal)
            return
        if not live or app.rebalancing:
            outage["since_restart"] = True
            return
        if outage["since_restart"]:
            async with correlate_lock:
                load_owned_clusters()
                now = now_ms()
                for _, state in cluster_states.values():
                    state.engine.restart_idle(now)
            raw_ingest.restart_idle(now_ms())
            outage["since_restart"] = False
            return
        await guard.run("timer", tick_once, cluster_states.clear)

    async def forget_partitions(*_: Any, **__: Any) -> None:
        """After a rebalance the tables, not the caches, are the truth: reload lazily from them."""
        cluster_states.clear()
        lags.clear()
        processed.clear()
        outage["since_restart"] = True

    app.on_partitions_revoked.connect(forget_partitions)
    app.on_partitions_assigned.connect(forget_partitions)

    @app.page("/healthz")
    async def healthz(web: Any, request: Any) -> Any:
        assigned = len(app.consumer.assignment()) if app.consumer else 0
        raw_status = raw_ingest.status
        max_lag = max(max(lags.values(), default=0), max(raw_status.lags.values(), default=0))
        ready = (assigned > 0 and not app.rebalancing and max_lag <= options.ready_max_lag and raw_ingest.healthy
                 and health.failed is None)
        body: dict[str, Any] = {
            "ready": ready, "assigned_partitions": assigned, "max_lag": max_lag, "rebalancing": app.rebalancing,
            "raw_ingest": {"running": raw_ingest.healthy, "processes": len(raw_ingest.children),
                           "restarts": raw_status.failures, "last_error": raw_status.last_error},
        }
        status = outage["status"]
        if status is not None and not status.live:
            ready = False
            body["reason"] = status.behind
        if health.failed is not None:
            body["reason"] = health.failed
        body["ready"] = ready
        return web.json(body, status=200 if ready else 503)

    @app.page("/metrics")
    async def prometheus(web: Any, request: Any) -> Any:
        return web.bytes(generate_latest(metrics.registry), content_type=CONTENT_TYPE_LATEST.split(";", 2)[0] + "; version=0.0.4")

    app.correlator_metrics = metrics  # type: ignore[attr-defined]
    app.correlator_raw_ingest = raw_ingest  # type: ignore[attr-defined]
    app.correlator_pages = register_report_pages(app, settings)  # type: ignore[attr-defined]
    return app
