"""The timeline model: lanes per host and role, the failure and the evidence in event time."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from correlator.core.explain.timeline import OTHER, build_timeline
from correlator.core.explain.verdict import Alternative, EvidenceItem, Verdict
from correlator.offline.analyze import analyze

SEED = Path(__file__).resolve().parents[2] / "golden" / "scenarios" / "seed"


@pytest.fixture(scope="module")
def seed() -> Verdict:
    [verdict] = analyze([str(SEED)])
    return verdict


def test_seed_write_timeout_and_lock_overlap(seed: Verdict) -> None:
    """The 37.8 s write on the TaskManager, the 10 s timeout, and the scanner's lock span on dn02 overlapping it."""
    tl = build_timeline(seed)
    lanes = {lane.index: (lane.host, lane.role) for lane in tl.lanes}
    [write] = [s for s in tl.spans if s.kind == "write"]
    assert lanes[write.lane] == ("tm01.example.com", "taskmanager")
    assert 37_700 <= write.duration_ms <= 37_900
    assert tl.timeout_ms == 10_000 and tl.timeout_at_ms == write.start_ms + 10_000
    [lock] = [s for s in tl.spans if s.kind == "dn_lock_held"]
    assert lanes[lock.lane] == ("dn02.example.com", "datanode")
    assert lock.emphasis == "cause" and lock.duration_ms > 3 * tl.timeout_ms
    overlap = min(lock.end_ms, write.end_ms) - max(lock.start_ms, write.start_ms)
    assert overlap > 0.95 * write.duration_ms
    assert lock.start_ms < tl.timeout_at_ms < lock.end_ms
    assert tl.view_start_ms < write.start_ms and tl.view_end_ms > lock.end_ms


def test_one_lane_per_host_and_role_of_the_evidence(seed: Verdict) -> None:
    tl = build_timeline(seed)
    assert [(lane.host, lane.role) for lane in tl.lanes] == [
        ("jm01.example.com", "jobmanager"), ("tm01.example.com", "taskmanager"), ("dn02.example.com", "datanode"),
        ("nn01.example.com", "namenode")]
    assert {(e.host, e.role) for e in seed.evidence} == {(lane.host, lane.role) for lane in tl.lanes}
    assert all(m.emphasis != "cause" for m in tl.marks if m.kind.startswith("checkpoint_"))


def _with_evidence(v: Verdict, *items: EvidenceItem, alternatives: tuple[Alternative, ...] = ()) -> Verdict:
    return dataclasses.replace(v, evidence=v.evidence + items, alternatives=alternatives or v.alternatives)


def test_new_evidence_types_are_drawn_and_alternatives_marked(seed: Verdict) -> None:
    """An evidence type the timeline has never heard of still becomes a span or a mark; a lower-ranked cause's
    evidence is marked as the alternative's."""
    t = seed.failure.failed_at_ms
    v = _with_evidence(
        seed,
        EvidenceItem("brand_new_thing", t, "dn07.example.com", "datanode", "something new", "x.log:1", t - 4000, t),
        EvidenceItem("other_new_point", t, "dn07.example.com", "datanode", "a point", "x.log:2"),
        EvidenceItem("slow_io", t, "dn03.example.com", "datanode", "slow disk write", "y.log:3", t - 900, t),
        alternatives=(Alternative("HDFS_SLOW_DISK", 0.2),),
    )
    tl = build_timeline(v)
    [new] = [s for s in tl.spans if s.kind == "brand_new_thing"]
    assert (new.duration_ms, tl.lanes[new.lane].host) == (4000, "dn07.example.com")
    assert [m.kind for m in tl.marks if tl.lanes[m.lane].host == "dn07.example.com"] == ["other_new_point"]
    [slow] = [s for s in tl.spans if s.kind == "slow_io"]
    assert slow.emphasis == "alternative"
    assert tl.alternatives == (("HDFS_SLOW_DISK", 0.2),)


def test_many_hosts_fold_into_one_lane_keeping_the_cause(seed: Verdict) -> None:
    t = seed.failure.failed_at_ms
    extra = tuple(EvidenceItem("slow_io", t, f"dn{n:02d}.example.com", "datanode", "slow", f"f:{n}", t - 100, t)
                  for n in range(10, 30))
    tl = build_timeline(_with_evidence(seed, *extra), max_lanes=6)
    assert len(tl.lanes) == 6
    assert ("dn02.example.com", "datanode") in {(lane.host, lane.role) for lane in tl.lanes}
    other = tl.lanes[-1]
    hosts = {e.host for e in seed.evidence + extra}
    assert other.role == OTHER and len(other.folded) == len(hosts) - (6 - 1)
    assert sum(1 for s in tl.spans if s.lane == other.index) == 18


def test_unknown_start_draws_marks_only(seed: Verdict) -> None:
    v = dataclasses.replace(seed, failure=dataclasses.replace(seed.failure, started_at_ms=None))
    tl = build_timeline(v)
    assert not [s for s in tl.spans if s.kind in ("write", "checkpoint")] and tl.timeout_at_ms is None


def test_hosts_without_logs_get_a_lane_saying_so() -> None:
    """INSUFFICIENT_DATA: the pipeline's DataNodes whose logs are missing are drawn as lanes with the reason."""
    [v] = analyze([str(SEED.parent / "insufficient-data")])
    tl = build_timeline(v)
    missing = {lane.host: lane.note for lane in tl.lanes if lane.missing}
    assert set(missing) == set(v.root_cause.hosts)
    assert all(note and note.startswith("logs missing: ") for note in missing.values())


def test_pipeline_hosts_that_showed_nothing_get_a_quiet_lane() -> None:
    """UNEXPLAINED: a DataNode of the write whose log was read and showed nothing is drawn, saying so."""
    [v] = analyze([str(SEED.parent / "unexplained")])
    tl = build_timeline(v)
    assert {lane.host for lane in tl.lanes} >= set(v.root_cause.hosts)
    [quiet] = [lane for lane in tl.lanes if lane.note == "log read: nothing abnormal"]
    assert quiet.host == "dn04.example.com" and not quiet.missing
    assert all(lane.note is None for lane in tl.lanes if lane.host != "dn04.example.com")
    assert all(s.emphasis != "cause" for s in tl.spans) and all(m.emphasis != "cause" for m in tl.marks)


def test_a_huge_verdict_draws_a_bounded_picture_keeping_the_cause(seed: Verdict) -> None:
    t = seed.failure.failed_at_ms
    noise = tuple(EvidenceItem("slow_io", t, "dn03.example.com", "datanode", "x", f"f:{n}", t - n - 1, t)
                  for n in range(5000))
    tl = build_timeline(dataclasses.replace(seed, evidence=noise + seed.evidence))
    assert len(tl.spans) + len(tl.marks) <= 2 + 120
    assert any(s.kind == "dn_lock_held" and s.emphasis == "cause" for s in tl.spans)
