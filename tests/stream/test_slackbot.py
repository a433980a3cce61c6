"""The Slack bot end to end: real Redis, real Kafka, and a local server speaking the Slack Web API."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from click.testing import CliRunner
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from correlator.adapters.redis_incidents import RedisIncidentStore
from correlator.adapters.slack import RetryPolicy, SlackPoster
from correlator.adapters.slack_blocks import escape
from correlator.cli import cli
from correlator.config import Settings
from correlator.notify.slack_feed import run_file, run_kafka
from correlator.notify.sink import Outcome
from correlator.notify.slackbot import BotConfig, SlackBot
from tests.support.fake_slack import FakeSlack
from tests.support.services import RedisServer

pytestmark = pytest.mark.integration

DATA = Path(__file__).resolve().parents[1] / "data" / "verdicts"
RECURRING = DATA / "recurring.jsonl"
TOKEN = "xoxb-1234-secret-token-value"
FAST = BotConfig(backoff_initial_s=0.05, backoff_max_s=0.3, busy_wait_s=0.02)


def verdicts(path: Path = RECURRING) -> list[dict[str, Any]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line and not line.startswith("#")]


@pytest.fixture
def make_bot(slack: FakeSlack, redis_url: str, unique: str) -> Iterator[Callable[..., SlackBot]]:
    """Bots sharing one namespace (replicas of one deployment) unless told otherwise."""
    stores: list[RedisIncidentStore] = []

    def make(url: str = redis_url, owner: str | None = None, config: BotConfig = FAST, **kw: Any) -> SlackBot:
        store = RedisIncidentStore(url, namespace=f"bot-{unique}", timeout_s=0.5)
        stores.append(store)
        poster = SlackPoster(slack.url, TOKEN, "#incidents", RetryPolicy(backoff_factor_s=0.05))
        return SlackBot(store, poster, config, owner=owner, **kw)

    yield make
    for store in stores:
        store.close()


def assert_one_thread(slack: FakeSlack, expected: list[dict[str, Any]]) -> None:
    """Exactly one post per verdict: the first as the parent, the rest as replies in its thread."""
    ids = slack.posted_verdict_ids()
    assert sorted(ids) == sorted(v["verdict_id"] for v in expected), ids
    (parent,) = slack.parents()
    assert parent.verdict_id == expected[0]["verdict_id"]
    assert len(slack.replies(parent.ts)) == len(expected) - 1


class TestRecurringIncident:
    def test_one_parent_replies_and_updated_count(self, slack: FakeSlack, make_bot: Callable[..., SlackBot]) -> None:
        """Six verdicts of one job and cause: one parent, five replies, the parent updated to the 6th time."""
        stats = run_file(make_bot(), RECURRING)
        assert (stats.posted, stats.duplicates) == (6, 0)
        assert_one_thread(slack, verdicts())
        (parent,) = slack.parents()
        assert len(parent.updates) == 5
        latest = json.dumps(parent.blocks)
        assert "6th time in 1 h 40 min, about every 19 min" in latest
        assert "2020-01-02T18:58:53.337Z" in latest  # last seen
        assert "chk75" in parent.updates[-1]["metadata"]["event_payload"]["verdict_id"]

    def test_replay_posts_nothing_new(self, slack: FakeSlack, make_bot: Callable[..., SlackBot]) -> None:
        """Running the same verdicts again (any bot of the deployment) only finds duplicates."""
        run_file(make_bot(), RECURRING)
        before = len(slack.requests)
        stats = run_file(make_bot(), RECURRING)
        assert (stats.posted, stats.duplicates) == (0, 6)
        assert len(slack.requests) == before

    def test_injected_operator_arrives_escaped(self, slack: FakeSlack, make_bot: Callable[..., SlackBot]) -> None:
        """What Slack receives carries the operator's control sequences escaped, in blocks and fallback text."""
        run_file(make_bot(), DATA / "injection.jsonl")
        (request,) = slack.calls("chat.postMessage")
        body = json.dumps(request.body)
        assert json.dumps(escape("<!channel> <@U123> <http://evil|x> & co"))[1:-1] in body
        for raw in ("<!channel>", "<@U123>", "<http://evil", "<!here>", "<!everyone>", "<@U999>"):
            assert raw not in json.dumps(request.body["blocks"]) and raw not in request.body["text"]
        assert request.body["parse"] == "none" and request.body["link_names"] is False


    def test_lines_that_are_no_verdicts_are_skipped(
        self, slack: FakeSlack, make_bot: Callable[..., SlackBot], tmp_path: Path
    ) -> None:
        """Broken JSON, a foreign schema and a verdict without a cause are passed over; the good one is posted."""
        first = verdicts()[0]
        path = tmp_path / "mixed.jsonl"
        path.write_text("\n".join([
            "{not json", json.dumps({**first, "schema": "other/v9", "verdict_id": "x1"}),
            json.dumps({**first, "root_cause": {}, "verdict_id": "x2"}), "[1, 2]", json.dumps(first)]) + "\n")
        stats = run_file(make_bot(), path)
        assert (stats.posted, stats.skipped) == (1, 4)
        assert slack.posted_verdict_ids() == [first["verdict_id"]]

    def test_verdicts_with_wrongly_typed_fields_are_skipped(
        self, slack: FakeSlack, make_bot: Callable[..., SlackBot], tmp_path: Path
    ) -> None:
        """Right keys, wrong types (a text checkpoint id, a string failure, a word for confidence, string evidence):
        each is passed over instead of crashing the bot, and the good verdict after them is posted."""
        first = verdicts()[0]
        broken = [
            {**first, "verdict_id": "t1", "checkpoint_id": "abc"},
            {**first, "verdict_id": "t2", "failure": "x"},
            {**first, "verdict_id": "t3", "root_cause": {**first["root_cause"], "confidence": "high"}},
            {**first, "verdict_id": "t4", "evidence": ["x"]},
        ]
        path = tmp_path / "typed.jsonl"
        path.write_text("\n".join(json.dumps(v) for v in [*broken, first]) + "\n")
        stats = run_file(make_bot(), path)
        assert (stats.posted, stats.skipped) == (1, 4)
        assert slack.posted_verdict_ids() == [first["verdict_id"]]


