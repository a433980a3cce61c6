"""/healthz and /metrics of ``correlator slack`` and ``correlator alerts`` (``notify/feed_health.py``): served on
CORRELATOR_METRICS_PORT while the feed runs, ready while the loop polls, counts read from the sink itself."""

from __future__ import annotations

import json
import socket
import threading
import urllib.error
import urllib.request
import uuid
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from correlator.cli import RuntimeFailure
from correlator.cli.feeds import feed_verdicts, serve_health
from correlator.config import Settings
from correlator.demo import free_port
from correlator.notify.feed_health import FeedHealth, HealthServer
from correlator.notify.slack_feed import run_kafka
from correlator.notify.sink import Outcome, Stats


@dataclass
class Config:
    sweep_every_s: float = 3600.0


@dataclass
class Part:
    """An alert target's share: the requests it took, as ``Pager.sent`` counts them."""

    sent: Counter[str] = field(default_factory=Counter)


@dataclass
class Sink:
    """Delivers everything; ``during`` runs inside each delivery (to look at the endpoints while the feed runs)."""

    during: Any = None
    stats: Stats = field(default_factory=Stats)
    config: Config = field(default_factory=Config)
    parts: list[Part] = field(default_factory=lambda: [Part()])
    seen: list[dict[str, Any]] = field(default_factory=list)

    def deliver(self, verdict: Mapping[str, Any], stop: threading.Event) -> Outcome:
        self.stats.count(Outcome.POSTED)
        self.parts[0].sent["webhook trigger"] += 1
        if self.during is not None:
            self.seen.append(self.during())
        return Outcome.POSTED

    def sweep(self) -> int:
        return 0


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def samples(text: str) -> dict[str, float]:
    """Exposition lines ``name{labels} value`` -> value."""
    return {line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
            if line and not line.startswith("#")}


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_metrics_are_the_sinks_own_counts_and_healthz_follows_the_loop() -> None:
    """/metrics shows the sink's Stats by outcome, the retries, the targets' requests, and the loop's heartbeat,
    assignment and catch-up; /healthz is 200 while the loop polled within ``stale_s``, then 503 with a reason."""
    sink = Sink()
    sink.stats.count(Outcome.POSTED)
    sink.stats.count(Outcome.SUPPRESSED)
    sink.stats.retries = 3
    sink.parts[0].sent.update({"webhook trigger": 2, "pagerduty resolve": 1})
    clock = Clock()
    health = FeedHealth("alerts", sink, stale_s=60, monotonic=clock, wall=lambda: 1_700_000_000.0)
    server = HealthServer(health, "127.0.0.1", 0)
    base = "http://%s:%d" % server.address
    try:
        health.polled(assigned=2, caught_up=True)
        status, text = get(f"{base}/metrics")
        assert status == 200
        found = samples(text)
        assert found['correlator_feed_verdicts_total{feed="alerts",outcome="posted"}'] == 1
        assert found['correlator_feed_verdicts_total{feed="alerts",outcome="suppressed"}'] == 1
        assert found['correlator_feed_verdicts_total{feed="alerts",outcome="duplicate"}'] == 0
        assert found['correlator_feed_retries_total{feed="alerts"}'] == 3
        assert found['correlator_feed_requests_total{feed="alerts",kind="trigger",target="webhook"}'] == 2
        assert found['correlator_feed_requests_total{feed="alerts",kind="resolve",target="pagerduty"}'] == 1
        assert found['correlator_feed_heartbeat_timestamp_seconds{feed="alerts"}'] == 1_700_000_000.0
        assert found['correlator_feed_assigned_partitions{feed="alerts"}'] == 2
        assert found['correlator_feed_caught_up{feed="alerts"}'] == 1

        status, text = get(f"{base}/healthz")
        body = json.loads(text)
        assert status == 200 and body["ready"] and body["caught_up"] and body["posted"] == 1 and body["retries"] == 3

        clock.now += 61  # one delivery held the loop for a minute
        status, text = get(f"{base}/healthz")
        body = json.loads(text)
        assert status == 503 and not body["ready"] and "has not polled Kafka for 61 s" in body["reason"]
        health.polled(assigned=2, caught_up=False)
        assert get(f"{base}/healthz")[0] == 200
        assert get(f"{base}/nothing")[0] == 404
    finally:
        server.close()


