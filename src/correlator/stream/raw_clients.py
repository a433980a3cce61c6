"""The raw ingest's Kafka clients: a consumer that commits only through transactions, a transactional producer,
and the compacted topic that keeps each raw partition's ingest snapshot."""

from __future__ import annotations

import logging
import time
from typing import Any

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, TopicCollection, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from correlator.config import Settings

log = logging.getLogger("correlator.raw")
SNAPSHOT_LIMIT = 64 * 1024 * 1024
TRANSACTION_TIMEOUT_MS = 10_000
HEARTBEAT_MS = 500
"""A member learns of a rebalance at its next heartbeat; with librdkafka's 3 s every member that joined (another
raw-ingest process, a new worker) stalled the group that long."""
SESSION_TIMEOUT_MS = 10_000
"""How long the group waits for a member that stopped heartbeating before giving its partitions to others: a worker
killed and restarted gets its partitions back this long after its death, not after librdkafka's default 45 s.
librdkafka heartbeats from its own thread, so only a process that is gone or frozen for 10 s misses twenty heartbeats;
a processing stall is ``max.poll.interval.ms``'s business."""


def state_topic(settings: Settings) -> str:
    return f"{settings.worker_id}-ingest-state"


def consumer_group(settings: Settings) -> str:
    return f"{settings.worker_id}-ingest"


def consumer_config(settings: Settings, **extra: Any) -> dict[str, Any]:
    """The raw consumer: its own group, offsets committed only through transactions, fetches tuned for batches."""
    return settings.kafka_client(**{
        "group.id": consumer_group(settings),
        "enable.auto.commit": False,
        "enable.auto.offset.store": False,
        "auto.offset.reset": "earliest",
        "fetch.queue.backoff.ms": settings.raw_fetch_queue_backoff_ms,
        "queued.min.messages": settings.raw_queued_min_messages,
        "queued.max.messages.kbytes": settings.raw_queued_max_kbytes,
        "heartbeat.interval.ms": HEARTBEAT_MS,
        "session.timeout.ms": SESSION_TIMEOUT_MS,
        **extra,
    })


def producer_config(settings: Settings, instance: str) -> dict[str, Any]:
    """A stable transactional id per instance: a restarted worker fences its predecessor's open transaction."""
    return settings.kafka_client(**{
        "transactional.id": f"{settings.worker_id}-ingest-{instance}",
        "transaction.timeout.ms": TRANSACTION_TIMEOUT_MS,
        "partitioner": "murmur2_random",
        "linger.ms": 5,
        "compression.type": "lz4",
        "message.max.bytes": SNAPSHOT_LIMIT + 1024,
    })


def ensure_state_topic(settings: Settings) -> None:
    admin = AdminClient(settings.kafka_client())
    name = state_topic(settings)
    if name in admin.list_topics(timeout=15).topics:
        return
    topic = NewTopic(name, num_partitions=1, replication_factor=settings.state_replication, config={
        "cleanup.policy": "compact", "max.message.bytes": str(SNAPSHOT_LIMIT), "segment.ms": "600000",
        "min.cleanable.dirty.ratio": "0.1",
    })
    for future in admin.create_topics([topic]).values():
        try:
            future.result(30)
        except Exception as exc:  # created meanwhile by another worker
            if "TOPIC_ALREADY_EXISTS" not in str(exc):
                raise


def read_snapshots(settings: Settings, keys: set[bytes]) -> dict[bytes, bytes]:
    """The last committed snapshot of each key in the state topic (read to its end, committed records only)."""
    if not keys:
        return {}
    reader = Consumer(settings.kafka_client(**{
        "group.id": f"{settings.worker_id}-ingest-restore", "enable.auto.commit": False,
        "isolation.level": "read_committed", "enable.partition.eof": True,
    }))
    found: dict[bytes, bytes] = {}
    try:
        reader.assign([TopicPartition(state_topic(settings), 0, OFFSET_BEGINNING)])
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            msg = reader.poll(1.0)
            if msg is None:
                continue
            error = msg.error()
            if error is not None:
                if error.code() == KafkaError._PARTITION_EOF:
                    return found
                raise RuntimeError(f"reading {state_topic(settings)}: {error}")
            key = msg.key()
            value = msg.value()
            if key in keys:
                if value is None:  # a tombstone: no snapshot, as the caller reads a missing key
                    found.pop(key, None)
                else:
                    found[key] = value
        raise RuntimeError(f"reading {state_topic(settings)} did not reach its end within 120 s")
    finally:
        reader.close()


def topic_ids(settings: Settings, topics: set[str]) -> dict[str, str]:
    """Each topic's id as the broker says now (a topic deleted and created again under its name gets a new one);
    an empty answer when the broker cannot be asked, so nothing is judged recreated on a guess."""
    if not topics:
        return {}
    admin = AdminClient(settings.kafka_client(**{"log_level": 0}))
    try:
        futures = admin.describe_topics(TopicCollection(sorted(topics)), request_timeout=10)
        return {topic: str(future.result(15).topic_id) for topic, future in futures.items()}
    except Exception as exc:  # KafkaException, a timeout: with no id to compare, the snapshot is trusted
        log.warning("could not read the ids of %s (%s): a recreated topic would go unnoticed", sorted(topics), exc)
        return {}
