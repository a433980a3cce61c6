"""Liveness without a broker: the correlate stage's progress and lags, both probes together, the /healthz answer."""

from __future__ import annotations

import asyncio

from correlator.stream.guard import Health
from correlator.stream.liveness import Liveness, Progress, Status
from correlator.stream.metrics import WorkerMetrics
from correlator.stream.raw_process import RawIngestStatus
from tests.support.fake_faust import TP, FakeConsumer, FakeProbe, FakeRawIngest, record

EVENTS = "correlator.events"
RAW = "logs.flink"


def test_progress_keeps_the_last_offset_and_the_lag_past_it() -> None:
    metrics = WorkerMetrics()
    progress = Progress(metrics)
    consumer = FakeConsumer(assigned={TP(EVENTS, 0), TP(EVENTS, 1)},
                            highwaters={TP(EVENTS, 0): 20, TP(EVENTS, 1): 9}, positions={TP(EVENTS, 1): 9})
    batch = [record(EVENTS, 0, 7, b""), record(EVENTS, 0, 4, b""), record(EVENTS, 1, 5, b""), record(EVENTS, 2, 1, b"")]
    asyncio.run(progress.observe(consumer, batch))
    assert progress.processed == {(EVENTS, 0): 4, (EVENTS, 1): 5}, "the batch's last per partition, revoked skipped"
    assert progress.lags == {(EVENTS, 0): 15, (EVENTS, 1): 0}, "past the consumer's position lie only markers"
    assert metrics.consumer_lag.labels(EVENTS, "0")._value.get() == 15
    asyncio.run(progress.observe(consumer, [record(EVENTS, 0, 2, b"")]))
    assert progress.processed[(EVENTS, 0)] == 4 and not progress.caught_up()
    progress.forget()
    assert progress.processed == progress.lags == {} and progress.caught_up()


def _liveness(answer: Status, raw_answer: Status, raw: FakeRawIngest, health: Health | None = None,
              ) -> tuple[Liveness, Progress, FakeProbe, FakeProbe]:
    progress = Progress(WorkerMetrics())
    probe, raw_probe = FakeProbe(answer), FakeProbe(raw_answer)
    liveness = Liveness(probe, raw_probe, raw, progress, health or Health(), WorkerMetrics(),  # type: ignore[arg-type]
                        ready_max_lag=100)
    return liveness, progress, probe, raw_probe


def test_the_raw_side_is_asked_only_once_the_correlate_side_is_live_and_caught_up() -> None:
    raw = FakeRawIngest(RawIngestStatus(processed={(RAW, 0): 3}, assigned=frozenset({(RAW, 0)}),
                                        assignment_known=True))
    consumer = FakeConsumer(assigned={TP(EVENTS, 0)})
    behind = Status(True, False, behind="correlator.events/0")
    liveness, progress, probe, raw_probe = _liveness(behind, Status(True, True), raw)
    progress.processed[(EVENTS, 0)] = 8
    assert liveness.check(consumer) is behind and raw_probe.calls == []
    assert probe.calls == [({(EVENTS, 0)}, {(EVENTS, 0): 8})]
    probe.answer = Status(True, True)
    assert liveness.check(consumer) == Status(True, True) and raw_probe.calls == [({(RAW, 0)}, {(RAW, 0): 3})]
    raw_probe.answer = Status(True, True, behind="logs.flink/0")
    assert liveness.check(consumer) == Status(True, False, None, "logs.flink/0")
    raw.status = RawIngestStatus()
    assert liveness.check(consumer) == Status(True, False, behind="raw ingest not assigned yet")


def test_settle_tells_raw_ingest_and_the_gauge_whether_idleness_counts() -> None:
    raw = FakeRawIngest()
    liveness, progress, _, _ = _liveness(Status(True, True), Status(True, True), raw)
    assert liveness.settle(Status(True, True)) and raw.live and liveness.metrics.live._value.get() == 1
    progress.lags[(EVENTS, 0)] = 3
    assert not liveness.settle(Status(True, True)) and not raw.live and liveness.metrics.live._value.get() == 0
    progress.lags.clear()
    raw.healthy = False
    assert not liveness.settle(Status(True, True))


def test_healthz_reports_readiness_and_why_not() -> None:
    raw = FakeRawIngest(RawIngestStatus(lags={(RAW, 0): 50}, failures=2, last_error="boom"))
    health = Health()
    liveness, progress, _, _ = _liveness(Status(True, True), Status(True, True), raw, health)
    body, ready = liveness.report(3, False)
    assert ready and body == {"ready": True, "assigned_partitions": 3, "max_lag": 50, "rebalancing": False,
                              "raw_ingest": {"running": True, "processes": 2, "restarts": 2, "last_error": "boom"}}
    progress.lags[(EVENTS, 1)] = 101
    assert liveness.report(3, False) == ({**body, "ready": False, "max_lag": 101}, False)
    progress.lags.clear()
    assert not liveness.report(0, False)[1] and not liveness.report(3, True)[1]
    liveness.settle(Status(False, False, behind="cannot reach Kafka"))
    body, ready = liveness.report(3, False)
    assert not ready and body["reason"] == "cannot reach Kafka"
    health.fail("correlate stage failed")
    assert liveness.report(3, False)[0]["reason"] == "correlate stage failed"