class TestSlackFailures:
    def test_429_is_waited_out_and_500_retried(self, slack: FakeSlack, make_bot: Callable[..., SlackBot]) -> None:
        """A 429 with Retry-After: 1 delays the post by about a second; 500s are retried; nothing lost or doubled."""
        slack.fail_next("chat.postMessage", 429, retry_after=1)
        slack.fail_next("chat.update", 500, times=2)
        started = time.monotonic()
        bot = make_bot()
        stats = run_file(bot, RECURRING)
        elapsed = time.monotonic() - started
        assert elapsed >= 1.0
        assert stats.posted == 6
        assert_one_thread(slack, verdicts())
        statuses = [(r.method, r.status) for r in slack.requests if r.method.startswith("chat.")]
        assert statuses[:2] == [("chat.postMessage", 429), ("chat.postMessage", 200)]
        assert statuses.count(("chat.update", 500)) == 2
        assert len(slack.parents()[0].updates) == 5

    def test_slack_down_longer_than_the_client_retries(
        self, slack: FakeSlack, make_bot: Callable[..., SlackBot]
    ) -> None:
        """When Slack keeps failing past the client's retries, the bot backs off and retries the same verdict."""
        slack.fail_next("chat.postMessage", 500, times=7)  # client retries 4 times per attempt
        stats = run_file(make_bot(), RECURRING)
        assert stats.posted == 6 and stats.retries >= 1
        assert_one_thread(slack, verdicts())


class Crash(BaseException):
    """A replica dying (kill -9) right after Slack accepted its post, before Redis recorded it."""


def crash_after_posting(bot: SlackBot) -> None:
    def die(*_args: Any, **_kwargs: Any) -> None:
        raise Crash

    bot.store.finish = die  # type: ignore[method-assign]


