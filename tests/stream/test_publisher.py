"""The publisher: verdicts, risks and dead letters to their topics, each counted; flush waits for the producer."""

from __future__ import annotations

import asyncio

import orjson

from correlator.core.correlate.engine import EngineConfig
from correlator.core.explain.verdict import Verdict
from correlator.core.ingest.records import parse_error
from correlator.stream import wire
from correlator.stream.metrics import WorkerMetrics
from correlator.stream.publisher import Publisher
from correlator.stream.state import ClusterState
from tests.core.correlate.factory import T0, read_too, seed
from tests.support.fake_faust import FakeApp, FakeTopic, record


def decided() -> list[Verdict]:
    """The seed incident's verdict, decided as the worker decides it (a warm state, every source read)."""
    state = ClusterState.load("default", EngineConfig(idle_timeout_ms=10_000), None)
    state.advance(0)
    state.advance(10_000)
    events = sorted(seed() + read_too(T0 - 600_000, T0 + 400_000), key=lambda e: e.ts_ms)
    verdicts = [v for offset, event in enumerate(events) for v in state.feed(offset, event, None)]
    assert verdicts
    return verdicts


def _publisher(metrics: WorkerMetrics, app: FakeApp | None = None) -> tuple[Publisher, dict[str, FakeTopic]]:
    topics = {"verdicts": FakeTopic(), "risks": FakeTopic(), "deadletter": FakeTopic()}
    return Publisher(app or FakeApp(), metrics, clock=lambda: 1_000.5, **topics), topics


def test_verdicts_are_keyed_counted_and_timed_from_their_input() -> None:
    metrics = WorkerMetrics()
    publisher, topics = _publisher(metrics)
    [verdict] = decided()
    publisher.verdicts([(verdict, 1_000.0), (verdict, None)])
    assert topics["verdicts"].sent == [{"key": wire.verdict_key(verdict), "value": wire.encode_verdict(verdict)}] * 2
    assert metrics.verdicts.labels(verdict.root_cause.code)._value.get() == 2
    assert metrics.decision_latency._sum.get() == 0.5, "a tick's verdict (no input time) has no latency"


def test_a_dead_letter_carries_the_record_it_is_about() -> None:
    metrics = WorkerMetrics()
    publisher, topics = _publisher(metrics)
    msg = record("correlator.events", 2, 41, b"not an event", key=b"east").message
    position = wire.Position("correlator.events", 2, 41, 0)
    publisher.dead_letter(parse_error("bad_event", "ValueError: x", "correlator.events/2@41", b"not an event"),
                          position, msg)
    publisher.dead_letter(parse_error("bad_event", "ValueError: y", "elsewhere/0@1", b""), position, msg)
    [about, other] = topics["deadletter"].sent
    assert about["key"] == b"east" and other["key"] is None
    assert orjson.loads(about["value"]) != orjson.loads(other["value"])
    assert metrics.dead_letters.labels("bad_event")._value.get() == 2


def test_risks_are_taken_from_the_state_and_flush_waits_for_the_producer() -> None:
    metrics, app = WorkerMetrics(), FakeApp()
    publisher, topics = _publisher(metrics, app)
    state = ClusterState.load("default", EngineConfig(), None)
    publisher.risks(state)
    assert topics["risks"].sent == []
    asyncio.run(publisher.flush())
    assert app.producer.log == ["flush"]


def test_a_kafka_sinks_warning_and_loss_go_to_the_risk_topic_and_survive_a_snapshot() -> None:
    """The worker's state keeps the same TransactionWatch as `analyze`: its warning joins the risks, its loss records
    follow them on the same topic (their schema tells them apart), and a reloaded state goes on where it stopped."""
    from tests.core.explain.test_transactions import aborted, outage, setting

    state = ClusterState.load("c", EngineConfig(idle_timeout_ms=10_000), None)
    events = [setting(30_000), *outage(3, 6)]
    for offset, event in enumerate(events):
        state.feed(offset, event, None)
    reloaded = ClusterState.load("c", EngineConfig(idle_timeout_ms=10_000), state.dump())
    reloaded.due = state.take_risks()
    reloaded.feed(len(events), aborted("lab-eos-0-4", events[-1].ts_ms + 20_000), None)
    metrics = WorkerMetrics()
    publisher, topics = _publisher(metrics)
    publisher.risks(reloaded)
    schemas = [orjson.loads(sent["value"])["schema"] for sent in topics["risks"].sent]
    assert schemas == ["correlator.risk/v1", "correlator.risk/v1", "correlator.loss/v1"]
    assert orjson.loads(topics["risks"].sent[-1]["value"])["transactional_id"] == "lab-eos-0-4"
    assert metrics.risks.labels("lost")._value.get() == 1
