"""Snapshot → restore → continue gives exactly the verdicts of an uninterrupted run."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from correlator.core.engine import Engine, EngineConfig
from correlator.core.verdict import verdict_to_dict
from correlator.offline.analyze import collect_events
from tests.core.engine.factory import T0, failure, noise, scanner, seed

GOLDEN = Path(__file__).parents[2] / "golden" / "scenarios"

CONFIG = EngineConfig(evict_every=64)
STREAMS = {
    "seed": seed(),
    "recurring": sorted(
        noise(T0 - 300_000, T0 + 2_000_000, step=60_000)
        + [e for k in range(2) for e in failure(chk=60 + k, at=T0 + k * 900_000)
           + scanner("dn02.example.com", T0 + k * 900_000 + 37_600, 37_000)],
        key=lambda e: e.ts_ms,
    ),
    "parsed-two-jobs": collect_events([str(GOLDEN / "two-jobs")])[0],
    "parsed-recurring": collect_events([str(GOLDEN / "recurring")])[0],
}
UNBROKEN = {}
for name, stream in STREAMS.items():
    engine = Engine(CONFIG)
    UNBROKEN[name] = [verdict_to_dict(v) for e in stream for v in engine.feed(e)] + [
        verdict_to_dict(v) for v in engine.finish()]


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(sorted(STREAMS)), st.data())
def test_split_snapshot_restore_continue(name: str, data: st.DataObject) -> None:
    """Any split point, through a JSON round trip of the snapshot, yields the same verdicts."""
    stream = STREAMS[name]
    cut = data.draw(st.integers(min_value=0, max_value=len(stream)))
    first = Engine(CONFIG)
    out = [verdict_to_dict(v) for e in stream[:cut] for v in first.feed(e)]
    restored = Engine.restore(CONFIG, json.loads(json.dumps(first.snapshot())))
    out += [verdict_to_dict(v) for e in stream[cut:] for v in restored.feed(e)]
    out += [verdict_to_dict(v) for v in restored.finish()]
    assert out == UNBROKEN[name]