class TestCrashAfterPosting:
    def test_a_replica_that_died_after_posting_is_not_posted_again(
        self, slack: FakeSlack, make_bot: Callable[..., SlackBot]
    ) -> None:
        """The parent and a reply whose outcome never reached Redis are found in Slack, not posted twice; the thread
        of the found parent is the one later replies go to."""
        first, second, third = verdicts()[:3]
        short_lease = BotConfig(backoff_initial_s=0.05, backoff_max_s=0.3, busy_wait_s=0.05, lease_ms=300)
        stop = threading.Event()

        dying = make_bot(owner="a", config=short_lease)
        crash_after_posting(dying)
        with pytest.raises(Crash):
            dying.deliver(first, stop)
        survivor = make_bot(owner="b", config=short_lease)
        assert survivor.deliver(first, stop) is Outcome.POSTED
        assert slack.posted_verdict_ids() == [first["verdict_id"]]

        assert survivor.deliver(second, stop) is Outcome.POSTED
        dying = make_bot(owner="c", config=short_lease)
        crash_after_posting(dying)
        with pytest.raises(Crash):
            dying.deliver(third, stop)
        assert survivor.deliver(third, stop) is Outcome.POSTED
        assert_one_thread(slack, [first, second, third])
        assert survivor.deliver(third, stop) is Outcome.DUPLICATE


class TestReplicas:
    def test_two_replicas_post_each_message_once(self, slack: FakeSlack, make_bot: Callable[..., SlackBot]) -> None:
        """Two bots fed the same verdicts at the same time share the work through Redis: no post is doubled."""
        bots = [make_bot(owner="replica-a"), make_bot(owner="replica-b")]
        threads = [threading.Thread(target=run_file, args=(bot, RECURRING)) for bot in bots]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=30)
        assert_one_thread(slack, verdicts())
        assert sum(b.stats.posted for b in bots) == 6 and sum(b.stats.duplicates for b in bots) == 6


class TestResolution:
    def test_quiet_incident_is_resolved_and_next_failure_opens_anew(
        self, slack: FakeSlack, make_bot: Callable[..., SlackBot]
    ) -> None:
        """After the quiet period (wall clock) the sweep marks the parent resolved; the next failure is a new parent."""
        now = [1_000_000]
        bot = make_bot(config=BotConfig(quiet_ms=30 * 60_000, backoff_initial_s=0.05), clock_ms=lambda: now[0])
        stop = threading.Event()
        for verdict in verdicts()[:2]:
            bot.deliver(verdict, stop)
        assert bot.sweep() == 0
        now[0] += 30 * 60_000
        assert bot.sweep() == 1
        (parent,) = slack.parents()
        assert parent.updates[-1]["blocks"][0]["text"]["text"].startswith("Resolved: ")
        bot.deliver(verdicts()[2], stop)
        assert len(slack.parents()) == 2


def create_topic(bootstrap: str, name: str, partitions: int = 2) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(name, num_partitions=partitions, replication_factor=1)])[name].result(timeout=30)


def produce(bootstrap: str, topic: str, items: list[dict[str, Any]]) -> None:
    producer = Producer({"bootstrap.servers": bootstrap})
    for verdict in items:
        producer.produce(topic, key=f"{verdict['cluster']}:{verdict['job_id']}", value=json.dumps(verdict))
    assert producer.flush(30) == 0


