"""The Faust application: two short agents and a timer around the core.

ingest     raw topics ──> envelope, multi-line, parse (core ``Ingest``) ──> ``correlator.events`` keyed by cluster
                                                                       └──> ``correlator.deadletter`` with the reason
correlate  ``correlator.events`` ──> the cluster's ``Engine`` ──> ``correlator.verdicts`` keyed by cluster + job
timer      processing time ──> idle multi-line records flushed, idle sources advanced

State lives in changelog-backed tables (one snapshot per partition or cluster, written once per batch, to the
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

from correlator.adapters.scanners import fastest_scanner
from correlator.config import Settings
from correlator.core.engine import EngineConfig
from correlator.core.events import Event
from correlator.core.limits import out_of_range
from correlator.core.records import ParseError, parse_error
from correlator.core.verdict import Verdict
from correlator.stream import no_autocreate  # noqa: F401  (on import: aiokafka never auto-creates topics)
from correlator.stream import wire
from correlator.stream.guard import Guard, Health
from correlator.stream.liveness import Probe
from correlator.stream.metrics import UnknownSources, WorkerMetrics
from correlator.stream.report_pages import register as register_report_pages
from correlator.stream.transport import bytes_topic, faust_app, raw_logs_topic
from correlator.stream.state import ClusterState, RawPartitionState


@dataclass(frozen=True, slots=True)
class WorkerOptions:
    """Batching: each batch costs one state snapshot, which dominates at small sizes (measured by bench stream)."""

    ingest_batch: int = 2000
    correlate_batch: int = 10_000
    batch_within_s: float = 0.5
    correlate_within_s: float = 1.0
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
    unknown_sources = UnknownSources(metrics)
    health = health or Health()
    guard = Guard(health, metrics)
    raw_names = (settings.topic_logs_flink, settings.topic_logs_hdfs)
    counts = partition_counts(settings, (*raw_names, settings.topic_events))
    ingest_config = settings.ingest_config()
    scanner = fastest_scanner()

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
    raw_topic = raw_logs_topic(app, settings)
    events_topic = bytes_topic(app, settings.topic_events)
    verdicts_topic = bytes_topic(app, settings.topic_verdicts)
    deadletter_topic = bytes_topic(app, settings.topic_deadletter)
    ingest_tables = {
        name: app.Table(f"ingest-{name}", partitions=counts[name], key_type=bytes, value_type=bytes,
                        extra_topic_configs=CHANGELOG_CONFIGS)
        for name in raw_names
    }
    engine_table = app.Table(
        "engine", partitions=counts[settings.topic_events], key_type=bytes, value_type=bytes,
        extra_topic_configs=CHANGELOG_CONFIGS,
    )

    raw_states: dict[tuple[str, int], RawPartitionState] = {}
    cluster_states: dict[str, tuple[int, ClusterState]] = {}
    ingest_lock = asyncio.Lock()
    correlate_lock = asyncio.Lock()
    lags: dict[tuple[str, int], int] = {}
    processed: dict[tuple[str, int], int] = {}
    probe = Probe(settings, counts, settings.worker_id)
    outage: dict[str, Any] = {"since_restart": True, "status": None}

    def persist(table: faust.Table, partition: int, key: bytes, blob: bytes) -> None:
        """Write one snapshot to the changelog partition of the input it summarises (not the 'current event')."""
        table.send_changelog(partition, key, blob)
        table.data[key] = blob
        metrics.state_bytes.labels(table.name, key.decode(errors="replace")).set(len(blob))

    def raw_state(topic: str, partition: int) -> RawPartitionState:
        state = raw_states.get((topic, partition))
        if state is None:
            key = f"{topic}/{partition}".encode()
            state = RawPartitionState.load(topic, partition, ingest_config, ingest_tables[topic].get(key), scanner)
            raw_states[(topic, partition)] = state
        return state

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
                if item.host == "unknown":
                    unknown_sources.seen(position.topic, position.partition, message.key if message else None)
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

    def count_by_topic(batch: list[Any]) -> None:
        for topic, n in Counter(event.message.topic for event in batch).items():
            metrics.records_in.labels(topic).inc(n)

    def observe_lag(batch: list[Any]) -> None:
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
            lags[(tp.topic, tp.partition)] = lag
            metrics.consumer_lag.labels(tp.topic, str(tp.partition)).set(lag)

    async def ingest_batch(batch: list[Any]) -> None:
        async with ingest_lock:
            touched: set[tuple[str, int]] = set()
            for event in batch:
                msg = event.message
                state = raw_state(msg.topic, msg.partition)
                headers = {k: v for k, v in (msg.headers or [])}
                produced = state.feed(msg.offset, msg.key, msg.value or b"", headers, now_ms())
                if produced is None:
                    continue
                touched.add((msg.topic, msg.partition))
                forward(produced, msg)
            observe_lag(batch)
            await app.producer.flush()  # outputs are durable before the snapshot that says they were sent
            for topic, partition in touched:
                persist(ingest_tables[topic], partition, f"{topic}/{partition}".encode(), raw_state(topic, partition).dump())

    @app.agent(raw_topic)
    async def ingest(stream: faust.StreamT[bytes]) -> None:
        async for batch in stream.take_events(options.ingest_batch, within=options.batch_within_s):
            count_by_topic(batch)
            await guard.run("ingest", lambda: ingest_batch(batch), raw_states.clear)

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
            observe_lag(batch)
            publish(decided)
            await app.producer.flush()
            for cluster in touched:
                partition, state = cluster_states[cluster]
                metrics.late_evidence.labels(cluster).set(state.engine.stats.get("late_evidence", 0))
                persist(engine_table, partition, cluster.encode(), state.dump())

    @app.agent(events_topic)
    async def correlate(stream: faust.StreamT[bytes]) -> None:
        async for batch in stream.take_events(options.correlate_batch, within=options.correlate_within_s):
            count_by_topic(batch)
            await guard.run("correlate", lambda: correlate_batch(batch), cluster_states.clear)

    async def tick_once() -> None:
        now = now_ms()
        async with ingest_lock:
            for (topic, partition), state in list(raw_states.items()):
                produced = state.flush_idle(now)
                if produced:
                    forward(produced, None)
                    await app.producer.flush()
                    persist(ingest_tables[topic], partition, f"{topic}/{partition}".encode(), state.dump())
        async with correlate_lock:
            for cluster, (partition, state) in list(cluster_states.items()):
                verdicts = state.advance(now)
                if verdicts:
                    publish([(v, None) for v in verdicts])
                    await app.producer.flush()
                    persist(engine_table, partition, cluster.encode(), state.dump())

    def forget_all() -> None:
        raw_states.clear()
        cluster_states.clear()

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

    def restart_idle_clocks(now: int) -> None:
        for state in raw_states.values():
            state.ingest.restart_idle(now)
        for _, state in cluster_states.values():
            state.engine.restart_idle(now)

    @app.timer(options.tick_s)
    async def tick() -> None:
        """Idleness means 'nothing more is coming': it only counts while this worker is live and caught up, and
        after any outage (restart, rebalance, broker gone, backlog) every idle clock starts again."""
        if health.failed is not None or app.consumer is None:
            return
        assigned = {(tp.topic, tp.partition) for tp in app.consumer.assignment()}
        status = await asyncio.to_thread(probe.check, assigned, dict(processed))
        outage["status"] = status
        metrics.live.set(1 if status.live and status.caught_up else 0)
        if status.fatal is not None:
            health.fail(status.fatal)
            return
        if not (status.live and status.caught_up) or app.rebalancing:
            outage["since_restart"] = True
            return
        if outage["since_restart"]:
            async with ingest_lock, correlate_lock:
                load_owned_clusters()
                restart_idle_clocks(now_ms())
            outage["since_restart"] = False
            return
        await guard.run("timer", tick_once, forget_all)

    async def forget_partitions(*_: Any, **__: Any) -> None:
        """After a rebalance the tables, not the caches, are the truth: reload lazily from them."""
        raw_states.clear()
        cluster_states.clear()
        lags.clear()
        processed.clear()
        outage["since_restart"] = True

    app.on_partitions_revoked.connect(forget_partitions)
    app.on_partitions_assigned.connect(forget_partitions)

    @app.page("/healthz")
    async def healthz(web: Any, request: Any) -> Any:
        assigned = len(app.consumer.assignment()) if app.consumer else 0
        max_lag = max(lags.values(), default=0)
        ready = assigned > 0 and not app.rebalancing and max_lag <= options.ready_max_lag and health.failed is None
        body: dict[str, Any] = {
            "ready": ready, "assigned_partitions": assigned, "max_lag": max_lag, "rebalancing": app.rebalancing
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
    app.correlator_pages = register_report_pages(app, settings)  # type: ignore[attr-defined]
    return app
