"""Is the worker live and caught up, and are its topics still the ones it started on?

Processing-time idleness ("this source said nothing for two minutes") is only evidence while the worker is reading:
connected, assigned, and at the end of every input partition. The probe asks the broker itself each tick — the
consumer's cached high watermarks go stale exactly when the broker is gone. It also notices what must stop the
worker rather than leave it waiting forever: a source topic that vanished, changed its partition count, or was
recreated (its topic id changed, or its end offset fell below what the worker already processed).

``Progress`` follows how far the correlate stage has read, ``Liveness`` puts the two probes (the correlate side in
Faust's group, raw ingest in its own), the lags and the worker's health together: what the tick asks before it lets
idleness count, and what ``/healthz`` answers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from confluent_kafka import Consumer, KafkaException, TopicCollection, TopicPartition
from confluent_kafka.admin import AdminClient

from correlator.config import Settings
from correlator.stream.guard import Health
from correlator.stream.metrics import WorkerMetrics

if TYPE_CHECKING:
    from correlator.stream.raw_process import RawIngestProcesses

PROBE_TIMEOUT_S = 2.0


@dataclass(frozen=True, slots=True)
class Status:
    live: bool
    """The broker answered."""
    caught_up: bool
    """Keeping up: every record that was at an assigned input's end at the previous probe has been processed."""
    fatal: str | None = None
    """A reason to stop: the topics are no longer those the worker started on."""
    behind: str = ""


class Probe:
    """One metadata + watermark + committed-offset round trip per call (run it off the event loop)."""

    def __init__(self, settings: Settings, partitions: Mapping[str, int], group: str,
                 transactional: Iterable[str] = ()) -> None:
        """``transactional``: topics written in transactions, whose ends lie past their last record (a commit
        marker); for them only the fatal checks apply, the caller knows from its consumer whether it caught up."""
        self.partitions = dict(partitions)
        self.transactional = frozenset(transactional)
        self.bootstrap = settings.bootstrap_servers
        self._consumer = Consumer(settings.kafka_client(**{
            "group.id": group, "enable.auto.commit": False, "log_level": 0,
            "socket.timeout.ms": int(PROBE_TIMEOUT_S * 1000),
        }))
        self._admin = AdminClient(settings.kafka_client(**{"log_level": 0}))
        self.topic_ids: dict[str, str] = {}
        """Each topic's id when first seen: a topic deleted and created again under the same name gets a new one."""
        self.ends_before: dict[tuple[str, int], int] = {}
        """Each input's end at the previous probe. A steady stream always has a few records in flight, so "caught
        up" means having read what was there one probe ago: a worker keeping up is, one with a backlog is not."""

    def _recreated(self) -> str | None:
        """The first topic whose id differs from the one first seen, as a reason; ``None`` when all are the same."""
        futures = self._admin.describe_topics(TopicCollection(sorted(self.partitions)),
                                              request_timeout=PROBE_TIMEOUT_S)
        for topic, future in futures.items():
            now = str(future.result(PROBE_TIMEOUT_S * 2).topic_id)
            before = self.topic_ids.setdefault(topic, now)
            if now != before:
                return f"topic {topic} was recreated (topic id {before}, now {now})"
        return None

    def check(self, assigned: set[tuple[str, int]], processed: Mapping[tuple[str, int], int]) -> Status:
        """``assigned``: this worker's input partitions; ``processed``: the last offset handled per partition."""
        try:
            metadata = self._consumer.list_topics(timeout=PROBE_TIMEOUT_S)
        except KafkaException as exc:
            return Status(False, False, behind=f"cannot reach Kafka at {self.bootstrap}: {exc.args[0].str()}")
        for topic, count in self.partitions.items():
            found = metadata.topics.get(topic)
            if found is None or found.error is not None:
                return Status(True, False, fatal=f"topic {topic} no longer exists (broker data lost or topic deleted)")
            if len(found.partitions) != count:
                return Status(True, False, fatal=f"topic {topic} has {len(found.partitions)} partitions, had {count}")
        try:
            recreated = self._recreated()
        except Exception as exc:  # KafkaException, or a timeout of the describe request
            return Status(False, False, behind=f"describing the topics at {self.bootstrap} failed: {exc}")
        if recreated is not None:
            return Status(True, False, fatal=recreated)
        mine = sorted(tp for tp in assigned if tp[0] in self.partitions)
        unseen = [TopicPartition(t, p) for t, p in mine if (t, p) not in processed]
        try:
            ends = {tp: self._consumer.get_watermark_offsets(TopicPartition(*tp), timeout=PROBE_TIMEOUT_S,
                                                             cached=False) for tp in mine}
            committed = {(c.topic, c.partition): c.offset
                         for c in (self._consumer.committed(unseen, timeout=PROBE_TIMEOUT_S) if unseen else [])}
        except KafkaException as exc:
            return Status(False, False, behind=f"cannot reach Kafka at {self.bootstrap}: {exc.args[0].str()}")
        behind = []
        before, self.ends_before = self.ends_before, {tp: high for tp, (_, high) in ends.items()}
        for tp, (low, high) in ends.items():
            done = processed.get(tp)
            if done is not None and done >= high:
                return Status(True, False, fatal=f"{tp[0]}/{tp[1]} ends at offset {high} but offset {done} was "
                                                 "already processed (topic recreated or truncated)")
            if tp[0] in self.transactional:
                continue
            position = done + 1 if done is not None else committed.get(tp, -1)
            if high > low and position < min(high, before.get(tp, high)):
                behind.append(f"{tp[0]}/{tp[1]}")
        return Status(True, not behind and bool(mine), behind=", ".join(behind[:3]))

    def close(self) -> None:
        self._consumer.close()


