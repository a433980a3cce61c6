"""The engine's evidence store keeps each event's interval beside it: what a decision reads equals ``interval_of``
of the evidence it is given, through arrivals, eviction and a snapshot's restore."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

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
