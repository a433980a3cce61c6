"""Snapshot → restore → continue gives exactly the verdicts of an uninterrupted run."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from correlator.core.correlate.engine import Engine, EngineConfig
from correlator.core.correlate.packing import Packer, pack
from correlator.core.events import JvmPause, SlowIo
from correlator.core.explain.verdict import verdict_to_dict
from correlator.offline.analyze import collect_events
from tests.core.correlate.factory import T0, ev, failure, noise, scanner, seed

GOLDEN = Path(__file__).parents[2] / "golden" / "scenarios"

CONFIG = EngineConfig(evict_every=64)


def warm_engine() -> Engine:
    """An engine past its warm-up with processing time frozen: decisions follow the watermarks alone."""
    engine = Engine(CONFIG)
    engine.advance(0)
    engine.advance(CONFIG.idle_timeout_ms)
    return engine

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
    engine = warm_engine()
    UNBROKEN[name] = [verdict_to_dict(v) for e in stream for v in engine.feed(e)] + [
        verdict_to_dict(v) for v in engine.finish()]


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(sorted(STREAMS)), st.data())
def test_split_snapshot_restore_continue(name: str, data: st.DataObject) -> None:
    """Any split point, through a JSON round trip of the snapshot, yields the same verdicts."""
    stream = STREAMS[name]
    cut = data.draw(st.integers(min_value=0, max_value=len(stream)))
    first = warm_engine()
    out = [verdict_to_dict(v) for e in stream[:cut] for v in first.feed(e)]
    restored = Engine.restore(CONFIG, json.loads(json.dumps(first.snapshot())))
    out += [verdict_to_dict(v) for e in stream[cut:] for v in restored.feed(e)]
    out += [verdict_to_dict(v) for v in restored.finish()]
    assert out == UNBROKEN[name]


@st.composite
def generated(draw: st.DrawFn) -> list:
    """Random incidents (scanner, DataNode GC, slow disk or nothing) on random DataNodes over healthy noise."""
    n = draw(st.integers(min_value=1, max_value=3))
    events = noise(T0 - 120_000, T0 + n * 400_000 + 200_000, step=45_000)
    for k in range(n):
        at = T0 + k * 400_000
        write = draw(st.integers(min_value=11_000, max_value=40_000))
        events += failure(chk=60 + k, at=at, write_ms=write, with_client=draw(st.booleans()))
        host = draw(st.sampled_from(["dn02.example.com", "dn03.example.com", "dn04.example.com"]))
        cause = draw(st.sampled_from(["scanner", "gc", "disk", "none"]))
        if cause == "scanner":
            events += scanner(host, at + write - 200, write - 400)
        elif cause == "gc":
            events.append(ev(JvmPause, at + write - 100, host, "datanode", pause_ms=write - 500, gc=True))
        elif cause == "disk":
            events.append(ev(SlowIo, at + write - 50, host, "datanode", kind="disk_write", duration_ms=write - 900))
    return sorted(events, key=lambda e: (e.ts_ms, e.type, e.host))


@settings(max_examples=30, deadline=None)
@given(generated(), st.data())
def test_generated_streams_survive_any_split(stream: list, data: st.DataObject) -> None:
    """For generated incident streams, snapshot/restore at any point changes no verdict."""
    engine = warm_engine()
    unbroken = [verdict_to_dict(v) for e in stream for v in engine.feed(e)] + [
        verdict_to_dict(v) for v in engine.finish()]
    cut = data.draw(st.integers(min_value=0, max_value=len(stream)))
    first = warm_engine()
    out = [verdict_to_dict(v) for e in stream[:cut] for v in first.feed(e)]
    restored = Engine.restore(CONFIG, json.loads(json.dumps(first.snapshot())))
    out += [verdict_to_dict(v) for e in stream[cut:] for v in restored.feed(e)]
    out += [verdict_to_dict(v) for v in restored.finish()]
    assert out == unbroken
    assert len(unbroken) == len({e.checkpoint_id for e in stream if e.type == "checkpoint_expired"})


def test_snapshot_from_before_the_user_error_fields_still_restores() -> None:
    """Events packed before optional fields were appended (user_exception, user_frame) unpack with defaults."""
    from correlator.core.correlate.packing import pack, unpack
    from correlator.core.events import CheckpointDeclined

    e = CheckpointDeclined(ts_ms=1, cluster="c", host="h", role="jobmanager", checkpoint_id=3, reason="r")
    old = pack(e)[:-2]
    assert unpack(old) == e


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(sorted(STREAMS)), st.lists(st.integers(min_value=0, max_value=400), min_size=1, max_size=8))
def test_snapshots_taken_again_and_again_are_those_packed_afresh(name: str, cuts: list[int]) -> None:
    """The engine packs a held event once while it is held (a worker snapshots after every batch): each snapshot of
    a series equals the one an engine packing every event anew writes, as JSON, at every point of the stream."""
    stream = STREAMS[name]
    engine = warm_engine()
    at = 0
    for cut in sorted(min(c, len(stream)) for c in cuts):
        for e in stream[at:cut]:
            engine.feed(e)
        at = cut
        again = engine.snapshot()
        engine._packer = Packer()  # a fresh packer knows no event: it packs every one anew
        assert json.dumps(again) == json.dumps(engine.snapshot())
        engine.snapshot()  # and the next round's packer knows the events held now


def test_a_packed_form_is_not_reused_for_another_event_of_the_same_id() -> None:
    packer = Packer()
    first = JvmPause(ts_ms=T0, cluster="c", host="h", role="datanode", ref="f:1", pause_ms=9_000, gc=False)
    assert packer.many([first]) == [pack(first)]
    packer.round_done()
    second = JvmPause(ts_ms=T0 + 1, cluster="c", host="h", role="datanode", ref="f:2", pause_ms=7_000, gc=False)
    packer._last[id(second)] = (first, pack(first))  # as if ``first`` were gone and its id reused
    assert packer.many([second]) == [pack(second)]
