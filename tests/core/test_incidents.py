"""Incidents: grouping, transitions, recurrence wording and resolution, on verdict dicts of the correlator.verdict/v1 shape."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from correlator.core.incidents import (
    OPEN,
    RESOLVED,
    Action,
    Incident,
    IncidentKey,
    VerdictShapeError,
    humanize_ms,
    incident_from_dict,
    incident_key,
    incident_to_dict,
    observe,
    occurrence,
    ordinal,
    parse_iso_ms,
    recurrence_summary,
    resolve_if_quiet,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "verdicts"
MIN = 60_000
HOUR = 60 * MIN


def recurring() -> list[dict]:
    lines = (DATA / "recurring.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line and not line.startswith("#")]


def fold(verdicts: list[dict], quiet_ms: int = 2 * HOUR) -> tuple[Incident, list[Action]]:
    incident, actions = None, []
    for verdict in verdicts:
        transition = observe(incident, occurrence(verdict), quiet_ms)
        incident, actions = transition.incident, [*actions, transition.action]
    assert incident is not None
    return incident, actions


class TestGrouping:
    def test_key_is_cluster_job_and_cause(self) -> None:
        """Two verdicts of one job with one cause share a key; another cause is another incident."""
        first, second = recurring()[:2]
        assert incident_key(first) == incident_key(second)
        other = {**second, "root_cause": {**second["root_cause"], "code": "HDFS_SLOW_DISK"}}
        assert incident_key(other) != incident_key(first)

    def test_null_job_groups_under_the_cluster(self) -> None:
        """A verdict that names no job still groups (per cluster and cause)."""
        verdict = {**recurring()[0], "job_id": None}
        assert incident_key(verdict) == IncidentKey("default", None, "HDFS_DIRECTORY_SCAN")

    def test_key_id_is_stable_and_safe(self) -> None:
        """The store key part is a hex digest, whatever the cluster name holds."""
        key = IncidentKey("prod:<!channel> eu", "job", "UNEXPLAINED")
        assert key.id == IncidentKey("prod:<!channel> eu", "job", "UNEXPLAINED").id
        assert all(c in "0123456789abcdef" for c in key.id)

    def test_failure_time_is_event_time(self) -> None:
        """The occurrence time comes from failure.failed_at, in epoch ms."""
        assert occurrence(recurring()[0]).at_ms == parse_iso_ms("2020-01-02T17:18:53.337Z") == 1577985533337

    def test_missing_fields_raise_own_error(self) -> None:
        """A dict without an id or a cause is refused with VerdictShapeError, not a KeyError."""
        with pytest.raises(VerdictShapeError):
            occurrence({"root_cause": {"code": "UNEXPLAINED"}})
        with pytest.raises(VerdictShapeError):
            occurrence({"verdict_id": "x", "failure": {"failed_at": "2020-01-02T17:18:53Z"}})
        with pytest.raises(VerdictShapeError):
            occurrence({"verdict_id": "x", "root_cause": {"code": "X"}, "failure": {"failed_at": "yesterday"}})


class TestTransitions:
    def test_recurring_failure_is_one_incident(self) -> None:
        """Six failures 17-24 min apart open once and recur five times."""
        incident, actions = fold(recurring())
        assert actions == [Action.OPEN] + [Action.RECUR] * 5
        assert incident.count == 6 and incident.status == OPEN and incident.epoch == 1
        assert incident.last_seen_ms - incident.first_seen_ms == 100 * MIN
        assert set(incident.hosts) >= {"dn-2.example.com", "dn-3.example.com", "tm-1.example.com"}

    def test_out_of_order_arrival_keeps_first_and_last(self) -> None:
        """A late verdict of an earlier failure widens nothing wrongly: first/last are min/max."""
        ordered, _ = fold(recurring())
        shuffled, _ = fold(list(reversed(recurring())))
        assert (shuffled.first_seen_ms, shuffled.last_seen_ms, shuffled.count) == (
            ordered.first_seen_ms, ordered.last_seen_ms, ordered.count)
        assert shuffled.recent_ms == ordered.recent_ms

    def test_gap_beyond_quiet_period_opens_a_new_epoch(self) -> None:
        """After a quiet period the old incident is closed and the next failure starts a new one."""
        verdicts = recurring()
        incident, _ = fold(verdicts[:3], quiet_ms=30 * MIN)
        late = {**verdicts[3], "failure": {**verdicts[3]["failure"], "failed_at": "2020-01-02T23:00:00.000Z"}}
        transition = observe(incident, occurrence(late), 30 * MIN)
        assert transition.action is Action.OPEN and transition.incident.epoch == 2 and transition.incident.count == 1
        assert transition.closed is not None and transition.closed.status == RESOLVED
        assert transition.closed.resolved_at_ms == incident.last_seen_ms + 30 * MIN

    def test_resolved_incident_reopens_as_new_epoch(self) -> None:
        """A failure after resolution is a new incident (a new parent message), not a reply in the old thread."""
        incident, _ = fold(recurring()[:2])
        done = resolve_if_quiet(incident, incident.last_seen_ms + 2 * HOUR, 2 * HOUR)
        assert done is not None and done.status == RESOLVED
        transition = observe(done, occurrence(recurring()[2]), 2 * HOUR)
        assert transition.action is Action.OPEN and transition.incident.epoch == 2

    def test_not_quiet_yet_is_not_resolved(self) -> None:
        """Resolution waits for the whole quiet period."""
        incident, _ = fold(recurring()[:2])
        assert resolve_if_quiet(incident, incident.last_seen_ms + 2 * HOUR - 1, 2 * HOUR) is None

    def test_round_trip_through_dict(self) -> None:
        """What the store writes reads back equal."""
        incident, _ = fold(recurring())
        assert incident_from_dict(json.loads(json.dumps(incident_to_dict(incident)))) == incident

    @given(st.lists(st.integers(min_value=0, max_value=10 * HOUR), min_size=1, max_size=60))
    def test_bounded_and_consistent(self, offsets: list[int]) -> None:
        """Whatever the arrival order, count is exact, first <= last, recent times are sorted and bounded."""
        base = recurring()[0]
        incident = None
        for i, offset in enumerate(offsets):
            stamp = 1_577_985_533_337 + offset
            occ = occurrence({**base, "verdict_id": f"v{i}",
                              "failure": {**base["failure"], "failed_at": _iso(stamp)}})
            incident = observe(incident, occ, 100 * HOUR).incident
        assert incident is not None
        assert incident.count == len(offsets)
        assert incident.first_seen_ms == 1_577_985_533_337 + min(offsets)
        assert incident.last_seen_ms == 1_577_985_533_337 + max(offsets)
        assert list(incident.recent_ms) == sorted(incident.recent_ms) and len(incident.recent_ms) <= 24


def _iso(ms: int) -> str:
    from correlator.core.events import iso_ms

    return iso_ms(ms)


class TestRecurrenceSummary:
    def test_seed_like_recurrence(self) -> None:
        """Six failures over 100 min with ~20 min gaps read as people would say it."""
        incident, _ = fold(recurring())
        assert recurrence_summary(incident) == "6th time in 1 h 40 min, about every 19 min"

    def test_first_time(self) -> None:
        """A single occurrence says so."""
        incident, _ = fold(recurring()[:1])
        assert recurrence_summary(incident) == "first time"

    @pytest.mark.parametrize(("n", "text"), [(1, "1st"), (2, "2nd"), (3, "3rd"), (4, "4th"), (11, "11th"),
                                             (12, "12th"), (13, "13th"), (21, "21st"), (112, "112th")])
    def test_ordinals(self, n: int, text: str) -> None:
        """English ordinals, teens included."""
        assert ordinal(n) == text

    @pytest.mark.parametrize(("ms", "text"), [(40_000, "40 s"), (20 * MIN, "20 min"), (2 * HOUR, "2 h"),
                                              (163 * MIN, "2 h 40 min"), (11 * HOUR, "11 h"), (3 * 24 * HOUR, "3 d")])
    def test_spans(self, ms: int, text: str) -> None:
        """Spans in the largest sensible unit."""
        assert humanize_ms(ms) == text
