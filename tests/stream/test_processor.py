"""The correlate processor: a batch of event records through the cluster states, then publish, flush, persist."""

from __future__ import annotations

import asyncio
from typing import Any

from correlator.core.correlate.engine import EngineConfig
from correlator.core.events import Event
from correlator.stream import wire
from correlator.stream.clusters import ClusterStates
from correlator.stream.guard import Guard, Health
from correlator.stream.liveness import Progress
from correlator.stream.metrics import WorkerMetrics
from correlator.stream.processor import CorrelateProcessor
from correlator.stream.publisher import Publisher
from correlator.stream.state import ClusterState
from tests.core.correlate.factory import T0, read_too, seed
from tests.support.fake_faust import TP, FakeApp, FakeTable, FakeTopic, record

TOPIC = "correlator.events"
CONFIG = EngineConfig(idle_timeout_ms=10_000)


class Parts:
    def __init__(self) -> None:
        self.app, self.table, self.metrics = FakeApp(), FakeTable(), WorkerMetrics()
        self.verdicts, self.deadletter = FakeTopic(), FakeTopic()
        self.clusters = ClusterStates(self.table, CONFIG, self.metrics)
        publisher = Publisher(self.app, self.metrics, verdicts=self.verdicts, risks=FakeTopic(),
                              deadletter=self.deadletter)
        self.progress = Progress(self.metrics)
        self.processor = CorrelateProcessor(self.app, "default", self.clusters, publisher, self.progress,
                                            Guard(Health(), self.metrics, backoff_s=0), self.metrics)
        assert self.app.consumer is not None
        self.app.consumer.assigned = {TP(TOPIC, 0), TP(TOPIC, 1)}

    def warm(self, cluster: str, partition: int) -> ClusterState:
        state = self.clusters.get(cluster, partition)
        state.advance(0)
        state.advance(10_000)
        return state


def incident() -> list[Event]:
    return sorted(seed() + read_too(T0 - 600_000, T0 + 400_000), key=lambda e: e.ts_ms)


def batch_of(events: list[Event], partition: int = 0, key: bytes | None = b"default") -> list[Any]:
    return [record(TOPIC, partition, offset, wire.encode_event(event, wire.Position("logs.hdfs", 0, offset, 0)),
                   key=key, timestamp=1.0) for offset, event in enumerate(events)]


def test_a_batch_decides_as_its_state_does_and_is_persisted_after_the_flush() -> None:
    parts = Parts()
    parts.warm("default", 0)
    reference = ClusterState.load("default", CONFIG, None)
    reference.advance(0)
    reference.advance(10_000)
    events = incident()
    expected = [v for offset, event in enumerate(events)
                for v in reference.feed(offset, event, wire.Position("logs.hdfs", 0, offset, 0))]
    asyncio.run(parts.processor.process(batch_of(events)))
    assert [s["key"] for s in parts.verdicts.sent] == [wire.verdict_key(v) for v in expected] and expected
    assert parts.app.producer.log == ["flush"] and [(p, k) for p, k, _ in parts.table.changelog] == [(0, b"default")]
    assert ClusterState.load("default", CONFIG, parts.table.data[b"default"]).offset == len(events) - 1
    assert parts.progress.processed == {(TOPIC, 0): len(events) - 1}
    spent = {step: parts.metrics.registry.get_sample_value("correlator_correlate_seconds_total", {"step": step})
             for step in ("feed", "publish", "snapshot")}
    assert all(seconds is not None and seconds > 0 for seconds in spent.values()), spent  # where the batch's time went


def test_a_redelivered_batch_decides_nothing_again() -> None:
    parts = Parts()
    parts.warm("default", 0)
    batch = batch_of(incident())
    asyncio.run(parts.processor.process(batch))
    sent = len(parts.verdicts.sent)
    redelivered = [record(TOPIC, 0, len(batch) + r.message.offset, r.message.value) for r in batch[-5:]]
    asyncio.run(parts.processor.process(redelivered))
    assert len(parts.verdicts.sent) == sent and parts.metrics.duplicates._value.get() == 5


def test_a_foreign_record_is_dead_lettered_and_an_unkeyed_one_goes_to_the_default_cluster() -> None:
    parts = Parts()
    events = seed()[:3]
    batch = [record(TOPIC, 1, 0, b"\x00garbage", key=b"east"), *batch_of(events, partition=1, key=None)[1:]]
    asyncio.run(parts.processor.process(batch))
    [dead] = parts.deadletter.sent
    assert dead["key"] == b"east" and parts.metrics.dead_letters.labels("bad_event")._value.get() == 1
    assert "east" not in parts.clusters and parts.clusters["default"].offset == 2
    assert [(p, k) for p, k, _ in parts.table.changelog] == [(1, b"default")]


def test_the_agent_loop_counts_each_batch_and_runs_it_under_the_guard() -> None:
    parts = Parts()
    batches = [batch_of(seed()[:2]), batch_of(seed()[2:3])]

    class Stream:
        async def take_events(self, size: int, within: float) -> Any:
            assert (size, within) == (10, 0.5)
            for batch in batches:
                yield batch

    asyncio.run(parts.processor.consume(Stream(), 10, 0.5))
    assert parts.metrics.records_in.labels(TOPIC)._value.get() == 3
    assert parts.clusters["default"].offset == 1, "the second batch's offset 0 was read already"