def wait_until(condition: Callable[[], bool], timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


class TestKafka:
    def test_restart_never_reposts(
        self, slack: FakeSlack, make_bot: Callable[..., SlackBot], kafka_bootstrap: str, unique: str
    ) -> None:
        """A second run of the same group starts after the committed offsets; a new group finds only duplicates."""
        topic = f"verdicts.{unique}"
        create_topic(kafka_bootstrap, topic)
        produce(kafka_bootstrap, topic, verdicts())
        consumer = {"bootstrap.servers": kafka_bootstrap, "group.id": f"bot-{unique}"}
        assert run_kafka(make_bot(), consumer, topic, follow=False).posted == 6
        again = run_kafka(make_bot(), consumer, topic, follow=False)
        assert (again.posted, again.duplicates) == (0, 0)
        fresh = run_kafka(make_bot(), {**consumer, "group.id": f"other-{unique}"}, topic, follow=False)
        assert (fresh.posted, fresh.duplicates) == (0, 6)
        assert_one_thread(slack, verdicts())

    def test_redis_stopped_mid_stream(
        self, slack: FakeSlack, make_bot: Callable[..., SlackBot], kafka_bootstrap: str, unique: str
    ) -> None:
        """Redis dies right after Slack accepted a post, and stays down while verdicts arrive: after it returns,
        every verdict is posted once and the committed offsets cover them all."""
        server = RedisServer()
        server.start()
        try:
            enable_persistence(server.url)
            topic = f"verdicts.{unique}"
            create_topic(kafka_bootstrap, topic, partitions=1)
            items = verdicts()
            produce(kafka_bootstrap, topic, items[:3])
            bot = make_bot(url=server.url)
            stop = threading.Event()
            consumer = {"bootstrap.servers": kafka_bootstrap, "group.id": f"bot-{unique}"}
            runner = threading.Thread(target=run_kafka, args=(bot, consumer, topic), kwargs={
                "follow": True, "stop": stop, "poll_s": 0.1})
            crashed = threading.Event()

            def crash_redis_after_third_post(posted: Any) -> None:
                if len(slack.messages) == 3 and not crashed.is_set():
                    crashed.set()
                    server.stop()

            slack.after_post = crash_redis_after_third_post
            runner.start()
            wait_until(crashed.is_set)
            produce(kafka_bootstrap, topic, items[3:])
            wait_until(lambda: bot.stats.retries >= 3)
            assert len(slack.messages) == 3
            server.start()
            wait_until(lambda: len(slack.messages) >= 6 and bot.stats.posted == 6)
            time.sleep(0.3)
            stop.set()
            runner.join(timeout=30)
            assert not runner.is_alive()
            assert_one_thread(slack, items)
            again = run_kafka(make_bot(url=server.url), consumer, topic, follow=False)
            assert (again.posted, again.duplicates) == (0, 0)
        finally:
            slack.after_post = None
            server.stop()


def enable_persistence(url: str) -> None:
    """Production Redis persists; the test server does once a save point is set (SIGTERM then writes a snapshot)."""
    raw = redis.Redis.from_url(url)
    raw.config_set("save", "3600 1")
    raw.close()


class TestCommand:
    def test_cli_file_mode_and_secret_hygiene(
        self, slack: FakeSlack, redis_url: str, unique: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
    ) -> None:
        """``correlator slack --verdicts-file`` posts the incident; the token shows in no log line, output or repr."""
        token_file = tmp_path / "token"
        token_file.write_text(TOKEN + "\n")
        env = {
            "CORRELATOR_SLACK_API_URL": slack.url,
            "CORRELATOR_SLACK_CHANNEL": "#incidents",
            "CORRELATOR_SLACK_TOKEN_FILE": str(token_file),
            "CORRELATOR_REDIS_URL": redis_url,
        }
        caplog.set_level(logging.DEBUG)
        args = ["slack", "--verdicts-file", str(RECURRING), "--slack-namespace", f"cli-{unique}", "--slack-retry-backoff-s", "0.05"]
        slack.fail_next("chat.postMessage", 500)
        result = CliRunner().invoke(cli, args, env=env)
        assert result.exit_code == 0, result.output
        assert "posted 6, duplicates 0" in result.output
        assert_one_thread(slack, verdicts())
        assert all(r.authorization == f"Bearer {TOKEN}" for r in slack.requests if r.method != "upload")
        assert len(slack.shared) == 6  # a timeline per verdict; the upload URLs themselves get no token
        assert "Sending a request" in caplog.text  # slack_sdk debug lines were captured, with the header redacted
        assert TOKEN not in caplog.text and TOKEN not in result.output
        settings = Settings(slack_token=TOKEN, slack_api_url=slack.url)
        poster = SlackPoster(slack.url, TOKEN, "#incidents")
        for shown in (repr(settings), str(settings), repr(poster), repr(SlackBot(None, poster))):  # type: ignore[arg-type]
            assert TOKEN not in shown

    def test_cli_topic_mode_runs_to_the_end(
        self, slack: FakeSlack, redis_url: str, kafka_bootstrap: str, unique: str
    ) -> None:
        """``correlator slack --once`` consumes the verdict topic in its own group and stops at its end."""
        topic = f"verdicts.{unique}"
        create_topic(kafka_bootstrap, topic)
        produce(kafka_bootstrap, topic, verdicts())
        env = {"CORRELATOR_SLACK_API_URL": slack.url, "CORRELATOR_SLACK_CHANNEL": "#incidents",
               "CORRELATOR_SLACK_TOKEN": TOKEN, "CORRELATOR_REDIS_URL": redis_url,
               "CORRELATOR_BOOTSTRAP_SERVERS": kafka_bootstrap, "CORRELATOR_TOPIC_VERDICTS": topic}
        args = ["slack", "--once", "--slack-group", f"g-{unique}", "--slack-namespace", f"cli-{unique}"]
        first = CliRunner().invoke(cli, args, env=env)
        assert first.exit_code == 0 and "posted 6, duplicates 0" in first.output, first.output
        second = CliRunner().invoke(cli, args, env=env)
        assert second.exit_code == 0 and "posted 0, duplicates 0" in second.output, second.output
        assert_one_thread(slack, verdicts())

    def test_cli_refuses_bad_token_with_one_line(self, slack: FakeSlack, redis_url: str, unique: str) -> None:
        """A token Slack rejects stops the bot with exit 1 and a one-line reason, without echoing the token."""
        env = {"CORRELATOR_SLACK_API_URL": slack.url, "CORRELATOR_SLACK_CHANNEL": "#incidents",
               "CORRELATOR_SLACK_TOKEN": "xoxb-wrong-secret", "CORRELATOR_REDIS_URL": redis_url}
        result = CliRunner().invoke(cli, ["slack", "--verdicts-file", str(RECURRING), "--slack-namespace", unique], env=env)
        assert result.exit_code == 1
        assert "invalid_auth" in result.output and "xoxb-wrong-secret" not in result.output

    def test_cli_needs_a_channel(self, redis_url: str) -> None:
        """No channel configured is a usage error (exit 2)."""
        result = CliRunner().invoke(cli, ["slack", "--verdicts-file", str(RECURRING)],
                                    env={"CORRELATOR_SLACK_TOKEN": "x", "CORRELATOR_REDIS_URL": redis_url})
        assert result.exit_code == 2


class TestRedisDataLost:
    def test_redelivered_and_new_verdicts_after_redis_lost_everything(
        self, slack: FakeSlack, make_bot: Callable[..., SlackBot], redis_url: str, unique: str
    ) -> None:
        """Redis forgets every incident (a restart without persistence) while verdicts are redelivered: the channel's
        metadata finds the thread, so no verdict is posted twice and later ones reply in the same thread."""
        every = verdicts()
        bot = make_bot()
        stop = threading.Event()
        for verdict in every[:3]:
            assert bot.deliver(verdict, stop) is Outcome.POSTED
        client = redis.Redis.from_url(redis_url)
        lost = [k for k in client.scan_iter(f"bot-{unique}*")]
        assert lost and client.delete(*lost) == len(lost)
        client.close()
        cold = make_bot()
        for verdict in every:
            assert cold.deliver(verdict, stop) is Outcome.POSTED
        assert_one_thread(slack, every)
        (parent,) = slack.parents()
        assert parent.metadata["event_payload"]["count"] == 6  # the recovered incident kept counting
        for verdict in every:
            assert cold.deliver(verdict, stop) is Outcome.DUPLICATE


class TestRevisions:
    def test_a_revision_is_posted_once_and_says_why(
            self, slack: FakeSlack, make_bot: Callable[..., SlackBot], tmp_path: Path) -> None:
        """A verdict, then its revision (same verdict_id, revision 1, a new cause): the revision is posted once, in
        its cause's thread, marked revised with its reason escaped; replaying both posts nothing new."""
        first = verdicts()[0]
        revised = {**first, "revision": 1,
                   "revision_reason": "3 late evidence line(s) changed the cause <!channel>",
                   "root_cause": {**first["root_cause"], "code": "DATANODE_JVM_PAUSE", "title": "DataNode paused"}}
        path = tmp_path / "revised.jsonl"
        path.write_text("\n".join(json.dumps(v) for v in (first, revised, revised)) + "\n", encoding="utf-8")
        stats = run_file(make_bot(), path)
        assert (stats.posted, stats.duplicates) == (2, 1)
        assert sorted(slack.posted_verdict_ids()) == sorted([first["verdict_id"], f"{first['verdict_id']}:r1"])
        body = json.dumps([r.body for r in slack.calls("chat.postMessage")])
        assert "Revised" in body and "revision 1 of verdict" in body and "<!channel>" not in body
        # the first verdict's message now says it was revised, and to what
        (first_post,) = [m for m in slack.parents() if m.verdict_id == first["verdict_id"]]
        marked = json.dumps(first_post.updates[-1])
        assert "Revised" in marked and "DATANODE_JVM_PAUSE" in marked and "<!channel>" not in marked
        again = run_file(make_bot(), path)
        assert (again.posted, again.duplicates) == (0, 3)
