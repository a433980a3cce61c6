"""The worker's cluster state annotates verdicts like offline analyze, across a dump/load and from old snapshots."""

from __future__ import annotations

import zlib
from pathlib import Path

import orjson

from correlator.core.correlate.engine import EngineConfig
from correlator.core.explain.foresight import Foresight
from correlator.core.explain.verdict import Verdict, verdict_to_dict
from correlator.offline.analyze import collect_events, run_engine
from correlator.stream.state import ClusterState, _pack, _unpack

RECURRING = Path(__file__).resolve().parents[1] / "golden" / "scenarios" / "recurring"


def _finish(state: ClusterState) -> list[Verdict]:
    return [state.foresight.annotate(v) for v in state.engine.finish()]


def test_worker_state_gives_the_offline_outlook_across_a_dump() -> None:
    events, _ = collect_events([str(RECURRING)])
    offline = [verdict_to_dict(v) for v in run_engine(events)]
    config = EngineConfig()
    state = ClusterState.load("default", config, None)
    out: list[Verdict] = []
    for offset, event in enumerate(events):
        if offset == len(events) * 2 // 3:
            state = ClusterState.load("default", config, state.dump())
        out += state.feed(offset, event, None)
    out += _finish(state)
    assert [verdict_to_dict(v) for v in out] == offline
    assert out[-1].outlook is not None and out[-1].whatif


def _fed(config: EngineConfig, count: int) -> ClusterState:
    """A fresh cluster state fed the first ``count`` events of the recurring scenario."""
    events, _ = collect_events([str(RECURRING)])
    state = ClusterState.load("default", config, None)
    for offset, event in enumerate(events[:count]):
        state.feed(offset, event, None)
    return state


def test_a_snapshot_from_before_foresight_loads() -> None:
    config = EngineConfig()
    state = _fed(config, 100)
    data = _unpack(state.dump())
    del data["foresight"]
    old = ClusterState.load("default", config, _pack(data))
    assert old.offset == 99 and old.foresight.snapshot() == Foresight().snapshot()
    assert state.foresight.snapshot() != old.foresight.snapshot()  # the first 100 events held the scanner lines


def test_a_zlib_snapshot_of_an_earlier_release_loads_and_new_ones_are_zstd() -> None:
    config = EngineConfig()
    state = _fed(config, 100)
    blob = state.dump()
    assert blob[:4] == b"\x28\xb5\x2f\xfd"  # a zstd frame
    old = ClusterState.load("default", config, zlib.compress(orjson.dumps(_unpack(blob)), 1))
    assert old.dump() == blob
