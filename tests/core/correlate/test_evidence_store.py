"""The engine's evidence store keeps each event's interval beside it: what a decision reads equals ``interval_of``
of the evidence it is given, through arrivals, eviction and a snapshot's restore."""

from __future__ import annotations

from unittest.mock import patch

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from correlator.core.correlate import evidence_store
from correlator.core.correlate.evidence import interval_of
from correlator.core.correlate.evidence_store import EvidenceStore
from correlator.core.events import DirectoryScanStats, Event, HdfsClientSlow, SlowIo, SourceProgress

_AT = st.integers(0, 100_000)
_CLUSTER = st.sampled_from(["c1", "c2"])
_EVENT = st.one_of(
    st.builds(lambda ts, c, d: SlowIo(ts_ms=ts, cluster=c, host="dn1", role="datanode", kind="disk_write",
                                      duration_ms=d), _AT, _CLUSTER, st.integers(1, 60_000)),
    st.builds(lambda ts, c, d: HdfsClientSlow(ts_ms=ts, cluster=c, host="tm1", role="taskmanager", op="ack",
                                              duration_ms=d), _AT, _CLUSTER, st.integers(1, 60_000)),
    st.builds(lambda ts, c, diffs: DirectoryScanStats(ts_ms=ts, cluster=c, host="dn2", role="datanode",
                                                      block_pool="BP-1", total_blocks=10, missing_meta=diffs,
                                                      missing_block=0, missing_memory=0, mismatched=0),
              _AT, _CLUSTER, st.integers(0, 2)),  # no differences: evidence that measures no interval
    st.builds(lambda ts, c: SourceProgress(ts_ms=ts, cluster=c, host="dn1", role="datanode"), _AT, _CLUSTER),
)


def _measured(events: tuple[Event, ...]) -> tuple[object, ...]:
    return tuple(iv for iv in map(interval_of, events) if iv is not None)


@settings(max_examples=100, deadline=None)
@given(st.lists(_EVENT, max_size=40), _CLUSTER, _AT, _AT)
def test_the_intervals_kept_are_those_of_the_evidence_read(events: list[Event], cluster: str, deadline: int,
                                                           horizon: int) -> None:
    store = EvidenceStore.of(events)
    evidence, measured = store.up_to(cluster, deadline)
    assert evidence == tuple(e for e in events if e.cluster == cluster and e.ts_ms <= deadline)
    assert measured == _measured(evidence)

    dropped = store.keep(lambda e: e.ts_ms >= horizon)
    assert dropped == sum(1 for e in events if e.ts_ms < horizon)
    evidence, measured = store.up_to(cluster, deadline)
    assert evidence == tuple(e for e in events if e.cluster == cluster and horizon <= e.ts_ms <= deadline)
    assert measured == _measured(evidence)
    assert EvidenceStore.of(store.events).intervals == store.intervals


@settings(max_examples=100, deadline=None)
@given(st.lists(_EVENT, max_size=40), _CLUSTER, _AT, _AT, _AT)
def test_a_case_reads_the_evidence_from_its_own_horizon(events: list[Event], cluster: str, deadline: int,
                                                        since: int, links_since: int) -> None:
    """A judged case reads what streaming is sure to hold for it (its own horizon on), whatever older evidence
    other cases kept; link-only kinds from their shorter horizon."""
    store = EvidenceStore.of(events)
    evidence, measured = store.up_to(cluster, deadline, since, (HdfsClientSlow,), links_since)
    assert evidence == tuple(e for e in events if e.cluster == cluster and e.ts_ms <= deadline and e.ts_ms >= (
        links_since if isinstance(e, HdfsClientSlow) else since))
    assert measured == _measured(evidence)


_STEP = st.one_of(
    st.tuples(st.just("add"), _EVENT),
    st.tuples(st.just("keep"), st.tuples(_AT, st.none() | st.integers(0, 5_000))),
    st.tuples(st.just("read"), st.tuples(_CLUSTER, _AT, _AT, _AT)),
)


@pytest.mark.parametrize("mends", [1, 3, evidence_store.FLOOR_MENDS])
@settings(max_examples=200, deadline=None)
@given(steps=st.lists(_STEP, max_size=60))
def test_reads_between_arrivals_and_evictions_find_what_a_walk_of_all_evidence_finds(
        mends: int, steps: list[tuple[str, object]]) -> None:
    """The store finds a read's slice, and an eviction the events it must ask, by binary search over running times
    kept beside the events; out-of-order arrivals and evictions between reads must leave it finding exactly what
    walking every event held finds; so must an arrival that lowers the floors further back than they are mended."""
    with patch.object(evidence_store, "FLOOR_MENDS", mends):
        _replay(steps)


def _replay(steps: list[tuple[str, object]]) -> None:
    store, held = EvidenceStore(), []
    for op, arg in steps:
        if op == "add":
            assert isinstance(arg, Event)
            store.add(arg)
            held.append(arg)
        elif op == "keep":
            horizon, vouched = arg  # type: ignore[misc]
            wanted_from = horizon + vouched if vouched is not None else None  # at or past the horizon: truly wanted
            dropped = store.keep(lambda e, horizon=horizon: e.ts_ms >= horizon, wanted_from)
            assert dropped == sum(1 for e in held if e.ts_ms < horizon)
            held = [e for e in held if e.ts_ms >= horizon]
            assert store.clusters == {e.cluster for e in held}
        else:
            cluster, deadline, since, links_since = arg  # type: ignore[misc]
            evidence, measured = store.up_to(cluster, deadline, since, (HdfsClientSlow,), links_since)
            assert evidence == tuple(e for e in held if e.cluster == cluster and (
                links_since if isinstance(e, HdfsClientSlow) else since) <= e.ts_ms <= deadline)
            assert measured == _measured(evidence)
