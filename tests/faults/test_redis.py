"""The Slack bot while Redis restarts (with and without its data) or freezes: every verdict posted once, in as many
threads as a clean run opens."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from correlator.adapters.redis_incidents import RedisIncidentStore
from correlator.adapters.slack import RetryPolicy, SlackPoster
from correlator.core.explain.verdict import verdict_to_dict
from correlator.offline.analyze import analyze
from correlator.notify.slack_feed import run_kafka
from correlator.notify.slackbot import BotConfig, SlackBot
from tests.faults.harness import ROWS, Row, in_background, join, scenarios
from tests.support.fake_slack import FakeSlack
from tests.support.services import RedisServer

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TOKEN = "xoxb-fault-suite"
FAST = BotConfig(backoff_initial_s=0.05, backoff_max_s=0.5, busy_wait_s=0.02)
RECURRING = Path(__file__).resolve().parents[1] / "data" / "verdicts" / "recurring.jsonl"


def all_verdicts(tmp_path: Path) -> list[dict[str, Any]]:
    dirs, _, _ = scenarios(tmp_path)
    found = [verdict_to_dict(v) for cluster, path in dirs.items() for v in analyze([str(path)], cluster=cluster)]
    recurring = [json.loads(line) for line in RECURRING.read_text().splitlines() if line and line[0] != "#"]
    return found + recurring


@pytest.fixture
def verdict_topic(kafka_bootstrap: str, tmp_path: Path) -> tuple[str, int]:
    topic = f"fault-verdicts-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": kafka_bootstrap})
    admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(30)
    producer = Producer({"bootstrap.servers": kafka_bootstrap})
    verdicts = all_verdicts(tmp_path)
    for v in verdicts:
        producer.produce(topic, key=f"{v['cluster']}/{v.get('job_id')}".encode(), value=json.dumps(v).encode())
    assert producer.flush(30) == 0
    return topic, len(verdicts)


def deliver(bootstrap: str, topic: str, slack: FakeSlack, redis_url: str, namespace: str) -> None:
    """One pass of a fresh bot process over the whole topic (a new group: everything is redelivered)."""
    store = RedisIncidentStore(redis_url, namespace=namespace, timeout_s=0.5)
    poster = SlackPoster(slack.url, TOKEN, "#incidents", RetryPolicy(backoff_factor_s=0.05))
    try:
        run_kafka(SlackBot(store, poster, FAST), {"bootstrap.servers": bootstrap, "group.id": uuid.uuid4().hex},
                  topic, follow=False, stop=threading.Event())
    finally:
        store.close()


def outcome(slack: FakeSlack) -> tuple[list[str | None], int]:
    return sorted(slack.posted_verdict_ids(), key=str), len(slack.parents())


@pytest.fixture
def clean(kafka_bootstrap: str, verdict_topic: tuple[str, int], redis_url: str) -> tuple[list[str | None], int]:
    fake = FakeSlack(token=TOKEN).start()
    try:
        deliver(kafka_bootstrap, verdict_topic[0], fake, redis_url, f"clean-{uuid.uuid4().hex[:8]}")
        return outcome(fake)
    finally:
        fake.stop()


def record(fault: str, n: int, slack: FakeSlack, recovery: float) -> tuple[list[str | None], int]:
    got = outcome(slack)
    ROWS.append(Row(fault, n, len(set(got[0])), n, len(got[0]) - len(set(got[0])), recovery_s=recovery))
    return got


@pytest.mark.parametrize("appendonly", ["yes", "no"])
def test_redis_restart_under_the_bot(
    appendonly: str, kafka_bootstrap: str, verdict_topic: tuple[str, int], clean: tuple[list[str | None], int],
    slack: FakeSlack,
) -> None:
    server = RedisServer()
    server.extra_env = {"REDIS_APPENDONLY": appendonly}
    server.start()
    try:
        deliver(kafka_bootstrap, verdict_topic[0], slack, server.url, "bot")
        server.stop()
        server.start()
        started = time.monotonic()
        deliver(kafka_bootstrap, verdict_topic[0], slack, server.url, "bot")
        got = record(f"redis restart, {'AOF kept' if appendonly == 'yes' else 'data lost'}", verdict_topic[1], slack,
                     time.monotonic() - started)
    finally:
        server.stop()
    assert got == clean and len(clean[0]) == verdict_topic[1]


def test_redis_paused_under_the_bot(
    kafka_bootstrap: str, verdict_topic: tuple[str, int], clean: tuple[list[str | None], int], slack: FakeSlack
) -> None:
    server = RedisServer()
    server.start()
    pid = int((server.state_dir / "redis.pid").read_text())
    try:
        run = in_background(deliver, kafka_bootstrap, verdict_topic[0], slack, server.url, "bot")
        deadline = time.monotonic() + 60
        while not slack.parents() and time.monotonic() < deadline:
            time.sleep(0.02)
        os.kill(pid, signal.SIGSTOP)
        try:
            time.sleep(4)
        finally:
            os.kill(pid, signal.SIGCONT)
        resumed = time.monotonic()
        join(run, 120)
        got = record("redis SIGSTOP 4 s under the bot", verdict_topic[1], slack, time.monotonic() - resumed)
    finally:
        server.stop()
    assert got == clean
