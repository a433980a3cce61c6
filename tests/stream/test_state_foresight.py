"""The worker's cluster state annotates verdicts like offline analyze, across a dump/load and from old snapshots."""

from __future__ import annotations

from pathlib import Path

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


def test_a_snapshot_from_before_foresight_loads() -> None:
    events, _ = collect_events([str(RECURRING)])
    config = EngineConfig()
    state = ClusterState.load("default", config, None)
    for offset, event in enumerate(events[:100]):
        state.feed(offset, event, None)
    data = _unpack(state.dump())
    del data["foresight"]
    old = ClusterState.load("default", config, _pack(data))
    assert old.offset == 99 and old.foresight.snapshot() == Foresight().snapshot()
    assert state.foresight.snapshot() != old.foresight.snapshot()  # the first 100 events held the scanner lines
