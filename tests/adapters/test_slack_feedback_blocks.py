"""Feedback buttons in Block Kit: on the verdict's messages when asked for, naming the verdict in a compact value that
reads back; the thread's acknowledgement keeps names as text."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from correlator.adapters.slack_blocks import (
    BUTTON_VALUE_MAX,
    FeedbackButton,
    feedback_ack_text,
    feedback_actions,
    feedback_value,
    parent_message,
    read_feedback_value,
    reply_message,
)
from correlator.core.feedback import FeedbackShapeError, Label, VerdictRef
from correlator.core.incidents import delivery_id, observe, occurrence

DATA = Path(__file__).resolve().parents[1] / "data" / "verdicts"


def verdicts() -> list[dict[str, Any]]:
    lines = (DATA / "recurring.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line and not line.startswith("#")]


def actions_of(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [b for b in blocks if b["type"] == "actions"]


def test_reply_and_parent_carry_buttons_naming_their_verdict() -> None:
    """Three buttons, action ids from the enum, captions as people say them, each value naming the delivery (a
    revision's own id), its code and cluster."""
    first, second = verdicts()[:2]
    second = {**second, "revision": 2, "cluster": "prod-eu"}
    incident = observe(None, occurrence(first), 3_600_000).incident
    for message, verdict in ((parent_message(first, incident, buttons=True), first),
                             (reply_message(second, incident, buttons=True), second)):
        (actions,) = actions_of(message.blocks)
        assert message.blocks[-1] is actions
        buttons = actions["elements"]
        assert [b["action_id"] for b in buttons] == [b.value for b in FeedbackButton]
        assert [b["text"]["text"] for b in buttons] == ["Right cause", "Wrong cause", "Not a problem"]
        assert [FeedbackButton(b["action_id"]).label for b in buttons] == list(Label)
        assert {b["value"] for b in buttons} == {feedback_value(read_feedback_value(buttons[0]["value"]))}
        ref = read_feedback_value(buttons[0]["value"])
        assert ref == VerdictRef(delivery_id(verdict), verdict["root_cause"]["code"], verdict["cluster"])
        assert len(buttons[0]["value"]) < 120
    assert read_feedback_value(actions_of(reply_message(second, incident, True).blocks)[0]["elements"][0]["value"]
                               ).verdict_id == f"{second['verdict_id']}:r2"


def test_no_buttons_unless_asked_for_or_when_the_verdict_cannot_be_named() -> None:
    """Without a listener the messages have no buttons; a reference longer than Slack keeps gets none either."""
    first = verdicts()[0]
    incident = observe(None, occurrence(first), 3_600_000).incident
    assert not actions_of(parent_message(first, incident).blocks)
    assert not actions_of(reply_message(first, incident).blocks)
    assert feedback_actions({**first, "cluster": "c" * 500, "verdict_id": "v" * 500, "root_cause": {
        "code": "X" * 500}}) is not None
    assert feedback_actions({**first, "cluster": "c" * (BUTTON_VALUE_MAX + 1)}) is None
    assert feedback_actions({**first, "root_cause": {}}) is None


@pytest.mark.parametrize("value", [None, 7, "", "garbage{", "[1, 2]", '{"v": "x"}', '{"v": "", "c": "X", "k": "d"}',
                                   '{"v": "a\\nb", "c": "X", "k": "d"}', "x" * (BUTTON_VALUE_MAX + 1)])
def test_values_this_bot_did_not_write_are_refused(value: object) -> None:
    with pytest.raises(FeedbackShapeError):
        read_feedback_value(value)


def test_a_value_survives_any_characters() -> None:
    ref = VerdictRef("v1:r3", "HDFS_SLOW_DISK", 'clu"ster|<!here>,é')
    assert read_feedback_value(feedback_value(ref)) == ref


def test_acknowledgement_keeps_a_name_as_text() -> None:
    """Slack's control characters in a name are escaped; the sentence says what was answered."""
    assert feedback_ack_text("alice", Label.WRONG_CAUSE) == "Feedback recorded: alice says wrong cause."
    assert feedback_ack_text("bob", Label.RIGHT_CAUSE, changed=True) == "Feedback recorded: bob now says right cause."
    text = feedback_ack_text("<!channel> & <@U1>", Label.NOT_A_PROBLEM)
    assert "<" not in text and ">" not in text and "&lt;!channel&gt; &amp; &lt;@U1&gt;" in text
