"""Feedback buttons end to end: clicks arrive over Socket Mode from the local Slack, are acked, recorded once in Redis
and on the feedback topic (real Kafka), acknowledged in the verdict's thread, and counted by ``correlator accuracy``."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from correlator.adapters.redis_incidents import RedisIncidentStore
from correlator.adapters.slack import RetryPolicy, SlackPoster, SlackSocket
from correlator.cli import cli
from correlator.core.events import iso_ms
from correlator.notify.slack_feedback import FeedbackConfig, FeedbackListener, FeedbackTopic, Handled
from correlator.notify.sink import Outcome
from correlator.notify.slackbot import BotConfig, SlackBot
from tests.support.fake_slack import FakeSlack, Posted

pytestmark = pytest.mark.integration

RECURRING = Path(__file__).resolve().parents[1] / "data" / "verdicts" / "recurring.jsonl"
TOKEN = "xoxb-1234-feedback-bot-token"
ALICE = {"id": "U0ALICE", "username": "alice", "name": "alice"}
MALLORY = {"id": "U0MALLORY", "username": "<!channel> *boss*", "name": "mallory"}
FAST = BotConfig(backoff_initial_s=0.05, backoff_max_s=0.3, busy_wait_s=0.02, feedback_buttons=True)


def verdicts() -> list[dict[str, Any]]:
    lines = RECURRING.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line and not line.startswith("#")]


def create_topic(bootstrap: str, name: str) -> str:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(name, num_partitions=2, replication_factor=1)])[name].result(timeout=30)
    return name


def read_all(bootstrap: str, topic: str) -> list[tuple[bytes, dict[str, Any]]]:
    """Every (key, JSON value) of ``topic`` up to its end now."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "test-read", "enable.auto.commit": False})
    try:
        ends = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)
                for p in consumer.list_topics(topic, timeout=10).topics[topic].partitions}
        consumer.assign([TopicPartition(topic, p, low) for p, (low, high) in ends.items() if high > low])
        wanted, out = sum(high - low for low, high in ends.values()), []
        deadline = time.monotonic() + 20
        while len(out) < wanted and time.monotonic() < deadline:
            message = consumer.poll(0.2)
            if message is not None and message.error() is None:
                out.append((message.key(), json.loads(message.value())))
        return out
    finally:
        consumer.close()


def wait_until(condition: Callable[[], bool], timeout_s: float = 10) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


@dataclass
class Rig:
    slack: FakeSlack
    store: RedisIncidentStore
    listener: FeedbackListener
    topic: str
    parent: Posted
    replies: list[Posted]

    def handled(self, envelopes: int) -> dict[Handled, int]:
        """The listener's outcomes once it handled ``envelopes`` envelopes in all."""
        wait_until(lambda: self.listener.stats.envelopes >= envelopes)
        return dict(self.listener.stats.outcomes)

    def acknowledgements(self) -> list[Posted]:
        return [m for m in self.slack.replies(self.parent.ts) if m.text.startswith("Feedback recorded")]


@pytest.fixture
def rig(slack: FakeSlack, redis_url: str, kafka_bootstrap: str, unique: str) -> Iterator[Rig]:
    """Three verdicts of one incident posted with buttons (a parent showing the third, replies for the second and
    third), and a listener connected over Socket Mode."""
    store = RedisIncidentStore(redis_url, namespace=f"fb-{unique}", timeout_s=0.5)
    poster = SlackPoster(slack.url, TOKEN, "#incidents", RetryPolicy(backoff_factor_s=0.05))
    bot = SlackBot(store, poster, FAST)
    assert [bot.deliver(v, threading.Event()) for v in verdicts()[:3]] == [Outcome.POSTED] * 3
    topic = create_topic(kafka_bootstrap, f"correlator.feedback.{unique}")
    listener = FeedbackListener(store, poster, FeedbackTopic({"bootstrap.servers": kafka_bootstrap}, topic),
                                FeedbackConfig(backoff_initial_s=0.05, attempts=2))
    listener.start(SlackSocket(slack.url, slack.app_token, listener.on_envelope))
    (parent,) = slack.parents()
    try:
        yield Rig(slack, store, listener, topic, parent, slack.replies(parent.ts))
    finally:
        listener.close()
        store.close()


