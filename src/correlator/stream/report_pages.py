"""The worker's report pages: ``/verdicts`` (recent verdicts) and ``/verdicts/<verdict_id>`` (the same page as
``analyze --report``), so a Slack message can link to a verdict when ``CORRELATOR_REPORT_BASE_URL`` is set.

The pages are fed from the verdict topic itself (every partition, ``read_committed``, no consumer group), not from
what this worker published: any replica behind a load balancer shows every recent verdict. Drawing runs in one worker
thread, off the event loop, and each verdict's picture is drawn once.

Evidence rows do not open onto raw lines here, unlike the offline report's: the worker keeps no log lines (they passed
through the raw topic and its retention), so each row names its source and the page says where the lines are.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from correlator.adapters.report_html import CSP, Links, index_page, page_key, verdict_page
from correlator.config import Settings
from correlator.core.explain.verdict import Verdict, verdict_from_dict

log = logging.getLogger("correlator.report_pages")

RECENT_MAX = 500
DRAWN_MAX = 64
"""Drawn pictures kept (SVG ~100 kB, PNG ~60 kB each); older ones are drawn again when asked for."""
LOOKBACK_MS = 7 * 86_400_000
HEADERS = {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff", "Cache-Control": "no-store",
           "Referrer-Policy": "no-referrer"}
LINKS = Links(page=lambda key: f"/verdicts/{key}", png=lambda key: f"/verdicts/{key}.png", index="/verdicts")


class RecentVerdicts:
    """The newest verdicts by page key (bounded), with their drawn timelines cached."""

    def __init__(self, limit: int = RECENT_MAX) -> None:
        self.limit = limit
        self._verdicts: OrderedDict[str, Verdict] = OrderedDict()
        self._drawn: OrderedDict[tuple[str, str], bytes] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, verdict: Verdict) -> None:
        key = page_key(verdict.verdict_id)
        with self._lock:
            self._verdicts[key] = verdict  # a redelivery replaces, never duplicates
            self._verdicts.move_to_end(key)
            while len(self._verdicts) > self.limit:
                old, _ = self._verdicts.popitem(last=False)
                self._drawn.pop((old, "svg"), None)
                self._drawn.pop((old, "png"), None)

    def get(self, key: str) -> Verdict | None:
        with self._lock:
            return self._verdicts.get(key)

    def newest_first(self) -> list[Verdict]:
        with self._lock:
            return sorted(self._verdicts.values(), key=lambda v: (v.failure.failed_at_ms, v.verdict_id), reverse=True)

    def drawn(self, key: str, fmt: str, draw: Callable[[], bytes]) -> bytes:
        with self._lock:
            cached = self._drawn.get((key, fmt))
            if cached is not None:
                self._drawn.move_to_end((key, fmt))
        if cached is None:
            cached = draw()
            with self._lock:
                if key in self._verdicts:
                    self._drawn[(key, fmt)] = cached
                    while len(self._drawn) > DRAWN_MAX:
                        self._drawn.popitem(last=False)
        return cached


class VerdictFeed(threading.Thread):
    """Reads the verdict topic into :class:`RecentVerdicts` until stopped."""

    def __init__(self, settings: Settings, recent: RecentVerdicts, poll_s: float = 0.5) -> None:
        super().__init__(name="verdict-feed", daemon=True)
        self.settings = settings
        self.recent = recent
        self.poll_s = poll_s
        self.stopping = threading.Event()

    def run(self) -> None:
        from confluent_kafka import Consumer, KafkaException, TopicPartition

        consumer = Consumer(self.settings.kafka_client(**{
            "group.id": f"correlator-pages-{uuid.uuid4().hex[:8]}",  # required by the client; never committed
            "enable.auto.commit": False,
            "isolation.level": "read_committed",
            "auto.offset.reset": "earliest",
            "log_level": 0,
        }))
        topic = self.settings.topic_verdicts
        try:
            while not self.stopping.is_set():
                try:
                    metadata = consumer.list_topics(topic, timeout=5)
                    partitions = sorted(metadata.topics[topic].partitions)
                    since = int(time.time() * 1000) - LOOKBACK_MS
                    starts = consumer.offsets_for_times([TopicPartition(topic, p, since) for p in partitions],
                                                        timeout=10)
                    consumer.assign([TopicPartition(topic, tp.partition, tp.offset if tp.offset >= 0 else -2)
                                     for tp in starts])
                    break
                except (KafkaException, KeyError) as exc:
                    log.warning("report pages: cannot read %s yet (%s)", topic, exc)
                    self.stopping.wait(2.0)
            while not self.stopping.is_set():
                message = consumer.poll(self.poll_s)
                if message is None or message.error() is not None:
                    continue
                self._take(message.value())
        finally:
            consumer.close()

    def _take(self, value: bytes | None) -> None:
        try:
            record = json.loads(value or b"")
            self.recent.add(verdict_from_dict(record))
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            log.warning("report pages: skipping a record that is not a verdict (%s)", type(exc).__name__)

    def stop(self) -> None:
        self.stopping.set()


def register(app: Any, settings: Settings, recent: RecentVerdicts | None = None) -> RecentVerdicts:
    """Add the pages to a Faust app's web server and start the feed with the app (stopped before it shuts down)."""
    from correlator.adapters.timeline_plot import render
    from correlator.core.explain.timeline import build_timeline

    recent = recent or RecentVerdicts()
    feed = VerdictFeed(settings, recent)
    drawing = ThreadPoolExecutor(max_workers=1, thread_name_prefix="timeline")

    async def picture(key: str, verdict: Verdict, fmt: str) -> bytes:
        def draw() -> bytes:
            return render(build_timeline(verdict, zone=settings.tz), fmt)

        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(drawing, recent.drawn, key, fmt, draw)

    @app.task  # type: ignore[untyped-decorator]  # faust's decorators are unannotated
    async def start_feed() -> None:
        feed.start()

    @app.on_before_shutdown.connect  # type: ignore[untyped-decorator]  # faust's decorators are unannotated
    async def stop_feed(*_: Any, **__: Any) -> None:
        feed.stop()
        drawing.shutdown(wait=False)

    @app.page("/verdicts")  # type: ignore[untyped-decorator]  # faust's decorators are unannotated
    async def verdicts_index(web: Any, request: Any) -> Any:
        return web.html(index_page(recent.newest_first(), LINKS, heading="recent verdicts"), headers=dict(HEADERS))

    @app.page("/verdicts/{name}")  # type: ignore[untyped-decorator]  # faust's decorators are unannotated
    async def verdict_view(web: Any, request: Any, name: str) -> Any:
        key, _, ext = name.partition(".")
        verdict = recent.get(key)
        if verdict is None or ext not in ("", "png", "svg"):
            return web.html(index_page([], LINKS, heading="no such recent verdict"), status=404,
                            headers=dict(HEADERS))
        if ext:
            body = await picture(key, verdict, ext)
            return web.bytes(body, content_type="image/png" if ext == "png" else "image/svg+xml",
                             headers=dict(HEADERS))
        svg = await picture(key, verdict, "svg")
        return web.html(verdict_page(verdict, svg, LINKS, zone=settings.tz, raw=None), headers=dict(HEADERS))

    return recent
