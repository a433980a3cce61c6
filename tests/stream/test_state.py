"""What the worker persists per partition and per cluster: exact resumption, redeliveries skipped."""

from __future__ import annotations

from correlator.core.correlate.engine import Engine, EngineConfig
from correlator.core.events import Event
from correlator.core.ingest.ingest import IngestConfig
from correlator.core.ingest.records import ParseError
from correlator.stream.state import ClusterState, RawPartitionState
from correlator.stream.wire import Position, decode_event, encode_event
from tests.core.correlate.factory import seed

TRIGGER = (
    b"2020-01-02 17:18:43,295 INFO  org.apache.flink.runtime.checkpoint.CheckpointCoordinator     - "
    b"Triggering checkpoint 60 @ 1577956723295 for job 1a3bc71ac57f33961637adf340e9c28f."
)
FAILED = (
    b"2020-01-02 17:18:53,337 INFO  org.apache.flink.runtime.executiongraph.ExecutionGraph        - "
    b"Source: analytics -> Map (1/1) (c2e77749126a67db62d38bdb166b5696) switched from RUNNING to FAILED."
)
STACK = [
    b"AsynchronousException{java.lang.Exception: Could not materialize checkpoint 60 for operator Source: analytics "
    b"-> Map (1/1).}",
    b"\tat org.apache.flink.streaming.runtime.tasks.StreamTask$AsyncCheckpointExceptionHandler."
    b"tryHandleCheckpointException(StreamTask.java:1153)",
]
KEY = b"jm01.example.com/flink-flink-standalonesession-0-jm01.example.com.log"


def _feed(state: RawPartitionState, offset: int, value: bytes) -> list[tuple[Event | ParseError, Position]] | None:
    return state.feed(offset, KEY, value, {"host": b"jm01.example.com"}, now_ms=1_000)


class TestRawPartitionState:
    def test_a_restored_partition_skips_what_it_already_applied(self) -> None:
        """After dump/load, records at or before the stored offset produce nothing; later ones continue the record."""
        state = RawPartitionState.load("logs.flink", 3, IngestConfig(), None)
        assert _feed(state, 10, TRIGGER) == []
        assert [type(e).__name__ for e, _ in _feed(state, 11, FAILED) or []
                if e.type != "source_progress"] == ["CheckpointTriggered"]
        resumed = RawPartitionState.load("logs.flink", 3, IngestConfig(), state.dump())
        assert _feed(resumed, 11, FAILED) is None
        for offset, line in enumerate(STACK, start=12):
            assert _feed(resumed, offset, line) == []
        closed = resumed.flush_idle(now_ms=1_000_000)
        failed = [e for e, _ in closed if e.type == "checkpoint_failed"]
        assert failed and failed[0].checkpoint_id == 60 and failed[0].ref == "logs.flink/3@11"

    def test_positions_are_deterministic_and_increasing(self) -> None:
        """Replaying the same records from the same snapshot emits the same positions, in increasing order."""
        first = RawPartitionState.load("logs.flink", 0, IngestConfig(), None)
        blob = first.dump()
        runs = []
        for _ in range(2):
            state = RawPartitionState.load("logs.flink", 0, IngestConfig(), blob)
            positions = []
            for offset, line in enumerate([TRIGGER, FAILED, *STACK, TRIGGER.replace(b"60", b"61")]):
                positions += [p for _, p in _feed(state, offset, line) or []]
            positions += [p for _, p in state.flush_idle(now_ms=10_000_000)]
            runs.append(positions)
        assert runs[0] == runs[1] and runs[0] == sorted(runs[0]) and len(set(runs[0])) == len(runs[0]) >= 3


class TestClusterState:
    def test_redelivered_events_change_nothing(self) -> None:
        """An event whose position was already applied is counted as a duplicate and not fed to the engine."""
        events = seed()
        config = EngineConfig()
        once = ClusterState("default", Engine(config))
        twice = ClusterState.load("default", config, None)
        records = []
        for index, event in enumerate(events):
            records.append((event, Position("logs.hdfs", 0, index, 0)))
            if index % 3 == 0:  # redelivered through the events topic after a crash: same position, new offset
                records.append(records[-1])
        for offset, (event, position) in enumerate(records):
            twice.feed(offset, event, position)
        for offset, event in enumerate(events):
            once.feed(offset, event, Position("logs.hdfs", 0, offset, 0))
        expected = [v.verdict_id for v in once.engine.finish()]
        got = [v.verdict_id for v in twice.engine.finish()]
        assert got == expected and expected
        assert twice.duplicates == len(range(0, len(events), 3))

    def test_dump_and_load_resume_exactly(self) -> None:
        """Splitting the input with a dump/load in the middle gives the verdicts of one uninterrupted run."""
        events = seed()
        config = EngineConfig()
        whole = ClusterState.load("default", config, None)
        for offset, event in enumerate(events):
            whole.feed(offset, event, None)
        half = len(events) // 2
        split = ClusterState.load("default", config, None)
        for offset, event in enumerate(events[:half]):
            split.feed(offset, event, None)
        resumed = ClusterState.load("default", config, split.dump())
        assert resumed.feed(half - 1, events[half - 1], None) == []
        for offset, event in enumerate(events[half:], start=half):
            resumed.feed(offset, event, None)
        assert [v.verdict_id for v in resumed.engine.finish()] == [v.verdict_id for v in whole.engine.finish()]


class TestWire:
    def test_event_and_position_round_trip(self) -> None:
        event = seed()[0]
        decoded, position = decode_event(encode_event(event, Position("logs.hdfs", 2, 41, 3)))
        assert decoded == event and position == Position("logs.hdfs", 2, 41, 3)


def test_a_cluster_state_loaded_from_its_table_warms_up_again() -> None:
    """Loading a snapshot is a restart or a rebalance: the backlog it reads next (a TaskManager's lines last) must not
    be decided on the other sources alone, as an engine still warm from before the snapshot would."""
    from tests.core.correlate.factory import T0

    config = EngineConfig(idle_timeout_ms=10_000)
    events = seed()
    before = [e for e in events if e.ts_ms < T0 - 100_000]
    later = [e for e in events if e.ts_ms >= T0 - 100_000]
    backlog = [e for e in later if e.role != "taskmanager"] + [e for e in later if e.role == "taskmanager"]
    first = ClusterState.load("default", config, None)
    first.advance(0)
    first.advance(10_000)
    assert [v for i, e in enumerate(before) for v in first.feed(i, e, None)] == []

    def decided_during_backlog(state: ClusterState) -> int:
        return len([v for i, e in enumerate(backlog, start=len(before)) for v in state.feed(i, e, None)])

    still_warm = ClusterState("default", Engine.restore(config, first.engine.snapshot()), first.offset)
    assert decided_during_backlog(still_warm) == 1  # the hazard: decided on the JobManager and DataNodes alone
    assert decided_during_backlog(ClusterState.load("default", config, first.dump())) == 0