def test_a_click_delivered_twice_is_acked_twice_and_recorded_once(rig: Rig, kafka_bootstrap: str) -> None:
    """Slack delivers one click's envelope twice: both are acked; Redis keeps one answer, the topic gets one record,
    and the thread one acknowledgement, in plain text."""
    reply = rig.replies[0]
    envelope = rig.slack.click(reply, "Wrong cause", ALICE, times=2, action_ts="1714557600.123456")
    rig.slack.socket_mode.wait_acked(envelope, times=2)
    assert rig.handled(2) == {Handled.RECORDED: 1, Handled.REPEATED: 1}
    verdict_id = verdicts()[1]["verdict_id"]
    assert reply.verdict_id == verdict_id
    assert rig.store.feedback_of(verdict_id) == {"U0ALICE": ("wrong_cause", 1714557600123456)}
    ((key, record),) = read_all(kafka_bootstrap, rig.topic)
    assert key == verdict_id.encode()
    assert record == {
        "schema": "correlator.feedback/v1", "verdict_id": verdict_id, "code": "HDFS_DIRECTORY_SCAN",
        "cluster": "default", "label": "wrong_cause", "user_id": "U0ALICE", "user_name": "alice",
        "at": iso_ms(1714557600123), "slack_channel": reply.channel, "slack_ts": reply.ts,
    }
    (ack,) = rig.acknowledgements()
    assert ack.text == "Feedback recorded: alice says wrong cause." and ack.thread_ts == rig.parent.ts
    (request,) = [r for r in rig.slack.calls("chat.postMessage") if r.body.get("text") == ack.text]
    assert request.body["mrkdwn"] is False and not request.body.get("blocks")


def test_latest_different_answer_wins_and_accuracy_reports_it(
    rig: Rig, kafka_bootstrap: str, unique: str
) -> None:
    """The same answer clicked again is no new record; a changed one is; the parent's buttons name the verdict it
    shows; a name carrying Slack markup stays text. ``correlator accuracy`` reads both topics and counts each
    verdict under its latest answer."""
    second, third = rig.replies
    rig.slack.click(second, "Wrong cause", ALICE, action_ts="1714557600.000001")
    rig.handled(1)
    rig.slack.click(second, "Wrong cause", ALICE, action_ts="1714557601.000001")
    rig.handled(2)
    rig.slack.click(rig.parent, "Not a problem", MALLORY, action_ts="1714557602.000001")
    rig.handled(3)
    rig.slack.click(second, "Right cause", ALICE, action_ts="1714557603.000001")
    assert rig.handled(4) == {Handled.RECORDED: 2, Handled.REPEATED: 1, Handled.CHANGED: 1}
    assert [m.text for m in rig.acknowledgements()] == [
        "Feedback recorded: alice says wrong cause.",
        "Feedback recorded: &lt;!channel&gt; *boss* says not a problem.",
        "Feedback recorded: alice now says right cause.",
    ]
    records = [record for _, record in read_all(kafka_bootstrap, rig.topic)]
    assert sorted((r["verdict_id"], r["label"]) for r in records) == sorted([
        (second.verdict_id, "wrong_cause"), (third.verdict_id, "not_a_problem"), (second.verdict_id, "right_cause")])

    verdict_topic = create_topic(kafka_bootstrap, f"correlator.verdicts.{unique}")
    producer = Producer({"bootstrap.servers": kafka_bootstrap})
    for verdict in verdicts():
        producer.produce(verdict_topic, key=verdict["job_id"], value=json.dumps(verdict))
    assert producer.flush(10) == 0
    env = {"CORRELATOR_BOOTSTRAP_SERVERS": kafka_bootstrap, "CORRELATOR_TOPIC_VERDICTS": verdict_topic,
           "CORRELATOR_TOPIC_FEEDBACK": rig.topic}
    result = CliRunner().invoke(cli, ["accuracy", "--format", "json"], env=env)
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.output)["codes"]
    assert row == {"code": "HDFS_DIRECTORY_SCAN", "verdicts": 6, "confirmed": 1, "wrong_cause": 0,
                   "not_a_problem": 1, "unanswered": 4, "refuted_ids": [third.verdict_id]}
    text = CliRunner().invoke(cli, ["accuracy", "--verdicts-file", str(RECURRING)], env=env)
    assert text.exit_code == 0, text.output
    assert f"HDFS_DIRECTORY_SCAN  {third.verdict_id}  (not a problem)" in text.output
    assert [line.split()[1:] for line in text.output.splitlines() if line.startswith("HDFS_")][0] == [
        "6", "1", "0", "1", "4"]


