"""Where the Slack bot's (and the Alertmanager forwarder's) verdicts come from: a JSONL file, or the verdicts topic
with manual commits (an offset is committed only once its verdict was delivered or known as a duplicate)."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from correlator.adapters.redis_incidents import StoreUnavailable
from correlator.adapters.slack import SlackUnavailable
from correlator.notify.sink import Outcome, Stats, VerdictSink

log = logging.getLogger("correlator.slackbot")


class Heartbeat(Protocol):
    def polled(self, assigned: int, caught_up: bool) -> None: ...


def decode_verdict(raw: bytes | str | None) -> dict[str, Any] | None:
    if raw is None:
        return None
    try:
        value = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return None
    return value if isinstance(value, dict) else None


def read_verdict_lines(path: Path) -> Iterator[dict[str, Any] | None]:
    """JSONL verdicts; blank lines and ``#`` comment lines are not records."""
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            text = line.strip()
            if text and not text.startswith("#"):
                yield decode_verdict(text)


def run_file(bot: VerdictSink, path: Path, stop: threading.Event | None = None) -> Stats:
    stop = stop or threading.Event()
    for verdict in read_verdict_lines(path):
        if verdict is None:
            log.warning("skipping a line of %s that is not a JSON object", path.name)
            bot.stats.count(Outcome.SKIPPED)
            continue
        if bot.deliver(verdict, stop) is None:
            break
    return bot.stats


@dataclass
class _Partitions:
    """The partitions assigned to the feed, and those read to their end (``Message.topic()``/``partition()`` are
    typed optional)."""

    assigned: set[tuple[str, int]] = field(default_factory=set)
    at_end: set[tuple[str | None, int | None]] = field(default_factory=set)

    def on_assign(self, _: Any, partitions: list[Any]) -> None:
        self.assigned.update((p.topic, p.partition) for p in partitions)

    def on_revoke(self, _: Any, partitions: list[Any]) -> None:
        for p in partitions:
            self.assigned.discard((p.topic, p.partition))
            self.at_end.discard((p.topic, p.partition))

    @property
    def caught_up(self) -> bool:
        return bool(self.assigned) and self.at_end >= self.assigned


def run_kafka(
    bot: VerdictSink,
    consumer_config: Mapping[str, Any],
    topic: str | Sequence[str],
    *,
    follow: bool,
    stop: threading.Event | None = None,
    poll_s: float = 0.5,
    idle_exit_s: float = 30.0,
    health: Heartbeat | None = None,
) -> Stats:
    """Consume ``topic`` with manual commits. Without ``follow``, return once every assigned partition is at its end
    (or nothing was assigned for ``idle_exit_s``). Following, the sink's resolution sweep runs only while every
    assigned partition is read to its end. ``health`` hears of every poll (``feed_health``: /healthz, /metrics)."""
    from confluent_kafka import Consumer, KafkaError, KafkaException

    stop = stop or threading.Event()
    consumer = Consumer({"enable.auto.commit": False, "auto.offset.reset": "earliest", "enable.partition.eof": True,
                         "max.poll.interval.ms": 900_000, **consumer_config})
    parts = _Partitions()
    consumer.subscribe([topic] if isinstance(topic, str) else list(topic), on_assign=parts.on_assign,
                       on_revoke=parts.on_revoke)
    started = time.monotonic()
    next_sweep = time.monotonic() + bot.config.sweep_every_s
    try:
        while not stop.is_set():
            if health is not None:  # before the poll: what the previous record left
                health.polled(len(parts.assigned), parts.caught_up)
            message = consumer.poll(poll_s)
            if follow and parts.caught_up and time.monotonic() >= next_sweep:
                # only when caught up: an incident whose next verdicts still wait in the topic is not quiet
                next_sweep = time.monotonic() + bot.config.sweep_every_s
                _sweep_quietly(bot)
            if message is None:
                if not follow and (parts.caught_up or
                                   (not parts.assigned and time.monotonic() - started > idle_exit_s)):
                    break
                continue
            where = (message.topic(), message.partition())
            error = message.error()
            if error is not None:
                if error.code() == KafkaError._PARTITION_EOF:
                    parts.at_end.add(where)
                    if not follow and parts.caught_up:
                        break
                elif error.fatal():
                    raise KafkaException(error)
                else:
                    log.warning("kafka: %s", error)
                continue
            parts.at_end.discard(where)
            if not _deliver_and_commit(bot, consumer, message, stop):
                break
    finally:
        consumer.close()
    return bot.stats


def _deliver_and_commit(bot: VerdictSink, consumer: Any, message: Any, stop: threading.Event) -> bool:
    """One record into the sink, its offset committed once the sink has it; False when ``stop`` came first."""
    from confluent_kafka import KafkaException

    verdict = decode_verdict(message.value())
    if verdict is None:
        log.warning("skipping %s[%d]@%d: not a JSON object", message.topic(), message.partition(), message.offset())
        bot.stats.count(Outcome.SKIPPED)
    elif bot.deliver(verdict, stop) is None:
        return False
    try:
        consumer.commit(message=message, asynchronous=False)
    except KafkaException as exc:
        log.warning("offset commit failed (%s); the verdict may come again and will be a duplicate", exc)
    return True


def _sweep_quietly(bot: VerdictSink) -> None:
    try:
        resolved = bot.sweep()
    except (StoreUnavailable, SlackUnavailable) as exc:
        log.warning("resolution sweep skipped: %s", exc)
        return
    if resolved:
        log.info("resolved %d quiet incident(s)", resolved)
