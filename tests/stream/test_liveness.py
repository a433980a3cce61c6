"""The liveness probe against a real broker: a topic deleted and created again under its name is not the same topic."""

from __future__ import annotations

import time

import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from correlator.config import Settings
from correlator.stream.liveness import Probe

pytestmark = pytest.mark.integration


def _until(check, timeout_s: float = 30.0):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while True:
        result = check()
        if result or time.monotonic() > deadline:
            return result
        time.sleep(0.2)


def _create(admin: AdminClient, topic: str) -> None:
    for future in admin.create_topics([NewTopic(topic, num_partitions=2, replication_factor=1)]).values():
        future.result(30)
    assert _until(lambda: topic in admin.list_topics(timeout=5).topics)


def test_a_recreated_topic_with_the_same_partition_count_is_fatal(kafka_bootstrap: str, unique: str) -> None:
    settings = Settings(bootstrap_servers=kafka_bootstrap)
    admin = AdminClient({"bootstrap.servers": kafka_bootstrap})
    topic = f"liveness-{unique}"
    _create(admin, topic)
    probe = Probe(settings, {topic: 2}, f"liveness-{unique}")
    try:
        first = probe.check(set(), {})
        assert first.live and first.fatal is None, first
        assert probe.check(set(), {}).fatal is None, "the same topic must stay acceptable"
        for future in admin.delete_topics([topic]).values():
            future.result(30)
        assert _until(lambda: topic not in admin.list_topics(timeout=5).topics)
        _create(admin, topic)

        def fatal() -> str | None:
            return probe.check(set(), {}).fatal

        reason = _until(fatal)
        assert reason is not None and "was recreated" in reason, reason
    finally:
        probe.close()
        admin.delete_topics([topic])


def test_caught_up_means_having_read_what_was_there_one_probe_ago(kafka_bootstrap: str, unique: str) -> None:
    """A steady stream always has records in flight: the worker that keeps up counts as caught up, one that falls
    behind (or stops reading) does not."""
    from confluent_kafka import Producer

    settings = Settings(bootstrap_servers=kafka_bootstrap)
    admin = AdminClient({"bootstrap.servers": kafka_bootstrap})
    topic = f"keeping-up-{unique}"
    _create(admin, topic)
    producer = Producer({"bootstrap.servers": kafka_bootstrap})

    def produce(count: int) -> None:
        for i in range(count):
            producer.produce(topic, value=b"%d" % i, partition=0)
        assert producer.flush(30) == 0

    probe = Probe(settings, {topic: 2}, f"keeping-up-{unique}")
    mine = {(topic, 0), (topic, 1)}
    try:
        produce(10)
        assert not probe.check(mine, {(topic, 0): 4}).caught_up, "half of what is there was read"
        assert probe.check(mine, {(topic, 0): 9}).caught_up
        produce(10)  # ten more arrive while the worker reads on
        assert probe.check(mine, {(topic, 0): 9}).caught_up, "it has read everything there at the last probe"
        status = probe.check(mine, {(topic, 0): 9})
        assert not status.caught_up and status.behind == f"{topic}/0", "it read nothing since the last probe"
    finally:
        probe.close()
        admin.delete_topics([topic])
