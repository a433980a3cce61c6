"""Raw ingest's process boundary: what the child's loop does to its metrics lands in the worker's registry."""

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


def test_a_child_that_dies_fails_the_stage_with_its_exit_status() -> None:
    """A crashed raw-ingest process (here: killed) must not leave the worker waiting, not ready, for ever."""
    import os
    import signal
    import time

    from correlator.config import Settings
    from correlator.stream.raw_process import RawIngestProcess

    settings = Settings(bootstrap_servers="127.0.0.1:9")  # nothing listens: the child never gets far
    raw = RawIngestProcess(settings, settings.ingest_config(), WorkerMetrics())
    raw.start()
    try:
        os.kill(raw._process.pid, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while raw.failed is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert raw.failed == f"raw ingest process exited with code {-signal.SIGKILL}"
        assert not raw.healthy
    finally:
        raw.stop(5)
