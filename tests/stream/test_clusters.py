"""The correlate stage's state cache: loaded lazily from its table, snapshotted to the partition of its input."""

from __future__ import annotations

from correlator.core.correlate.engine import EngineConfig
from correlator.stream.clusters import ClusterStates
from correlator.stream.metrics import WorkerMetrics
from correlator.stream.state import ClusterState
from tests.core.correlate.factory import seed
from tests.support.fake_faust import FakeTable


def _states(table: FakeTable, metrics: WorkerMetrics | None = None) -> ClusterStates:
    return ClusterStates(table, EngineConfig(), metrics or WorkerMetrics())


def test_a_state_is_loaded_once_and_persisted_to_its_inputs_partition() -> None:
    table, metrics = FakeTable(), WorkerMetrics()
    states = _states(table, metrics)
    state = states.get("east", 3)
    assert states.get("east", 5) is state and state.partition == 3, "the first partition seen owns the snapshot"
    for offset, event in enumerate(seed()[:20]):
        state.feed(offset, event, None)
    states.persist("east")
    [(partition, key, blob)] = table.changelog
    assert (partition, key) == (3, b"east") and table.data[b"east"] == blob
    assert metrics.state_bytes.labels("engine", "east")._value.get() == len(blob)
    assert metrics.snapshot_seconds.labels("engine")._sum.get() > 0
    resumed = _states(table).get("east", 7)
    assert resumed.offset == state.offset == 19 and resumed.partition == 7, "a reload follows its input"


def test_clear_forgets_the_cache_but_not_the_table() -> None:
    table = FakeTable()
    states = _states(table)
    states.get("east", 0).feed(0, seed()[0], None)
    states.persist("east")
    states.clear()
    assert "east" not in states and len(states) == 0
    assert states.get("east", 1).offset == 0


def test_owned_snapshots_are_loaded_untouched_ones_elsewhere_are_not() -> None:
    table = FakeTable()
    for cluster, partition in (("east", 0), ("west", 1), ("north", 2)):
        state = ClusterState.load(cluster, EngineConfig(), None)
        state.partition = partition
        table.data[cluster.encode()] = state.dump()
    states = _states(table)
    cached = states.get("north", 2)
    states.load_owned({0, 2})
    assert sorted((c, p) for c, p, _ in states.items()) == [("east", 0), ("north", 2)]
    assert states["north"] is cached, "a cached state is never replaced by its older snapshot"
