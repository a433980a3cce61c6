"""Per-code accuracy from verdicts and feedback: each verdict counted once, under its latest answer."""

from __future__ import annotations

from typing import Any

import pytest

from correlator.core.feedback import (
    FEEDBACK_SCHEMA,
    Feedback,
    FeedbackShapeError,
    Label,
    VerdictRef,
    accuracy,
    feedback_from_dict,
    feedback_to_dict,
    total,
    verdict_ref,
)
from correlator.core.incidents import VerdictShapeError


def verdict(verdict_id: str, code: str, revision: int = 0) -> dict[str, Any]:
    return {"schema": "correlator.verdict/v1", "verdict_id": verdict_id, "cluster": "prod", "revision": revision,
            "root_cause": {"code": code}}


def answer(verdict_id: str, code: str, label: Label, at: str, user: str = "U1") -> Feedback:
    return Feedback(VerdictRef(verdict_id, code, "prod"), label, user, None, at, "C1", "1.000001")


def test_counts_per_code_with_the_latest_answer_deciding() -> None:
    """Two codes; one verdict answered twice (its latest answer counts), one never; refuted ids listed per kind."""
    claims = [verdict_ref(v) for v in (verdict("a", "DISK"), verdict("b", "DISK"), verdict("c", "DISK"),
                                       verdict("d", "GC"), verdict("e", "GC"))]
    answers = [
        answer("a", "DISK", Label.WRONG_CAUSE, "2024-05-01T10:00:00.000Z"),
        answer("a", "DISK", Label.RIGHT_CAUSE, "2024-05-01T10:05:00.000Z", user="U2"),
        answer("b", "DISK", Label.NOT_A_PROBLEM, "2024-05-01T10:00:00.000Z"),
        answer("d", "GC", Label.WRONG_CAUSE, "2024-05-01T11:00:00.000Z"),
        answer("d", "GC", Label.NOT_A_PROBLEM, "2024-05-01T10:59:00.000Z"),  # older: the wrong cause stands
    ]
    disk, gc = accuracy(claims, answers)
    assert (disk.code, disk.verdicts, disk.confirmed, disk.wrong_cause, disk.not_a_problem, disk.unanswered) == (
        "DISK", 3, 1, 0, 1, 1)
    assert disk.refuted_ids == ("b",) and disk.not_a_problem_ids == ("b",)
    assert (gc.verdicts, gc.confirmed, gc.wrong_cause, gc.unanswered, gc.refuted_ids) == (2, 0, 1, 1, ("d",))
    everything = total((disk, gc))
    assert (everything.verdicts, everything.confirmed, everything.unanswered, everything.refuted_ids) == (
        5, 1, 2, ("b", "d"))


def test_a_revision_is_its_own_verdict_and_duplicates_count_once() -> None:
    """A verdict and its revision are two claims (under their own codes); the same delivery read twice is one."""
    claims = [verdict_ref(v) for v in (verdict("a", "DISK"), verdict("a", "DISK"), verdict("a", "GC", revision=1))]
    assert [c.verdict_id for c in claims] == ["a", "a", "a:r1"]
    disk, gc = accuracy(claims, [answer("a:r1", "GC", Label.RIGHT_CAUSE, "2024-05-01T10:00:00Z")])
    assert (disk.verdicts, disk.unanswered) == (1, 1)
    assert (gc.verdicts, gc.confirmed) == (1, 1)


def test_feedback_on_a_verdict_no_longer_read_counts_under_its_own_code() -> None:
    """A verdict may leave its topic before the answers on it: the answer still counts, under the code it names; a
    verdict that is read keeps its own code."""
    rows = accuracy([verdict_ref(verdict("a", "DISK"))], [
        answer("gone", "GC", Label.WRONG_CAUSE, "2024-05-01T10:00:00Z"),
        answer("a", "OTHER", Label.RIGHT_CAUSE, "2024-05-01T10:00:00Z"),
    ])
    assert [(r.code, r.verdicts, r.confirmed, r.refuted_ids) for r in rows] == [("DISK", 1, 1, ()),
                                                                                ("GC", 1, 0, ("gone",))]


def test_records_round_trip_and_bad_ones_are_refused() -> None:
    """A record reads back as written; a foreign schema, an unknown label or a missing field is refused."""
    record = feedback_to_dict(answer("a:r2", "DISK", Label.NOT_A_PROBLEM, "2024-05-01T10:00:00.123Z"))
    assert record["schema"] == FEEDBACK_SCHEMA and record["label"] == "not_a_problem" and "user_name" not in record
    assert feedback_from_dict(record) == answer("a:r2", "DISK", Label.NOT_A_PROBLEM, "2024-05-01T10:00:00.123Z")
    for broken in ({**record, "schema": "other/v1"}, {**record, "label": "maybe"}, {**record, "at": "yesterday"},
                   {k: v for k, v in record.items() if k != "verdict_id"}, {**record, "code": ["x"]},
                   {**record, "cluster": "a\nb"}):
        with pytest.raises(FeedbackShapeError):
            feedback_from_dict(broken)
    with pytest.raises(VerdictShapeError):
        verdict_ref({"verdict_id": "x", "root_cause": {}})


def test_labels_read_as_people_say_them() -> None:
    assert [label.text for label in Label] == ["Right cause", "Wrong cause", "Not a problem"]
    assert [label.refutes for label in Label] == [False, True, True]
