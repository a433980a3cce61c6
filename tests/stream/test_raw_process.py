"""Raw ingest's process boundary: what the children's loops do to their metrics lands in the worker's registry, and
their statuses add up to the stage's."""

from __future__ import annotations

import pickle

import pytest

from correlator.stream.metrics import WorkerMetrics
from correlator.stream.raw_process import MetricUpdates, apply_updates


def test_metric_updates_cross_the_pipe_into_the_parents_registry() -> None:
    updates = MetricUpdates()
    updates.records_in.labels("logs.hdfs").inc(5)
    updates.records_in.labels("logs.hdfs").inc(2)
    updates.consumer_lag.labels("logs.hdfs", "0").set(9)
    updates.consumer_lag.labels("logs.hdfs", "0").set(3)
    with updates.snapshot_seconds.labels("ingest").time():
        pass
    metrics = WorkerMetrics()
    apply_updates(metrics, pickle.loads(pickle.dumps(updates.drain())))
    sample = metrics.registry.get_sample_value
    assert sample("correlator_records_in_total", {"topic": "logs.hdfs"}) == 7
    assert sample("correlator_consumer_lag", {"topic": "logs.hdfs", "partition": "0"}) == 3, "the last value set wins"
    assert sample("correlator_snapshot_seconds_count", {"stage": "ingest"}) == 1
    assert updates.drain() == {"inc": {}, "set": {}, "observe": []}, "a drain hands each update over once"
    apply_updates(metrics, updates.drain())
    assert sample("correlator_records_in_total", {"topic": "logs.hdfs"}) == 7


def test_a_misspelt_metric_fails_where_it_is_used() -> None:
    """In the child's loop (an error it reports), never later in the parent, where it would vanish."""
    with pytest.raises(AttributeError, match="no_such_metric"):
        MetricUpdates().no_such_metric.inc()


def test_a_child_that_keeps_dying_fails_the_stage_with_its_exit_status() -> None:
    """A killed raw-ingest process is started again in place; one killed more often than the respawn budget must
    not leave the worker waiting, not ready, for ever."""
    import os
    import signal
    import time

    from correlator.config import Settings
    from correlator.stream.raw_process import RESPAWNS, RawIngestProcesses

    settings = Settings(bootstrap_servers="127.0.0.1:9", raw_processes=2)  # nothing listens: the children never get far
    raw = RawIngestProcesses(settings, settings.ingest_config(), WorkerMetrics())
    raw.start()
    try:
        child = raw.children[1]  # one of two is enough
        pids = []
        for _ in range(RESPAWNS + 1):
            deadline = time.monotonic() + 30
            while (child._process is None or not child._process.is_alive() or child._process.pid in pids) \
                    and raw.failed is None and time.monotonic() < deadline:
                time.sleep(0.05)
            assert raw.failed is None, raw.failed  # started again after each death within the budget
            pids.append(child._process.pid)
            os.kill(child._process.pid, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while raw.failed is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(set(pids)) == RESPAWNS + 1
        assert raw.failed == f"raw ingest process exited with code {-signal.SIGKILL}"
        assert not raw.healthy
    finally:
        raw.stop(5)


def test_the_stage_status_is_the_union_of_its_processes() -> None:
    """Children of one worker share the raw group: partitions split between them, the stage is healthy only whole."""
    from correlator.stream.raw_process import RawIngestStatus

    a = RawIngestStatus({("logs.hdfs", 0): 5}, {("logs.hdfs", 0): 99}, frozenset({("logs.hdfs", 0)}), True, 1,
                        None, "KafkaException: gone", True)
    b = RawIngestStatus({("logs.hdfs", 1): 0}, {("logs.hdfs", 1): 7}, frozenset({("logs.hdfs", 1)}), True, 2,
                        None, None, True)
    whole = RawIngestStatus.combined([pickle.loads(pickle.dumps(a)), b])
    assert whole.lags == {("logs.hdfs", 0): 5, ("logs.hdfs", 1): 0}
    assert whole.processed == {("logs.hdfs", 0): 99, ("logs.hdfs", 1): 7}
    assert whole.assigned == {("logs.hdfs", 0), ("logs.hdfs", 1)}
    assert whole.assignment_known and whole.running and whole.failures == 3
    assert whole.last_error == "KafkaException: gone" and whole.failed is None

    waiting = RawIngestStatus.combined([a, RawIngestStatus()])  # one child not assigned, not running yet
    assert not waiting.assignment_known and not waiting.running
    broken = RawIngestStatus.combined([a, RawIngestStatus(failed="raw ingest stage failed: x")])
    assert broken.failed == "raw ingest stage failed: x"
    assert not RawIngestStatus.combined([]).running


def test_a_worker_names_each_raw_process_apart_and_keeps_the_first_name() -> None:
    """Transactional ids must differ between a worker's processes and stay what a single process always used."""
    from correlator.config import Settings
    from correlator.stream.raw_ingest import instance_name

    settings = Settings(web_port=6070)
    names = [instance_name(settings, i) for i in range(3)]
    assert len(set(names)) == 3
    assert names[0].endswith("-6070") and names[1] == names[0] + ".1"


def test_a_batchs_time_is_charged_to_its_steps_in_order() -> None:
    from correlator.bench.stream import correlate_line, step_line
    from correlator.stream.steps import Steps

    steps = Steps()
    steps.lap("consume")
    steps.lap("parse")
    steps.lap("parse")
    assert set(steps.spent) == {"consume", "parse"} and all(v >= 0 for v in steps.spent.values())
    line = step_line({"consume": 1.0, "parse": 2.0, "commit": 1.0}, 400_000, 4_000)
    assert line.startswith("consume 1.00 s (25%), group 0.00 s (0%), parse 2.00 s (50%) = 200,000 records/s, "
                           "2,000 events/s")
    assert correlate_line({"feed": 1.5, "snapshot": 0.5}, 4_000, 8.0) == (
        "feed 1.50 s, publish 0.00 s, snapshot 0.50 s = 2,000 events/s of its own time; 25% of the run's 8.0 s")
