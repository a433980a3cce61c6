"""Is the worker live and caught up, and are its topics still the ones it started on?

Processing-time idleness ("this source said nothing for two minutes") is only evidence while the worker is reading:
connected, assigned, and at the end of every input partition. The probe asks the broker itself each tick — the
consumer's cached high watermarks go stale exactly when the broker is gone. It also notices what must stop the
worker rather than leave it waiting forever: a source topic that vanished, changed its partition count, or was
recreated (its topic id changed, or its end offset fell below what the worker already processed).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from confluent_kafka import Consumer, KafkaException, TopicCollection, TopicPartition
from confluent_kafka.admin import AdminClient

from correlator.config import Settings

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
