"""Foresight beside the engine: restored from a snapshot mid-run, it annotates the same verdicts the same way."""

from __future__ import annotations

import json
from pathlib import Path

from correlator.core.correlate.engine import Engine, EngineConfig
from correlator.core.explain.foresight import Foresight
from correlator.core.explain.verdict import Verdict, verdict_to_dict
from correlator.offline.analyze import collect_events, run_engine

RECURRING = Path(__file__).resolve().parents[2] / "golden" / "scenarios" / "recurring"


def test_snapshot_mid_run_gives_the_same_outlooks_and_figures() -> None:
    events, _ = collect_events([str(RECURRING)])
    whole = [verdict_to_dict(v) for v in run_engine(events)]
    half = len(events) // 2
    engine, foresight = Engine(EngineConfig()), Foresight()
    out: list[Verdict] = []
    for i, event in enumerate(events):
        if i == half:
            config = engine.config
            engine = Engine.restore(config, json.loads(json.dumps(engine.snapshot())))
            foresight = Foresight.restore(json.loads(json.dumps(foresight.snapshot())))
        foresight.observe(event)
        out += [foresight.annotate(v) for v in engine.feed(event)]
    out += [foresight.annotate(v) for v in engine.finish()]
    resumed = [verdict_to_dict(v) for v in sorted(out, key=lambda v: (v.failure.failed_at_ms, v.verdict_id))]
    assert resumed == whole
    assert whole[-1]["outlook"] and len(whole[-1]["whatif"]) == 3


def test_annotating_a_verdict_twice_counts_it_once() -> None:
    """At-least-once delivery may decide a verdict again after a restart: its figures do not double."""
    events, _ = collect_events([str(RECURRING)])
    verdicts = run_engine(events)
    foresight = Foresight()
    for event in events:
        foresight.observe(event)
    for v in verdicts:
        foresight.annotate(v)
    again = foresight.annotate(verdicts[-1])
    assert {w.total for w in again.whatif} == {4}
