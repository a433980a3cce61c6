"""Timeline PNGs in the incident's thread: real Redis, the local Slack double's external upload flow."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from correlator.adapters.redis_incidents import RedisIncidentStore
from correlator.adapters.slack import RetryPolicy, SlackPoster
from correlator.adapters.slack_files import FileLedger, TimelineFiles, timeline_filename
from correlator.notify.slack_feed import run_file
from correlator.notify.sink import Outcome
from correlator.notify.slackbot import BotConfig, SlackBot
from tests.support.fake_slack import FakeSlack

pytestmark = pytest.mark.integration

RECURRING = Path(__file__).resolve().parents[1] / "data" / "verdicts" / "recurring.jsonl"
TOKEN = "xoxb-files-test-token"
FAST = BotConfig(backoff_initial_s=0.05, backoff_max_s=0.3, busy_wait_s=0.02)


def verdicts() -> list[dict[str, Any]]:
    return [json.loads(x) for x in RECURRING.read_text(encoding="utf-8").splitlines() if x.startswith("{")]


@pytest.fixture
def make_bot(slack: FakeSlack, redis_url: str, unique: str) -> Iterator[Callable[..., SlackBot]]:
    """Replicas of one deployment (one Redis namespace), each with its own Slack client and file uploader."""
    opened: list[Any] = []

    def make(owner: str = "a", base_url: str | None = None) -> SlackBot:
        store = RedisIncidentStore(redis_url, namespace=f"files-{unique}", timeout_s=0.5)
        ledger = FileLedger(redis_url, namespace=f"files-{unique}", timeout_s=0.5)
        opened.extend([store, ledger])
        poster = SlackPoster(slack.url, TOKEN, "#incidents", RetryPolicy(backoff_factor_s=0.05))
        files = TimelineFiles(ledger, poster, owner=owner, zone="Asia/Shanghai", report_base_url=base_url)
        return SlackBot(store, poster, FAST, owner=owner, timelines=files)

    yield make
    for thing in opened:
        thing.close()


def assert_one_png_per_verdict(slack: FakeSlack, expected: list[dict[str, Any]]) -> None:
    (parent,) = slack.parents()
    shared = slack.files_in(parent.ts)
    assert sorted(f.filename for f in shared) == sorted(timeline_filename(v["verdict_id"]) for v in expected)
    assert all(f.data.startswith(b"\x89PNG\r\n\x1a\n") and len(f.data) > 10_000 for f in shared)
    assert all(f.channel == parent.channel for f in shared)
    assert sorted(slack.posted_verdict_ids()) == sorted(v["verdict_id"] for v in expected)  # messages unchanged


def test_one_png_per_verdict_in_the_thread(slack: FakeSlack, make_bot: Callable[..., SlackBot]) -> None:
    """Six verdicts of one incident: six timelines in its thread, each through the three-step external upload."""
    stats = run_file(make_bot(base_url="https://correlator.example.com/"), RECURRING)
    assert (stats.posted, stats.timelines) == (6, 6)
    assert_one_png_per_verdict(slack, verdicts())
    assert len(slack.calls("files.getUploadURLExternal")) == len(slack.calls("files.completeUploadExternal")) == 6
    first = verdicts()[0]
    [shared] = [f for f in slack.shared if f.filename == timeline_filename(first["verdict_id"])]
    assert shared.title.startswith(f"Timeline of checkpoint {first['checkpoint_id']} ")
    assert f"<https://correlator.example.com/verdicts/{first['verdict_id']}|open the report page>" in (
        shared.initial_comment or "")


def test_replay_uploads_nothing(slack: FakeSlack, make_bot: Callable[..., SlackBot]) -> None:
    run_file(make_bot(), RECURRING)
    before = len(slack.requests)
    stats = run_file(make_bot(owner="b"), RECURRING)
    assert (stats.posted, stats.duplicates, stats.timelines) == (0, 6, 0)
    assert len(slack.requests) == before
    assert_one_png_per_verdict(slack, verdicts())


def test_429_and_a_failed_upload_double_nothing(slack: FakeSlack, make_bot: Callable[..., SlackBot]) -> None:
    """Rate limits on both API steps are waited out, an upload that failed is redone with a new URL: still exactly
    one PNG per verdict."""
    slack.fail_next("files.getUploadURLExternal", 429, retry_after=1)
    slack.fail_next("files.completeUploadExternal", 429, retry_after=1)
    slack.fail_next("upload", 500)
    stats = run_file(make_bot(), RECURRING)
    assert (stats.posted, stats.timelines) == (6, 6) and stats.retries >= 1
    assert_one_png_per_verdict(slack, verdicts())
    statuses = [(r.method, r.status) for r in slack.requests]
    assert ("files.completeUploadExternal", 429) in statuses and ("upload", 500) in statuses


class Crash(BaseException):
    """The bot dying right after Slack shared the file, before Redis recorded it."""


def test_a_file_shared_before_a_crash_is_found_not_uploaded_again(
    slack: FakeSlack, make_bot: Callable[..., SlackBot]
) -> None:
    first = verdicts()[0]
    dying = make_bot(owner="a")
    assert dying.timelines is not None

    def die(*_args: Any) -> None:
        raise Crash

    dying.timelines.ledger.done = die  # type: ignore[method-assign]
    with pytest.raises(Crash):
        dying.deliver(first, threading.Event())
    assert len(slack.shared) == 1
    survivor = make_bot(owner="b")
    assert survivor.deliver(first, threading.Event()) is Outcome.DUPLICATE
    assert len(slack.shared) == 1 and survivor.stats.timelines == 1
    assert [r.method for r in slack.requests][-1] == "conversations.replies"
    assert survivor.deliver(first, threading.Event()) is Outcome.DUPLICATE
    assert len(slack.shared) == 1


def test_a_dead_replicas_upload_lease_is_waited_out(slack: FakeSlack, make_bot: Callable[..., SlackBot]) -> None:
    """An upload lease left by a replica killed mid-upload delays the file until it expires; then it is shared once."""
    first = verdicts()[0]
    bot = make_bot(owner="b")
    assert bot.timelines is not None
    assert bot.timelines.ledger.lease(first["verdict_id"], "dead-replica", 400)
    assert bot.deliver(first, threading.Event()) is Outcome.POSTED
    assert len(slack.shared) == 1 and bot.stats.timelines == 1


def test_stopping_before_the_file_is_settled_leaves_the_verdict_to_come_again(
    slack: FakeSlack, make_bot: Callable[..., SlackBot]
) -> None:
    """Posted, but the upload keeps failing when the bot is told to stop: deliver reports not done (the offset stays
    uncommitted), and the redelivered duplicate gets its one PNG."""
    first = verdicts()[0]
    slack.fail_next("upload", 500, times=1000)
    stop = threading.Event()
    threading.Timer(1.0, stop.set).start()
    assert make_bot(owner="a").deliver(first, stop) is None
    assert slack.posted_verdict_ids() == [first["verdict_id"]] and slack.shared == []
    slack.clear_failures()  # Slack is back
    assert make_bot(owner="b").deliver(first, threading.Event()) is Outcome.DUPLICATE
    assert len(slack.shared) == 1 and slack.posted_verdict_ids() == [first["verdict_id"]]
