"""What ``correlator slack`` and ``correlator alerts`` share: read verdicts from a JSONL file or the verdict topic into
a sink until the end (``--once``) or a signal."""

from __future__ import annotations

import signal
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from correlator.cli import RuntimeFailure
from correlator.config import Settings

if TYPE_CHECKING:
    from correlator.notify.feed_health import HealthServer
    from correlator.notify.sink import VerdictSink
    from correlator.notify.sink import Stats


def feed_verdicts(sink: VerdictSink, settings: Settings, verdicts_file: Path | None, *, group: str,
                  follow: bool, risks: bool = False, feed: str = "verdicts") -> Stats:
    """Every verdict into ``sink`` (with ``risks``, the early warnings of the risk topic too); SIGTERM/SIGINT finish
    the record in hand, then stop (handlers restored after). With CORRELATOR_METRICS_PORT, /healthz and /metrics are
    served meanwhile, labelled ``feed``."""
    from correlator.notify.slack_feed import run_file, run_kafka

    web = serve_health(sink, settings, feed)
    stop = threading.Event()
    previous = stop_on_signals(stop)
    try:
        if verdicts_file is not None:
            return run_file(sink, verdicts_file, stop)
        consumer: dict[str, Any] = settings.kafka_client(**{"group.id": group})
        topics = [settings.topic_verdicts, *([settings.topic_risks] if risks else [])]
        return run_kafka(sink, consumer, topics, follow=follow, stop=stop, health=web.health if web else None)
    finally:
        if web is not None:
            web.close()
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def serve_health(sink: VerdictSink, settings: Settings, feed: str) -> HealthServer | None:
    """/healthz and /metrics on CORRELATOR_WEB_HOST:CORRELATOR_METRICS_PORT, or None when no port is set."""
    from correlator.notify.feed_health import FeedHealth, HealthServer

    if settings.metrics_port is None:
        return None
    try:
        return HealthServer(FeedHealth(feed, sink), settings.web_host, settings.metrics_port)
    except OSError as exc:
        raise RuntimeFailure(f"cannot serve /healthz and /metrics on {settings.web_host}:{settings.metrics_port} "
                             f"({exc.strerror or exc}); set CORRELATOR_METRICS_PORT to a free port") from None


def stop_on_signals(stop: threading.Event) -> dict[int, Any]:
    """SIGTERM/SIGINT set ``stop``; returns the handlers to put back."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    return {signum: signal.signal(signum, lambda *_: stop.set()) for signum in (signal.SIGTERM, signal.SIGINT)}
