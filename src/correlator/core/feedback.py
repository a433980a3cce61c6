"""Feedback on verdicts: what a person answered about one posted verdict, and per root-cause code how often the
answers confirmed or refuted it.

Pure: the Slack listener builds the records (``correlator.feedback/v1``) and ``correlator accuracy`` reads them back
with the verdicts; both hand plain dicts and records to this module, which does no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from correlator.core.incidents import VerdictShapeError, delivery_id, parse_iso_ms

FEEDBACK_SCHEMA = "correlator.feedback/v1"
REF_FIELD_MAX = 512
"""Longest verdict id, code or cluster a feedback record carries: ids are short digests and names, so anything
longer is no reference this project made."""
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class FeedbackShapeError(ValueError):
    """A feedback record, or a button's reference to a verdict, that cannot be read."""


class Label(StrEnum):
    """A person's answer about one verdict."""

    RIGHT_CAUSE = "right_cause"
    WRONG_CAUSE = "wrong_cause"
    NOT_A_PROBLEM = "not_a_problem"

    @property
    def text(self) -> str:
        """How a person reads it: a button's caption, a column of the accuracy report."""
        return _TEXTS[self]

    @property
    def refutes(self) -> bool:
        """True when the answer says the verdict should not have been posted as it was."""
        return self is not Label.RIGHT_CAUSE


_TEXTS = {Label.RIGHT_CAUSE: "Right cause", Label.WRONG_CAUSE: "Wrong cause", Label.NOT_A_PROBLEM: "Not a problem"}


@dataclass(frozen=True, slots=True)
class VerdictRef:
    """What a feedback button names: the delivery (``<verdict_id>`` or ``<verdict_id>:r<n>``) with its code and
    cluster, so the answer is countable even once the verdict itself has left the topic."""

    verdict_id: str
    code: str
    cluster: str

    def __post_init__(self) -> None:
        for name in ("verdict_id", "code", "cluster"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value or len(value) > REF_FIELD_MAX or _CONTROL.search(value):
                raise FeedbackShapeError(f"unreadable {name}")


def verdict_ref(verdict: Mapping[str, Any]) -> VerdictRef:
    """The reference of a verdict dict (``correlator.verdict/v1``); ``VerdictShapeError`` without id or code."""
    code = (verdict.get("root_cause") or {}).get("code")
    if not code:
        raise VerdictShapeError("verdict has no root_cause.code")
    try:
        return VerdictRef(delivery_id(verdict), str(code), str(verdict.get("cluster") or "default"))
    except FeedbackShapeError as exc:
        raise VerdictShapeError(str(exc)) from None


@dataclass(frozen=True, slots=True)
class Feedback:
    """One recorded answer: who said what about which verdict, when, and on which Slack message."""

    ref: VerdictRef
    label: Label
    user_id: str
    user_name: str | None
    at: str
    """ISO-8601 UTC of the click (Slack's ``action_ts``)."""
    slack_channel: str
    slack_ts: str
    """The message the button was on."""


def feedback_to_dict(feedback: Feedback) -> dict[str, Any]:
    record: dict[str, Any] = {
        "schema": FEEDBACK_SCHEMA,
        "verdict_id": feedback.ref.verdict_id,
        "code": feedback.ref.code,
        "cluster": feedback.ref.cluster,
        "label": feedback.label.value,
        "user_id": feedback.user_id,
        "at": feedback.at,
        "slack_channel": feedback.slack_channel,
        "slack_ts": feedback.slack_ts,
    }
    if feedback.user_name:
        record["user_name"] = feedback.user_name
    return record


def feedback_from_dict(data: Mapping[str, Any]) -> Feedback:
    """Read a record; ``FeedbackShapeError`` for anything that is not ``correlator.feedback/v1`` with every field."""
    if not isinstance(data, Mapping) or data.get("schema") != FEEDBACK_SCHEMA:
        raise FeedbackShapeError("not a correlator.feedback/v1 record")
    try:
        ref = VerdictRef(data["verdict_id"], data["code"], data["cluster"])
        label = Label(data["label"])
        at = str(data["at"])
        parse_iso_ms(at)
        name = data.get("user_name")
        return Feedback(ref, label, str(data["user_id"]), str(name) if name else None, at,
                        str(data.get("slack_channel") or ""), str(data.get("slack_ts") or ""))
    except (KeyError, TypeError, ValueError) as exc:
        raise FeedbackShapeError(f"unreadable feedback record: {exc}") from None


@dataclass(frozen=True, slots=True)
class CodeAccuracy:
    """How the verdicts of one root-cause code fared. Each verdict counts once, under its latest answer."""

    code: str
    verdicts: int
    confirmed: int
    wrong_cause_ids: tuple[str, ...]
    not_a_problem_ids: tuple[str, ...]

    @property
    def wrong_cause(self) -> int:
        return len(self.wrong_cause_ids)

    @property
    def not_a_problem(self) -> int:
        return len(self.not_a_problem_ids)

    @property
    def refuted_ids(self) -> tuple[str, ...]:
        return tuple(sorted((*self.wrong_cause_ids, *self.not_a_problem_ids)))

    @property
    def unanswered(self) -> int:
        return self.verdicts - self.confirmed - self.wrong_cause - self.not_a_problem


def accuracy(claims: Iterable[VerdictRef], answers: Iterable[Feedback]) -> tuple[CodeAccuracy, ...]:
    """Per code: verdicts, confirmed, refuted (wrong cause, not a problem) and unanswered, sorted by code.

    A verdict is a delivery: a revision is a claim of its own, shown in its own message, and answered on its own.
    The latest answer on a verdict decides it, whoever gave it (a second look usually knows more); answers with the
    same time keep their input order. A verdict known only from its feedback (the verdicts' retention passed) still
    counts, under the code the feedback names; a claim's own code wins over the feedback's.
    """
    codes: dict[str, str] = {}
    for claim in claims:
        codes.setdefault(claim.verdict_id, claim.code)
    latest: dict[str, tuple[int, Label]] = {}
    for answer in answers:
        at_ms = parse_iso_ms(answer.at)
        codes.setdefault(answer.ref.verdict_id, answer.ref.code)
        known = latest.get(answer.ref.verdict_id)
        if known is None or at_ms >= known[0]:
            latest[answer.ref.verdict_id] = (at_ms, answer.label)
    by_code: dict[str, list[str]] = {}
    for verdict_id, code in codes.items():
        by_code.setdefault(code, []).append(verdict_id)
    rows = []
    for code in sorted(by_code):
        ids = sorted(by_code[code])
        labels = {verdict_id: latest[verdict_id][1] for verdict_id in ids if verdict_id in latest}
        rows.append(CodeAccuracy(
            code=code,
            verdicts=len(ids),
            confirmed=sum(1 for label in labels.values() if label is Label.RIGHT_CAUSE),
            wrong_cause_ids=tuple(i for i, label in labels.items() if label is Label.WRONG_CAUSE),
            not_a_problem_ids=tuple(i for i, label in labels.items() if label is Label.NOT_A_PROBLEM),
        ))
    return tuple(rows)


def total(rows: Iterable[CodeAccuracy]) -> CodeAccuracy:
    """Every code's verdicts together (code ``total``)."""
    rows = list(rows)
    return CodeAccuracy(
        code="total",
        verdicts=sum(r.verdicts for r in rows),
        confirmed=sum(r.confirmed for r in rows),
        wrong_cause_ids=tuple(i for r in rows for i in r.wrong_cause_ids),
        not_a_problem_ids=tuple(i for r in rows for i in r.not_a_problem_ids),
    )
