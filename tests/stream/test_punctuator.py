"""The tick: idleness counts only while live and caught up, and every outage restarts the idle clocks first."""

from __future__ import annotations

import asyncio

from correlator.core.correlate.engine import EngineConfig
from correlator.stream.clusters import ClusterStates
from correlator.stream.guard import Guard, Health
from correlator.stream.liveness import Liveness, Progress, Status
from correlator.stream.metrics import WorkerMetrics
from correlator.stream.publisher import Publisher
from correlator.stream.punctuator import Punctuator
from correlator.stream.raw_process import RawIngestStatus
from correlator.stream.state import ClusterState
from tests.core.correlate.factory import seed
from tests.support.fake_faust import TP, FakeApp, FakeProbe, FakeRawIngest, FakeTable, FakeTopic

EVENTS = "correlator.events"
CONFIG = EngineConfig(idle_timeout_ms=10_000)


class Parts:
    def __init__(self) -> None:
        self.now = 0
        self.app, self.table, self.metrics, self.health = FakeApp(), FakeTable(), WorkerMetrics(), Health()
        self.raw = FakeRawIngest(RawIngestStatus(assignment_known=True))
        self.probe = FakeProbe(Status(True, True))
        self.progress = Progress(self.metrics)
        self.liveness = Liveness(self.probe, FakeProbe(Status(True, True)), self.raw,  # type: ignore[arg-type]
                                 self.progress, self.health, self.metrics, ready_max_lag=100)
        self.verdicts = FakeTopic()
        publisher = Publisher(self.app, self.metrics, verdicts=self.verdicts, risks=FakeTopic(), deadletter=FakeTopic())
        self.clusters = ClusterStates(self.table, CONFIG, self.metrics)
        guard = Guard(self.health, self.metrics, backoff_s=0)
        self.punctuator = Punctuator(self.app, EVENTS, self.clusters, publisher, self.liveness,
                                     self.raw, self.health, guard, clock=lambda: self.now)  # type: ignore[arg-type]
        assert self.app.consumer is not None
        self.app.consumer.assigned = {TP(EVENTS, 0)}

    def tick(self, at: int) -> None:
        self.now = at
        asyncio.run(self.punctuator.tick())


def snapshot_with_a_pending_case(table: FakeTable, partition: int) -> None:
    """A cluster's snapshot whose seed incident waits for its sources to go idle."""
    state = ClusterState.load("default", CONFIG, None)
    for offset, event in enumerate(seed()):
        assert state.feed(offset, event, None) == []
    state.partition = partition
    table.data[b"default"] = state.dump()


def test_after_an_outage_the_first_live_tick_restarts_idleness_and_the_next_ones_advance() -> None:
    parts = Parts()
    snapshot_with_a_pending_case(parts.table, 0)
    parts.tick(1_000)
    assert not parts.punctuator.since_outage and parts.raw.restarted == [1_000] and parts.raw.live
    assert "default" in parts.clusters, "an owned snapshot no event touched yet is loaded"
    parts.tick(20_000)
    assert parts.verdicts.sent == [] and parts.table.changelog == []
    parts.tick(40_000)
    assert len(parts.verdicts.sent) == 1 and [(p, k) for p, k, _ in parts.table.changelog] == [(0, b"default")]
    assert parts.app.producer.log == ["flush"]


def test_while_not_live_nothing_advances_and_the_outage_is_remembered() -> None:
    parts = Parts()
    snapshot_with_a_pending_case(parts.table, 0)
    parts.tick(1_000)
    parts.probe.answer = Status(False, False, behind="cannot reach Kafka")
    parts.tick(40_000)
    assert parts.punctuator.since_outage and parts.verdicts.sent == [] and not parts.raw.live
    assert parts.liveness.last == parts.probe.answer
    parts.probe.answer = Status(True, True)
    parts.tick(41_000)
    assert parts.raw.restarted == [1_000, 41_000] and parts.verdicts.sent == [], "idle clocks start again"
    parts.punctuator.outage()
    parts.app.rebalancing = True
    parts.tick(80_000)
    assert parts.punctuator.since_outage and parts.verdicts.sent == []


def test_a_fatal_probe_or_a_failed_raw_ingest_stops_the_worker() -> None:
    parts = Parts()
    parts.probe.answer = Status(True, False, fatal="topic correlator.events was recreated")
    parts.tick(1_000)
    assert parts.health.failed == "topic correlator.events was recreated"
    parts = Parts()
    parts.raw.failed = "raw ingest failed: boom"
    parts.tick(1_000)
    assert parts.health.failed == "raw ingest failed: boom" and parts.probe.calls == []


def test_no_consumer_yet_no_tick() -> None:
    parts = Parts()
    parts.app.consumer = None
    parts.tick(1_000)
    assert parts.probe.calls == [] and parts.punctuator.since_outage