def test_unreadable_and_foreign_clicks_are_acked_and_logged_not_recorded(
    rig: Rig, kafka_bootstrap: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A garbage button value, another app's button and another kind of envelope: each acked, none recorded or
    answered in the thread; the garbage value gets a warning naming it."""
    caplog.set_level(logging.INFO, logger="correlator.slack.feedback")
    reply = rig.replies[0]
    garbage = rig.slack.click(reply, "Right cause", ALICE, value="garbage{")
    rig.slack.socket_mode.wait_acked(garbage)
    other_button = {"envelope_id": "e-other", "type": "interactive", "accepts_response_payload": False,
                    "payload": {"type": "block_actions", "user": ALICE, "actions": [
                        {"action_id": "someone_elses_button", "value": "x", "action_ts": "1714557600.1"}]}}
    event = {"envelope_id": "e-event", "type": "events_api", "accepts_response_payload": False,
             "payload": {"type": "event_callback", "event": {"type": "app_mention"}}}
    for envelope in (other_button, event):
        rig.slack.socket_mode.send(envelope)
        rig.slack.socket_mode.wait_acked(envelope["envelope_id"])
    assert rig.handled(3) == {Handled.UNREADABLE: 1, Handled.IGNORED: 2}
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("feedback click ignored" in w and "'garbage{'" in w for w in warnings), warnings
    assert rig.store.feedback_of(reply.verdict_id or "") == {}
    assert read_all(kafka_bootstrap, rig.topic) == []
    assert rig.acknowledgements() == []


def test_cli_connects_the_buttons_and_never_shows_the_app_token(
    slack: FakeSlack, redis_url: str, kafka_bootstrap: str, unique: str, caplog: pytest.LogCaptureFixture
) -> None:
    """With an app-level token ``correlator slack`` opens Socket Mode with it and posts buttons; it closes every
    thread it started. A refused app token stops the bot with a one-line reason; neither token is ever shown."""
    env = {"CORRELATOR_SLACK_API_URL": slack.url, "CORRELATOR_SLACK_CHANNEL": "#incidents",
           "CORRELATOR_SLACK_TOKEN": TOKEN, "CORRELATOR_REDIS_URL": redis_url,
           "CORRELATOR_BOOTSTRAP_SERVERS": kafka_bootstrap, "CORRELATOR_SLACK_APP_TOKEN": slack.app_token}
    args = ["slack", "--verdicts-file", str(RECURRING), "--slack-namespace", f"cli-{unique}", "--no-slack-timelines"]
    caplog.set_level(logging.DEBUG)
    before = set(threading.enumerate())
    result = CliRunner().invoke(cli, args, env=env)
    assert result.exit_code == 0, result.output
    assert "posted 6, duplicates 0" in result.output
    (opened,) = slack.calls("apps.connections.open")
    assert opened.authorization == f"Bearer {slack.app_token}" and slack.socket_mode.connections == 1
    assert all(any(b["type"] == "actions" for b in m.blocks) for m in slack.messages.values())
    wait_until(lambda: {t.name for t in set(threading.enumerate()) - before} <= {"fake-slack-socket"})
    refused = CliRunner().invoke(cli, args, env={**env, "CORRELATOR_SLACK_APP_TOKEN": "xapp-wrong-secret"})
    assert refused.exit_code == 1
    assert refused.output.strip() == "correlator: slack refused the app token: invalid_auth"
    wait_until(lambda: {t.name for t in set(threading.enumerate()) - before} <= {"fake-slack-socket"})
    for secret in (slack.app_token, "xapp-wrong-secret", TOKEN):
        assert secret not in caplog.text and secret not in result.output + refused.output