@dataclass
class Progress:
    """How far the correlate stage has read its events partitions: the last offset processed, and the lag behind
    each end (cleared on every rebalance: the new assignment's numbers come with its first batch)."""

    metrics: WorkerMetrics
    lags: dict[tuple[str, int], int] = field(default_factory=dict)
    processed: dict[tuple[str, int], int] = field(default_factory=dict)

    async def observe(self, consumer: Any, batch: Sequence[Any]) -> None:
        """After a batch of Faust events: its last offset per partition, and what lies beyond it."""
        last = {event.message.tp: event.message.offset for event in batch}
        assigned = consumer.assignment()
        for tp, offset in last.items():
            if tp not in assigned:  # revoked while this batch was processed
                continue
            key = (tp.topic, tp.partition)
            self.processed[key] = max(offset, self.processed.get(key, -1))
            highwater = consumer.highwater(tp)
            if highwater is None:
                continue
            lag = max(0, highwater - offset - 1)
            if lag and (await consumer.position(tp) or 0) >= highwater:
                lag = 0  # what lies beyond is transaction markers (or fetched records, whose batch comes next)
            self.lags[key] = lag
            self.metrics.consumer_lag.labels(tp.topic, str(tp.partition)).set(lag)

    def caught_up(self) -> bool:
        """Idleness means 'nothing more is coming'; while this worker still has a backlog, nothing is idle."""
        return all(lag == 0 for lag in self.lags.values())  # the raw inputs: the probe's (``Liveness.check``)

    def forget(self) -> None:
        self.lags.clear()
        self.processed.clear()


class Liveness:
    """Live (the broker answers), caught up (both stages read to their inputs' ends), ready (``/healthz``)."""

    def __init__(self, probe: Probe, raw_probe: Probe, raw_ingest: RawIngestProcesses, progress: Progress,
                 health: Health, metrics: WorkerMetrics, ready_max_lag: int) -> None:
        self.probe = probe
        self.raw_probe = raw_probe
        self.raw_ingest = raw_ingest
        self.progress = progress
        self.health = health
        self.metrics = metrics
        self.ready_max_lag = ready_max_lag
        self.last: Status | None = None
        """The latest probe's answer (``None`` before the first): a worker that cannot reach Kafka is not ready."""

    def check(self, consumer: Any) -> Status:
        """Both probes (blocking: run it off the event loop): the correlate side first, then raw ingest."""
        assigned = {(tp.topic, tp.partition) for tp in consumer.assignment()}
        status = self.probe.check(assigned, dict(self.progress.processed))
        if status.fatal is not None or not (status.live and status.caught_up):
            return status
        raw_status = self.raw_ingest.status
        if not raw_status.assignment_known:
            return Status(True, False, behind="raw ingest not assigned yet")
        raw = self.raw_probe.check(set(raw_status.assigned), dict(raw_status.processed))
        return Status(raw.live, raw.live and not raw.behind, raw.fatal, raw.behind)

    def settle(self, status: Status) -> bool:
        """Record a probe's answer; whether idleness counts now (told to raw ingest and the ``live`` gauge too)."""
        self.last = status
        live = status.live and status.caught_up and self.progress.caught_up() and self.raw_ingest.healthy
        self.raw_ingest.live = live
        self.metrics.live.set(1 if live else 0)
        return live

    def report(self, assigned: int, rebalancing: bool) -> tuple[dict[str, Any], bool]:
        """The ``/healthz`` body and whether the worker is ready."""
        raw_ingest = self.raw_ingest
        raw_status = raw_ingest.status
        max_lag = max(max(self.progress.lags.values(), default=0), max(raw_status.lags.values(), default=0))
        ready = (assigned > 0 and not rebalancing and max_lag <= self.ready_max_lag and raw_ingest.healthy
                 and self.health.failed is None)
        body: dict[str, Any] = {
            "ready": ready, "assigned_partitions": assigned, "max_lag": max_lag, "rebalancing": rebalancing,
            "raw_ingest": {"running": raw_ingest.healthy, "processes": len(raw_ingest.children),
                           "restarts": raw_status.failures, "last_error": raw_status.last_error},
        }
        if self.last is not None and not self.last.live:
            ready = False
            body["reason"] = self.last.behind
        if self.health.failed is not None:
            body["reason"] = self.health.failed
        body["ready"] = ready
        return body, ready