def test_the_feed_serves_while_it_runs_and_stops_serving_after(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """feed_verdicts starts the server on CORRELATOR_WEB_HOST:CORRELATOR_METRICS_PORT, labelled with its feed, and
    closes it when the feed ends; without the port nothing is served."""
    port = free_port()
    verdicts = tmp_path / "verdicts.jsonl"
    verdicts.write_text('{"verdict_id": "a"}\n{"verdict_id": "b"}\n')
    sink = Sink(during=lambda: (get(f"http://127.0.0.1:{port}/healthz")[0],
                                samples(get(f"http://127.0.0.1:{port}/metrics")[1])))
    settings = Settings(_env_file=None, web_host="127.0.0.1", metrics_port=port)
    stats = feed_verdicts(sink, settings, verdicts, group="g", follow=False, feed="slack")
    assert stats.posted == 2
    (status, first), (_, second) = sink.seen
    assert status == 200
    assert first['correlator_feed_verdicts_total{feed="slack",outcome="posted"}'] == 1
    assert second['correlator_feed_verdicts_total{feed="slack",outcome="posted"}'] == 2
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()

    monkeypatch.delenv("CORRELATOR_METRICS_PORT", raising=False)
    assert serve_health(Sink(), Settings(_env_file=None), "slack") is None


def test_a_taken_port_is_a_clear_failure(tmp_path: Path) -> None:
    """A port already in use stops the command with a message naming the setting, before any verdict is read."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        verdicts = tmp_path / "verdicts.jsonl"
        verdicts.write_text('{"verdict_id": "a"}\n')
        sink = Sink()
        with pytest.raises(RuntimeFailure, match="CORRELATOR_METRICS_PORT"):
            feed_verdicts(sink, Settings(_env_file=None, web_host="127.0.0.1", metrics_port=port), verdicts,
                          group="g", follow=False)
        assert sink.stats.posted == 0


@pytest.mark.parametrize("command", ["slack", "alerts"])
def test_both_commands_take_the_port(command: str) -> None:
    """`correlator slack` and `correlator alerts` have --metrics-port (CORRELATOR_METRICS_PORT) and --web-host."""
    from click.testing import CliRunner

    from correlator.cli import cli

    out = CliRunner().invoke(cli, [command, "--help"], terminal_width=200).output
    assert "--metrics-port" in out and "CORRELATOR_METRICS_PORT" in out and "--web-host" in out


@pytest.mark.integration
def test_the_kafka_loop_reports_each_poll(kafka_bootstrap: str) -> None:
    """run_kafka tells the health object of its polls: partitions held, and caught up once all are at their end."""
    topic = f"feed-health.{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": kafka_bootstrap})
    admin.create_topics([NewTopic(topic, num_partitions=2, replication_factor=1)])[topic].result(timeout=30)
    producer = Producer({"bootstrap.servers": kafka_bootstrap})
    for n in range(3):
        producer.produce(topic, key=str(n), value=json.dumps({"verdict_id": str(n)}))
    assert producer.flush(30) == 0
    sink = Sink()
    polls: list[tuple[int, bool]] = []
    stop = threading.Event()

    class Recorder:
        def polled(self, assigned: int, caught_up: bool) -> None:
            polls.append((assigned, caught_up))
            if caught_up:
                stop.set()

    consumer = {"bootstrap.servers": kafka_bootstrap, "group.id": f"feed-health-{uuid.uuid4().hex[:8]}"}
    timer = threading.Timer(60, stop.set)
    timer.start()
    try:
        assert run_kafka(sink, consumer, topic, follow=True, stop=stop, health=Recorder()).posted == 3
    finally:
        timer.cancel()
    assert polls[0] == (0, False) and polls[-1] == (2, True)
    assert {assigned for assigned, _ in polls} == {0, 2}
