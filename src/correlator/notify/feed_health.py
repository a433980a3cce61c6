"""/healthz and /metrics of ``correlator slack`` and ``correlator alerts``.

The worker serves both paths on its Faust web server. These two commands run a plain consumer loop instead
(``slack_feed.run_kafka``), so a small HTTP thread serves the same two paths from a Prometheus registry of their own.

Ready means the loop is working: it polls Kafka every half second, so a loop that has not polled for ``stale_s`` is
held by one verdict it cannot deliver (Slack, Redis or an alert target unavailable, retried with backoff) or hangs.
The counters are read from the sink's own ``stats`` (and, for alert targets, its ``sent`` counts) when scraped, so
/metrics shows the numbers the command prints when it stops.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

OUTCOMES = {"posted": "posted", "duplicate": "duplicates", "skipped": "skipped", "suppressed": "suppressed"}
"""Label value (``Outcome``'s value) -> the field of the sink's ``Stats`` that counts it."""
CONTENT_TYPE = CONTENT_TYPE_LATEST.split(";", 2)[0] + "; version=0.0.4"  # the text format generate_latest writes


@dataclass
class FeedHealth:
    """What the feed loop last did, and the sink whose counts /metrics shows."""

    feed: str
    """The ``feed`` label: ``slack`` or ``alerts``."""
    sink: Any
    stale_s: float = 60.0
    monotonic: Callable[[], float] = time.monotonic
    wall: Callable[[], float] = time.time
    assigned: int = 0
    caught_up: bool = False
    registry: CollectorRegistry = field(init=False)
    _polled: tuple[float, float] = field(init=False)

    def __post_init__(self) -> None:
        self._polled = (self.monotonic(), self.wall())  # started: counts as a poll, so a slow start is not unready
        self.registry = CollectorRegistry()
        self.registry.register(_Collector(self))

    def polled(self, assigned: int, caught_up: bool) -> None:
        """Called by the loop after each poll: how many partitions it holds, whether it has read all to their end."""
        self._polled = (self.monotonic(), self.wall())
        self.assigned = assigned
        self.caught_up = caught_up

    def status(self) -> tuple[bool, dict[str, Any]]:
        since = self.monotonic() - self._polled[0]
        ready = since <= self.stale_s
        stats = self.sink.stats
        body: dict[str, Any] = {
            "ready": ready, "feed": self.feed, "assigned_partitions": self.assigned, "caught_up": self.caught_up,
            "seconds_since_poll": round(since, 1),
            **{label: getattr(stats, name) for label, name in OUTCOMES.items()}, "retries": stats.retries,
        }
        if not ready:
            body["reason"] = (f"the feed has not polled Kafka for {since:.0f} s: a verdict's delivery is being retried "
                              "(the log says why) or the loop hangs")
        return ready, body


class _Collector:
    def __init__(self, health: FeedHealth) -> None:
        self.health = health

    def collect(self) -> Iterator[Metric]:
        health = self.health
        feed = health.feed
        stats = health.sink.stats
        verdicts = CounterMetricFamily(
            "correlator_feed_verdicts", "Records read from the verdict topic (and, by the Slack bot, the risk "
            "topic), by what became of them: posted (delivered), duplicate (delivered before), skipped (not a "
            "verdict, or refused by every target), suppressed (held back by the alert policy)",
            labels=["feed", "outcome"])
        for label, name in OUTCOMES.items():
            verdicts.add_metric([feed, label], getattr(stats, name))
        yield verdicts
        retries = CounterMetricFamily("correlator_feed_retries", "Deliveries retried because Slack, Redis or an alert "
                                      "target was unavailable", labels=["feed"])
        retries.add_metric([feed], stats.retries)
        yield retries
        requests = CounterMetricFamily("correlator_feed_requests", "Requests alert targets took, by target and "
                                       "kind (trigger and resolve: one each per incident)",
                                       labels=["feed", "target", "kind"])
        for part in getattr(health.sink, "parts", [health.sink]):
            for key, n in list(getattr(part, "sent", {}).items()):
                target, _, kind = key.partition(" ")
                requests.add_metric([feed, target, kind], n)
        yield requests
        yield _gauge("correlator_feed_heartbeat_timestamp_seconds", "Unix time the feed last polled Kafka", feed,
                     health._polled[1])
        yield _gauge("correlator_feed_assigned_partitions", "Partitions of the feed's topics this process holds",
                     feed, health.assigned)
        yield _gauge("correlator_feed_caught_up", "1 while every assigned partition is read to its end", feed,
                     1 if health.caught_up else 0)


def _gauge(name: str, documentation: str, feed: str, value: float) -> GaugeMetricFamily:
    family = GaugeMetricFamily(name, documentation, labels=["feed"])
    family.add_metric([feed], value)
    return family


class HealthServer:
    """/healthz (200 ready, 503 not, JSON either way) and /metrics on a daemon thread; ``close`` stops it."""

    def __init__(self, health: FeedHealth, host: str, port: int) -> None:
        self.health = health
        handler = type("Handler", (_Handler,), {"health": health})
        self._server = ThreadingHTTPServer((host, port), handler)  # OSError when the port is taken
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name=f"{health.feed}-health", daemon=True)
        self._thread.start()

    @property
    def address(self) -> tuple[str, int]:
        host, port = self._server.server_address[:2]
        return str(host), int(port)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)


class _Handler(BaseHTTPRequestHandler):
    health: FeedHealth

    def do_GET(self) -> None:  # noqa: N802 (the http.server name)
        path = self.path.split("?", 1)[0]
        if path == "/healthz":
            ready, body = self.health.status()
            self._send(200 if ready else 503, "application/json", json.dumps(body).encode())
        elif path == "/metrics":
            self._send(200, CONTENT_TYPE, generate_latest(self.health.registry))
        else:
            self._send(404, "text/plain", b"/healthz or /metrics\n")

    def _send(self, status: int, content_type: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        """No access log: probes and scrapes every few seconds would drown the service's own lines."""
