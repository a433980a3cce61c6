"""Raw ingest at librdkafka speed: confluent-kafka batches in, events out, exactly once, beside the Faust app.

The firehose never passes through Faust record by record. One thread runs a loop per worker:

    consume(raw_batch) ─> per topic-partition and source: one scan over the joined values (core ``Ingest``)
        ─> events (keyed by cluster) + dead letters + the touched partitions' ingest snapshots
        ─> one Kafka transaction that also commits the consumed raw offsets (``send_offsets_to_transaction``),
           committed while the next batch is consumed and grouped (``raw_commit``)

The ingest state spanning records (multi-line partials, open block writes, source clocks) is a snapshot per raw
partition in a compacted state topic written in the same transaction, so after a crash or a rebalance a partition
resumes from a committed offset with exactly the state that offset had: no event lost, none repeated. Readers of the
events topic read committed records only. Any error aborts the open transaction and restarts the loop from what was
committed; a stage that keeps failing (``RETRIES`` restarts without a committed batch between them) marks the worker
failed (not ready; the process exits non-zero) rather than skipping records.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, Message, Producer, TopicPartition

from correlator.config import Settings
from correlator.core.ingest.ingest import IngestConfig
from correlator.core.ingest.prefilter import Scanner
from correlator.core.ingest.records import ParseError
from correlator.stream import wire
from correlator.stream.guard import Health
from correlator.stream.metrics import UnknownSources, WorkerMetrics
from correlator.stream.raw_clients import (
    consumer_config,
    consumer_group,
    ensure_state_topic,
    producer_config,
    read_snapshots,
    state_topic,
    topic_ids,
)
from correlator.stream.state import RawPartitionState
from correlator.stream.steps import Steps
from correlator.stream.raw_commit import Transactions
from correlator.stream.stuck_calls import TransactionStuck, abandon

log = logging.getLogger(__name__)
RESTART_BACKOFF_S = 2.0
RETRIES = 3
CONSUME_WAIT_S = 0.1
"""``consume`` waits this long for a full batch: under a backlog batches fill at once; a quiet stream's records wait
no longer than this before their transaction (part of a verdict's latency)."""


@dataclass
class RawIngest:
    """The ingest loop and what the web pages and the correlate side read of it (lags, health)."""

    settings: Settings
    config: IngestConfig
    scanner: Scanner
    metrics: WorkerMetrics
    now_ms: Callable[[], int]
    tick_s: float = 1.0
    health: Health = field(default_factory=Health)
    instance: str = ""
    lags: dict[tuple[str, int], int] = field(default_factory=dict)
    processed: dict[tuple[str, int], int] = field(default_factory=dict)
    """The last raw offset committed per assigned partition (what the liveness probe compares with the ends)."""
    assigned: set[tuple[str, int]] = field(default_factory=set)
    assignment_known: bool = False
    """The consumer got its (possibly empty) assignment since the loop (re)started."""
    live: bool = False
    """Set by the worker's probe: only while the broker answers and every input is read does idleness count."""
    failures: int = 0
    failing: int = 0
    failed: str | None = None
    """Why the stage gave up (past its retries): the worker then stops, not ready, exit 1."""
    """Restarts since the last committed batch."""
    last_error: str | None = None
    running: bool = False
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    _states: dict[tuple[str, int], RawPartitionState] = field(default_factory=dict)
    _restart_idle_at: int | None = None
    unknown: UnknownSources | None = None

    def start(self) -> None:
        """``instance`` (``instance_name`` unless given) names this loop's transactions across its restarts."""
        self.instance = self.instance or instance_name(self.settings)
        ensure_state_topic(self.settings)
        self._thread = threading.Thread(target=self._forever, name="raw-ingest", daemon=True)
        self._thread.start()

    def stop(self, timeout_s: float = 30.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout_s)

    @property
    def healthy(self) -> bool:
        return self.running and self._thread is not None and self._thread.is_alive()

    def restart_idle(self, now_ms: int) -> None:
        """After an outage every idle clock starts again (applied by the loop's thread before its next tick)."""
        self._restart_idle_at = now_ms

    def _forever(self) -> None:
        while not self._stop.is_set() and self.health.failed is None and self.failed is None:
            try:
                _Loop(self).run()
            except Exception as exc:  # the stage restarts from what was committed; the error is reported
                self.running = False
                self.failures += 1
                self.failing += 1
                self.metrics.stage_errors.labels("raw_ingest").inc()
                self.last_error = f"{type(exc).__name__}: {exc}"[:300]
                if self.failing > RETRIES:
                    self.metrics.crashes.labels("raw_ingest").inc()
                    self.failed = f"raw ingest stage failed: {self.last_error}"  # the worker's timer stops it
                    log.error("%s (attempt %d of %d)", self.failed, self.failing, RETRIES + 1)
                    break
                log.error("raw ingest failed (attempt %d of %d), restarting from the committed offsets: %s",
                          self.failing, RETRIES + 1, self.last_error)
                self._stop.wait(RESTART_BACKOFF_S * 2 ** (self.failing - 1))
        self.running = False


class _Loop:
    """One life of the loop: a consumer, a transactional producer, the states of the assigned partitions."""

    def __init__(self, owner: RawIngest) -> None:
        self.owner = owner
        self.settings = owner.settings
        self.states = owner._states
        self.states.clear()
        self.owner.lags.clear()
        self.owner.processed.clear()
        self.owner.assigned.clear()
        self.owner.assignment_known = False
        self.producer = Producer(producer_config(self.settings, owner.instance))
        self.producer.init_transactions(60)
        self.consumer = Consumer(consumer_config(self.settings))
        self.tx = Transactions(self.producer, self.consumer)
        self.last_tick = time.monotonic()
        self.stuck = False

    def run(self) -> None:
        owner, settings = self.owner, self.settings
        try:
            self.consumer.subscribe(list(settings.raw_topics),
                                    on_assign=self._assigned, on_revoke=self._revoked, on_lost=self._revoked)
            owner.running = True
            while not owner._stop.is_set() and owner.health.failed is None and owner.failed is None:
                laps = Steps()
                batch = self.consumer.consume(settings.raw_batch, timeout=CONSUME_WAIT_S)
                if batch:
                    laps.lap("consume")
                    self._process(batch, laps)
                    for step, seconds in laps.spent.items():
                        owner.metrics.ingest_seconds.labels(step).inc(seconds)
                else:
                    self.tx.settle()  # nothing to overlap the last batch's commit with
                if time.monotonic() - self.last_tick >= owner.tick_s:
                    self.last_tick = time.monotonic()
                    self._tick()
            self.tx.settle()
        except TransactionStuck as stuck:
            self.stuck = True
            abandon(self.producer, stuck)
            raise
        finally:
            owner.running = False
            if not self.stuck:  # a stuck producer refuses every other transactional call, or blocks on it
                self.tx.close()
            self.consumer.close()

    # --- rebalance -------------------------------------------------------------------------------------------

    def _assigned(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        keys = {_key(tp.topic, tp.partition) for tp in partitions}
        blobs = read_snapshots(self.settings, keys)
        ids = topic_ids(self.settings, {tp.topic for tp in partitions})
        loaded = {(tp.topic, tp.partition): RawPartitionState.load(
            tp.topic, tp.partition, self.owner.config, blobs.get(_key(tp.topic, tp.partition)), self.owner.scanner,
            ids.get(tp.topic)) for tp in partitions}
        refused = next((s for s in loaded.values() if s.recreated_from is not None), None)
        if refused is not None and self.settings.recreated_topics == "refuse":
            # no state is kept, so no record of the new topic is read or committed before the worker stops
            self.owner.failed = (
                f"raw topic {refused.topic} was deleted and created again (topic id {refused.recreated_from}, now "
                f"{refused.topic_id}); refusing to read it (CORRELATOR_RECREATED_TOPICS=refuse). To read the new "
                "topic from its first record, start the worker once with CORRELATOR_RECREATED_TOPICS=read")
            log.error("%s", self.owner.failed)
            return
        self.owner.assigned |= {(tp.topic, tp.partition) for tp in partitions}
        self.owner.assignment_known = True
        restart = False
        for tp in partitions:
            state = self.states[(tp.topic, tp.partition)] = loaded[(tp.topic, tp.partition)]
            state.ingest.restart_idle(self.owner.now_ms())  # a restart or rebalance is an outage: wait a full bound
            if state.recreated_from is not None:
                log.error("raw topic %s was deleted and created again (topic id %s, now %s): partition %d's ingest "
                          "snapshot belongs to the deleted topic and is dropped; the new topic is read from its first "
                          "record", tp.topic, state.recreated_from, state.topic_id, tp.partition)
                self.owner.metrics.topics_recreated.labels(tp.topic).inc()
                tp.offset, restart = OFFSET_BEGINNING, True  # the group's offset, if any, is the deleted topic's
            if state.offset >= 0:
                self.owner.processed[(tp.topic, tp.partition)] = state.offset
        if restart:
            consumer.assign(partitions)

    def _revoked(self, _consumer: Consumer, partitions: list[TopicPartition]) -> None:
        self.tx.settle()  # the partitions move on only once what was read of them is committed
        for tp in partitions:
            self.states.pop((tp.topic, tp.partition), None)
            self.owner.lags.pop((tp.topic, tp.partition), None)
            self.owner.processed.pop((tp.topic, tp.partition), None)
            self.owner.assigned.discard((tp.topic, tp.partition))

    # --- one batch, one transaction ----------------------------------------------------------------------------

    def _process(self, batch: list[Message], laps: Steps) -> None:
        metrics = self.owner.metrics
        sources: dict[tuple[Any, ...], list[Message]] = {}
        errors = 0
        for msg in batch:  # per record: one lookup in one flat dict; partitions are split after, once per source
            if msg.error() is not None:
                errors += 1
                continue
            headers = msg.headers()  # part of the source: one host/file key may be shipped for several clusters
            source = (msg.topic(), msg.partition(), msg.key(), tuple(headers) if headers else ())
            found = sources.get(source)
            if found is None:
                sources[source] = [msg]
            else:
                found.append(msg)
        groups: dict[tuple[str, int], dict[tuple[Any, ...], list[Message]]] = {}
        for (topic, partition, key, headers), msgs in sources.items():
            groups.setdefault((topic, partition), {})[(key, headers)] = msgs
        if errors:
            first = next(error for m in batch if (error := m.error()) is not None)
            if first.fatal() or first.code() not in (KafkaError._PARTITION_EOF,):
                log.warning("raw consumer reported %d errors, first: %s", errors, first)
        laps.lap("group")
        if not groups:
            return
        self.tx.begin()  # waits for the last batch's commit, overlapped with consuming and grouping this one
        laps.lap("commit")
        offsets: list[TopicPartition] = []
        by_topic: Counter[str] = Counter()
        for (topic, partition), sources in groups.items():
            state = self.states.get((topic, partition))
            if state is None:  # revoked between consume and here cannot happen; a foreign partition is skipped
                continue
            last = max(_offset(msgs[-1]) for msgs in sources.values())
            floor = state.start_batch(last)
            now = self.owner.now_ms()
            produced = []
            guessed, steps = dict(state.ingest.clock.guessed), state.ingest.writes.steps_back
            for (key, headers), msgs in sources.items():
                produced += [(item, msgs) for item in state.feed_messages(msgs, key, dict(headers), now, floor)]
                by_topic[topic] += len(msgs)
            for why, n in state.ingest.clock.guessed.items():
                if n > guessed.get(why, 0):
                    metrics.guessed_times.labels(why).inc(n - guessed.get(why, 0))
            if state.ingest.writes.steps_back > steps:
                metrics.clock_steps_back.labels(topic).inc(state.ingest.writes.steps_back - steps)
                log.warning("a DataNode's clock stepped back on %s[%d] (an NTP step, a DST fall-back or logs replayed "
                            "out of order): its write timing restarts there", topic, partition)
            laps.lap("parse")
            self._send(state, produced)
            laps.lap("produce")
            self._persist(state)
            laps.lap("snapshot")
            offsets.append(TopicPartition(topic, partition, last + 1))
        self.tx.commit(offsets, lambda: self._committed(offsets, by_topic))
        laps.lap("commit")

    def _committed(self, offsets: list[TopicPartition], by_topic: Counter[str]) -> None:
        self.owner.failing = 0
        for topic, n in by_topic.items():
            self.owner.metrics.records_in.labels(topic).inc(n)
        for tp in offsets:
            self.owner.processed[(tp.topic, tp.partition)] = tp.offset - 1
        self._observe_lag(offsets)

    def _send(self, state: RawPartitionState, produced: list[tuple[Any, list[Message]]]) -> None:
        events_topic, deadletter_topic = self.settings.topic_events, self.settings.topic_deadletter
        metrics = self.owner.metrics
        by_type: Counter[str] = Counter()
        for (item, position), msgs in produced:
            if isinstance(item, ParseError):
                metrics.dead_letters.labels(item.reason).inc()
                coordinates = wire.coordinates(item.ref)
                source = next((m for m in msgs if coordinates and m.offset() == coordinates[2]), None)
                self._produce(deadletter_topic, source.key() if source else None,
                              wire.encode_dead_letter(item, position, source.value() if source else None), None)
            else:
                by_type[item.type] += 1
                if item.host == "unknown" and self.owner.unknown is not None:
                    self.owner.unknown.seen(state.topic, state.partition, msgs[0].key() if msgs else None)
                timestamp = msgs[0].timestamp()[1] if msgs else None
                self._produce(events_topic, item.cluster.encode(), wire.encode_event(item, position), timestamp)
        for kind, n in by_type.items():
            metrics.events.labels(kind).inc(n)

    def _produce(self, topic: str, key: bytes | None, value: bytes, timestamp: int | None) -> None:
        while True:
            try:
                if timestamp and timestamp > 0:
                    self.producer.produce(topic, value=value, key=key, timestamp=timestamp)
                else:
                    self.producer.produce(topic, value=value, key=key)
                return
            except BufferError:
                self.producer.poll(0.05)

    def _persist(self, state: RawPartitionState) -> None:
        with self.owner.metrics.snapshot_seconds.labels("ingest").time():
            blob = state.dump()
        key = _key(state.topic, state.partition)
        self._produce(state_topic(self.settings), key, blob, None)
        self.owner.metrics.state_bytes.labels("ingest", key.decode()).set(len(blob))

    def _observe_lag(self, offsets: list[TopicPartition]) -> None:
        for tp in offsets:
            try:
                _, high = self.consumer.get_watermark_offsets(tp, cached=True)
            except Exception:  # statistics not yet known for a fresh assignment
                continue
            if high is None or high < 0:
                continue
            lag = max(0, high - tp.offset)
            self.owner.lags[(tp.topic, tp.partition)] = lag
            self.owner.metrics.consumer_lag.labels(tp.topic, str(tp.partition)).set(lag)

    def _tick(self) -> None:
        """Processing time passes: once caught up, half-received records and open writes of silent sources close."""
        now = self.owner.now_ms()
        if self.owner._restart_idle_at is not None:
            for state in self.states.values():
                state.ingest.restart_idle(self.owner._restart_idle_at)
            self.owner._restart_idle_at = None
            return
        if not self.owner.live:  # the worker's probe: broker answering and every input read (see ``liveness``)
            return
        flushed = [(state, state.flush_idle(now)) for state in self.states.values()]
        flushed = [(state, produced) for state, produced in flushed if produced]
        if not flushed:
            return
        self.tx.begin()
        for state, produced in flushed:
            self._send(state, [(item, []) for item in produced])
            self._persist(state)
        self.tx.commit([])


def _offset(msg: Message) -> int:
    offset = msg.offset()
    assert offset is not None  # a consumed record without an error always has its offset
    return offset


def instance_name(settings: Settings, index: int = 0) -> str:
    """Host and web port name a worker; a worker's further raw-ingest loops add their index (the first keeps the
    name a single loop always had, so its open transaction is fenced after an upgrade too)."""
    name = f"{socket.gethostname()}-{settings.web_port}"
    return name if index == 0 else f"{name}.{index}"


def _key(topic: str, partition: int) -> bytes:
    return f"{topic}/{partition}".encode()
