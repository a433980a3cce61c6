"""Records an exactly-once Kafka sink lost, in Slack: one loud message per loss (a header, the broker's line), posted
once, found again by its metadata when its recording was lost; its log text cannot ping or link."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from correlator.core.explain.transactions import TransactionLoss, loss_to_dict
from correlator.notify.sink import Outcome
from correlator.notify.slackbot import SlackBot
from correlator.offline.analyze import ordered_events, run_analysis
from tests.stream.test_slack_risks import make_bot  # noqa: F401  (the fixture: bots of one namespace, or another)
from tests.support.fake_slack import FakeSlack

pytestmark = pytest.mark.integration

TOKEN = "xoxb-test-token"
"""The token the fake Slack accepts (the ``slack`` fixture reads it from the test's module)."""
LOSS_RUN = Path(__file__).resolve().parents[1] / "data" / "lab" / "3.3.6-1.20.1" / "kafka-sink-loss"


def lab_losses() -> list[dict[str, Any]]:
    """The real Kafka-sink run's loss records (the broker aborted five transactions)."""
    losses: list[TransactionLoss] = []
    run_analysis(ordered_events([str(LOSS_RUN)], cluster="lab"), losses=losses)
    return [loss_to_dict(loss) for loss in losses]


def test_one_loud_message_per_loss_each_posted_once(slack: FakeSlack, make_bot: Callable[..., SlackBot]) -> None:
    records = lab_losses()
    assert len(records) == 5 and len({r["loss_id"] for r in records}) == 5
    bot, stop = make_bot(), threading.Event()
    assert [bot.deliver(r, stop) for r in records] == [Outcome.POSTED] * 5
    parents = slack.parents()
    assert len(parents) == 5 and not any(slack.replies(p.ts) for p in parents)
    first = parents[0]
    assert first.blocks[0]["type"] == "header" and "lost" in first.blocks[0]["text"]["text"]
    shown = str(first.blocks)
    assert records[0]["transactional_id"] in shown and "Completed rollback of ongoing transaction" in shown
    assert (first.posted_metadata or {})["event_payload"]["loss_id"] == records[0]["loss_id"]
    assert [bot.deliver(r, stop) for r in records] == [Outcome.DUPLICATE] * 5
    assert len(slack.messages) == 5


def test_a_loss_whose_recording_was_lost_is_found_not_posted_again(
        slack: FakeSlack, make_bot: Callable[..., SlackBot], unique: str) -> None:
    record, stop = lab_losses()[0], threading.Event()
    assert make_bot(f"before-{unique}").deliver(record, stop) is Outcome.POSTED
    assert make_bot(f"after-{unique}").deliver(record, stop) is Outcome.POSTED, "found in Slack, recorded only"
    assert len(slack.messages) == 1


def test_log_text_in_a_loss_cannot_ping_or_link(slack: FakeSlack, make_bot: Callable[..., SlackBot]) -> None:
    record = dict(lab_losses()[0], transactional_id="<!channel>", line="abort ``` <!here> <http://x|click> & more",
                  headline="lost <@U123> records")
    assert make_bot().deliver(record, threading.Event()) is Outcome.POSTED
    (parent,) = slack.parents()
    text = str(parent.blocks) + parent.text
    for raw in ("<!here>", "<!channel>", "<http://x|click>", "<@U123>"):
        assert raw not in text
    assert "&lt;!here&gt;" in text and "``` <" not in text


def test_a_record_that_is_no_loss_is_skipped(slack: FakeSlack, make_bot: Callable[..., SlackBot]) -> None:
    assert make_bot().deliver({"schema": "correlator.loss/v1", "loss_id": "x"}, threading.Event()) is Outcome.SKIPPED
    assert not slack.messages
