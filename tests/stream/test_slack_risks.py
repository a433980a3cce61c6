"""Early warnings in Slack: one quiet message per warning, its later states as replies, each delivered once."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from correlator.adapters.redis_incidents import RedisIncidentStore
from correlator.adapters.slack import RetryPolicy, SlackPoster
from correlator.core.explain.risk import risk_to_dict
from correlator.offline.analyze import ordered_events, run_analysis
from correlator.notify.sink import Outcome
from correlator.notify.slackbot import BotConfig, SlackBot
from tests.support.fake_slack import FakeSlack

pytestmark = pytest.mark.integration

GROWTH = Path(__file__).resolve().parents[1] / "data" / "lab" / "3.3.6-1.20.1" / "state-growth"
TOKEN = "xoxb-test-token"
FAST = BotConfig(backoff_initial_s=0.05, backoff_max_s=0.3, busy_wait_s=0.02)


class Crash(RuntimeError):
    pass


def lab_risks() -> list[dict[str, Any]]:
    """The real state-growth run's records: raised, updated (twice), superseded."""
    _, risks = run_analysis(ordered_events([str(GROWTH)], cluster="lab"))
    return [risk_to_dict(r) for r in risks]


@pytest.fixture
def make_bot(slack: FakeSlack, redis_url: str, unique: str) -> Iterator[Callable[..., SlackBot]]:
    stores: list[RedisIncidentStore] = []

    def make(namespace: str = f"risks-{unique}") -> SlackBot:
        store = RedisIncidentStore(redis_url, namespace=namespace, timeout_s=0.5)
        stores.append(store)
        poster = SlackPoster(slack.url, TOKEN, "#incidents", RetryPolicy(backoff_factor_s=0.05))
        return SlackBot(store, poster, FAST)

    yield make
    for store in stores:
        store.close()


def payload(message: Any) -> dict[str, Any]:
    return (message.posted_metadata or {}).get("event_payload") or {}


def test_one_quiet_message_per_warning_and_a_reply_per_later_state(
        slack: FakeSlack, make_bot: Callable[..., SlackBot]) -> None:
    records = lab_risks()
    assert [r["status"] for r in records] == ["raised", "updated", "updated", "superseded"]
    bot, stop = make_bot(), threading.Event()
    assert [bot.deliver(r, stop) for r in records] == [Outcome.POSTED] * 4
    (parent,) = slack.parents()
    assert payload(parent)["status"] == "raised" and payload(parent)["risk_id"] == records[0]["risk_id"]
    assert [payload(m)["status"] for m in slack.replies(parent.ts)] == ["updated", "updated", "superseded"]
    assert "<!" not in parent.text and all(b["type"] != "header" for b in parent.blocks), "a warning pings no one"
    assert slack.messages[parent.ts].metadata["event_payload"]["status"] == "superseded", "the message shows its end"
    assert [bot.deliver(r, stop) for r in records] == [Outcome.DUPLICATE] * 4
    assert len(slack.messages) == 4
    assert bot.stats.posted == 4 and bot.stats.duplicates == 4


def test_a_post_whose_recording_was_lost_is_found_not_posted_again(
        slack: FakeSlack, make_bot: Callable[..., SlackBot]) -> None:
    records = lab_risks()
    stop = threading.Event()
    dying = make_bot()

    def die(*_args: Any, **_kwargs: Any) -> None:
        raise Crash

    dying.store.record_risk = die  # type: ignore[method-assign]
    with pytest.raises(Crash):
        dying.deliver(records[0], stop)
    survivor = make_bot()
    assert [survivor.deliver(r, stop) for r in records] == [Outcome.POSTED] * 4
    (parent,) = slack.parents()
    assert len(slack.replies(parent.ts)) == 3


def test_with_redis_emptied_a_later_state_still_goes_to_the_warnings_thread(
        slack: FakeSlack, make_bot: Callable[..., SlackBot], unique: str) -> None:
    records = lab_risks()
    stop = threading.Event()
    assert make_bot(f"before-{unique}").deliver(records[0], stop) is Outcome.POSTED
    fresh = make_bot(f"after-{unique}")
    assert fresh.deliver(records[0], stop) is Outcome.POSTED, "found in Slack by its delivery, recorded only"
    assert fresh.deliver(records[-1], stop) is Outcome.POSTED
    (parent,) = slack.parents()
    assert [payload(m)["status"] for m in slack.replies(parent.ts)] == ["superseded"]


def test_log_text_in_a_warning_cannot_ping_or_link(slack: FakeSlack, make_bot: Callable[..., SlackBot]) -> None:
    record = dict(lab_risks()[0], job_id="<!channel>", headline="job <!here> see <http://x|click> & more")
    assert make_bot().deliver(record, threading.Event()) is Outcome.POSTED
    (parent,) = slack.parents()
    text = str(parent.blocks) + parent.text
    assert "<!here>" not in text and "<!channel>" not in text and "<http://x|click>" not in text
    assert "&lt;!here&gt;" in text


def test_a_record_that_is_no_risk_is_skipped(slack: FakeSlack, make_bot: Callable[..., SlackBot]) -> None:
    bot = make_bot()
    assert bot.deliver({"schema": "correlator.risk/v1", "risk_id": "x"}, threading.Event()) is Outcome.SKIPPED
    assert not slack.messages


def test_redis_emptied_after_every_state_posts_nothing_twice(
        slack: FakeSlack, make_bot: Callable[..., SlackBot], unique: str) -> None:
    """Every state delivered, then Redis lost it all: the replay finds the warning's message by its risk id and each
    reply in its thread, records them, and posts nothing."""
    records = lab_risks()
    stop = threading.Event()
    first = make_bot(f"first-{unique}")
    assert [first.deliver(r, stop) for r in records] == [Outcome.POSTED] * 4
    before = len(slack.messages)
    again = make_bot(f"again-{unique}")
    assert [again.deliver(r, stop) for r in records] == [Outcome.POSTED] * 4, "recorded, not posted"
    assert len(slack.messages) == before
    assert [again.deliver(r, stop) for r in records] == [Outcome.DUPLICATE] * 4
