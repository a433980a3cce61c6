"""Feedback clicks from Slack (Socket Mode) into Redis, the feedback topic and the verdict's thread.

Every envelope is acked first, whatever it holds: Slack delivers an envelope again when no ack comes, and one this bot
cannot use would come back forever. A click is then recorded once per verdict and person: Redis keeps each person's
answer, so the same envelope delivered twice, or the same button clicked twice, is one record; a different answer
given later is a new record (the latest answer wins); an older click arriving late changes nothing. A new answer is
published to the feedback topic (keyed by verdict id), then acknowledged in the verdict's thread. When the topic cannot
take it, Redis forgets it again, so that clicking the button once more can record it.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from enum import StrEnum
from typing import Any, Protocol, TypeVar

from confluent_kafka import KafkaException, Producer

from correlator.adapters.redis_incidents import FeedbackClaim, FeedbackStatus, RedisIncidentStore, StoreUnavailable
from correlator.adapters.slack import Envelope, SlackPoster, SlackRejected, SlackSocket, SlackUnavailable
from correlator.adapters.slack_blocks import FeedbackButton, display_name, feedback_ack_text, read_feedback_value
from correlator.core.events import iso_ms
from correlator.core.feedback import Feedback, FeedbackShapeError, feedback_to_dict

log = logging.getLogger("correlator.slack.feedback")
ACTION_TS = re.compile(r"^\d{1,12}(\.\d{1,9})?$")
SLACK_ID_MAX = 64
T = TypeVar("T")


class Handled(StrEnum):
    RECORDED = "recorded"
    CHANGED = "changed"
    """A person's later, different answer: recorded, replacing the earlier one."""
    REPEATED = "repeated"
    STALE = "stale"
    IGNORED = "ignored"
    """Not a click on a feedback button (another envelope type, another app's button)."""
    UNREADABLE = "unreadable"
    FAILED = "failed"
    """Redis or the topic stayed unavailable: nothing recorded, logged as an error."""


class ClickUnreadable(ValueError):
    """A click on a feedback button whose payload does not say which verdict, who or when."""


class FeedbackNotPublished(RuntimeError):
    """The feedback topic did not take the record."""


@dataclass(frozen=True, slots=True)
class Click:
    feedback: Feedback
    at_us: int
    """Slack's ``action_ts`` in microseconds: orders one person's clicks."""
    thread_ts: str
    """The thread to answer in: the reply's thread, or the parent's own ts."""


@dataclass(frozen=True, slots=True)
class FeedbackConfig:
    attempts: int = 5
    """Tries at Redis and at the topic before a click is given up (logged as an error)."""
    backoff_initial_s: float = 0.5
    backoff_max_s: float = 8.0
    reconnect_s: float = 5.0
    """Wait between attempts to open the Socket Mode connection while Slack cannot be reached."""


@dataclass(slots=True)
class FeedbackStats:
    envelopes: int = 0
    outcomes: Counter[Handled] = field(default_factory=Counter)


class FeedbackSink(Protocol):
    def publish(self, feedback: Feedback) -> None: ...

    def close(self) -> None: ...


class FeedbackTopic:
    """Feedback records onto the feedback topic, keyed by verdict id; ``publish`` returns once the broker has the
    record and raises ``FeedbackNotPublished`` otherwise."""

    def __init__(self, config: Mapping[str, Any], topic: str, timeout_s: float = 10.0) -> None:
        self.topic = topic
        self.timeout_s = timeout_s
        self._producer = Producer({**config, "enable.idempotence": True, "partitioner": "murmur2_random"})
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"FeedbackTopic(topic={self.topic!r})"

    def publish(self, feedback: Feedback) -> None:
        errors: list[Any] = []

        def delivered(error: Any, _message: Any) -> None:
            if error is not None:
                errors.append(error)

        value = json.dumps(feedback_to_dict(feedback), separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        with self._lock:
            try:
                self._producer.produce(self.topic, key=feedback.ref.verdict_id.encode("utf-8"), value=value,
                                       on_delivery=delivered)
            except (KafkaException, BufferError) as exc:
                raise FeedbackNotPublished(f"kafka: {exc}") from None
            if self._producer.flush(self.timeout_s):
                self._producer.purge(in_queue=True, in_flight=False)
                raise FeedbackNotPublished(f"kafka: not acknowledged within {self.timeout_s:g} s")
        if errors:
            raise FeedbackNotPublished(f"kafka: {errors[0]}")

    def close(self) -> None:
        """Flush what is sent, drop what cannot be (its click was logged as not recorded), and stop the client."""
        with self._lock:
            self._producer.flush(self.timeout_s)
            self._producer.purge(in_queue=True, in_flight=True)
            self._producer.close()


def read_click(payload: Mapping[str, Any], action: Mapping[str, Any]) -> Click | None:
    """One action of a ``block_actions`` payload as a click; None when it is no feedback button of this bot, and
    ``ClickUnreadable`` when it is one but its value, user, time or message cannot be read."""
    try:
        button = FeedbackButton(str(action.get("action_id")))
    except ValueError:
        return None
    try:
        ref = read_feedback_value(action.get("value"))
    except FeedbackShapeError as exc:
        raise ClickUnreadable(f"{exc}: {str(action.get('value'))[:80]!r}") from None
    user = _mapping(payload.get("user"))
    container, message, channel = (_mapping(payload.get(k)) for k in ("container", "message", "channel"))
    user_id = _slack_id(user.get("id"), "user id")
    channel_id = _slack_id(container.get("channel_id") or channel.get("id"), "channel")
    message_ts = _slack_id(container.get("message_ts") or message.get("ts"), "message ts")
    thread_ts = _slack_id(container.get("thread_ts") or message.get("thread_ts") or message_ts, "thread ts")
    action_ts = action.get("action_ts")
    if not isinstance(action_ts, str) or not ACTION_TS.match(action_ts):
        raise ClickUnreadable(f"unreadable action_ts {str(action_ts)[:40]!r}")
    try:
        at_us = int(Decimal(action_ts) * 1_000_000)
    except InvalidOperation:
        raise ClickUnreadable(f"unreadable action_ts {action_ts!r}") from None
    name = user.get("username") or user.get("name")
    feedback = Feedback(ref, button.label, user_id, display_name(name, "") or None, iso_ms(at_us // 1000),
                        channel_id, message_ts)
    return Click(feedback, at_us, thread_ts)


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _slack_id(value: object, what: str) -> str:
    if not isinstance(value, str) or not value or len(value) > SLACK_ID_MAX or not value.isprintable():
        raise ClickUnreadable(f"no readable {what}")
    return value


class FeedbackListener:
    """Handles the envelopes of one Socket Mode connection (``on_envelope``, on the client's worker threads)."""

    def __init__(self, store: RedisIncidentStore, poster: SlackPoster, sink: FeedbackSink,
                 config: FeedbackConfig = FeedbackConfig()) -> None:
        self.store = store
        self.poster = poster
        self.sink = sink
        self.config = config
        self.stats = FeedbackStats()
        self._socket: SlackSocket | None = None
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._reconnect: threading.Thread | None = None

    def __repr__(self) -> str:
        return f"FeedbackListener(socket={self._socket!r}, sink={self.sink!r})"

    def start(self, socket: SlackSocket) -> None:
        """Connect ``socket`` (whose envelopes come to ``on_envelope``). A refused app token raises ``SlackRejected``;
        an unreachable Slack is retried in the background until it answers or ``close``."""
        self._socket = socket
        try:
            socket.connect()
        except SlackUnavailable as exc:
            log.warning("feedback buttons not connected yet (%s); retrying every %.0f s", exc, self.config.reconnect_s)
            self._reconnect = threading.Thread(target=self._keep_connecting, args=(socket,),
                                               name="slack-feedback-connect", daemon=True)
            self._reconnect.start()
            return
        log.info("feedback buttons connected (Socket Mode)")

    def _keep_connecting(self, socket: SlackSocket) -> None:
        while not self._stop.wait(self.config.reconnect_s):
            try:
                socket.connect()
            except SlackRejected as exc:
                log.error("feedback buttons stay off: %s", exc)
                return
            except SlackUnavailable as exc:
                log.warning("feedback buttons not connected yet (%s)", exc)
                continue
            log.info("feedback buttons connected (Socket Mode)")
            return

    def close(self) -> None:
        self._stop.set()
        if self._reconnect is not None:
            self._reconnect.join(timeout=30)
        if self._socket is not None:
            self._socket.close()
        self.sink.close()

    def on_envelope(self, envelope: Envelope) -> None:
        """Ack, then handle; never raises (an exception would only reach the client's log)."""
        if self._socket is not None:
            try:
                self._socket.ack(envelope.envelope_id)
            except SlackUnavailable as exc:
                log.warning("envelope %r not acked: %s", envelope.envelope_id[:80], exc)
        try:
            outcomes = self.handle(envelope)
        except Exception:  # noqa: BLE001 - a bug in one click must not silence the buttons
            log.exception("feedback envelope %r could not be handled", envelope.envelope_id[:80])
            outcomes = [Handled.FAILED]
        with self._lock:
            self.stats.envelopes += 1
            self.stats.outcomes.update(outcomes)

    def handle(self, envelope: Envelope) -> list[Handled]:
        """What became of each action of an (already acked) envelope."""
        payload = envelope.payload
        if envelope.type != "interactive" or payload.get("type") != "block_actions":
            log.debug("envelope of type %r/%r ignored", envelope.type[:40], str(payload.get("type"))[:40])
            return [Handled.IGNORED]
        actions = payload.get("actions")
        if not isinstance(actions, list) or not actions:
            log.warning("feedback envelope %r ignored: no actions", envelope.envelope_id[:80])
            return [Handled.UNREADABLE]
        return [self._handle_action(envelope, payload, action) for action in actions]

    def _handle_action(self, envelope: Envelope, payload: Mapping[str, Any], action: object) -> Handled:
        try:
            click = read_click(payload, _mapping(action))
        except ClickUnreadable as exc:
            log.warning("feedback click ignored (envelope %r): %s", envelope.envelope_id[:80], exc)
            return Handled.UNREADABLE
        if click is None:
            log.debug("a click on another button ignored (envelope %r)", envelope.envelope_id[:80])
            return Handled.IGNORED
        return self._record(click)

    def _record(self, click: Click) -> Handled:
        feedback = click.feedback
        verdict_id, user_id = feedback.ref.verdict_id, feedback.user_id
        try:
            claim: FeedbackClaim = self._retry(lambda: self.store.claim_feedback(
                verdict_id, user_id, feedback.label.value, click.at_us), "redis")
        except StoreUnavailable as exc:
            log.error("feedback on verdict %r by %s not recorded: %s", verdict_id, user_id, exc)
            return Handled.FAILED
        if not claim.recorded:
            log.info("feedback on verdict %r by %s: %s %s, not recorded again", verdict_id, user_id,
                     feedback.label.value, claim.status.value)
            return Handled.REPEATED if claim.status is FeedbackStatus.REPEATED else Handled.STALE
        try:
            self._retry(lambda: self.sink.publish(feedback), "topic")
        except FeedbackNotPublished as exc:
            log.error("feedback on verdict %r by %s not recorded: %s", verdict_id, user_id, exc)
            try:
                self.store.undo_feedback(verdict_id, user_id, feedback.label.value, click.at_us, claim.previous)
            except StoreUnavailable as undo:
                log.error("feedback on verdict %r by %s stays claimed in Redis (%s): the same answer cannot be "
                          "recorded again until it expires", verdict_id, user_id, undo)
            return Handled.FAILED
        changed = claim.status is FeedbackStatus.CHANGED
        log.info("feedback on verdict %r recorded: %s says %s", verdict_id, user_id, feedback.label.value)
        name = feedback.user_name or user_id
        try:
            self.poster.post_text(feedback.slack_channel, feedback_ack_text(name, feedback.label, changed),
                                  thread_ts=click.thread_ts)
        except (SlackUnavailable, SlackRejected) as exc:
            log.warning("feedback on verdict %r recorded, but not acknowledged in its thread: %s", verdict_id, exc)
        return Handled.CHANGED if changed else Handled.RECORDED

    def _retry(self, attempt: Callable[[], T], what: str) -> T:
        wait = self.config.backoff_initial_s
        for left in range(max(self.config.attempts, 1) - 1, -1, -1):
            try:
                return attempt()
            except (StoreUnavailable, FeedbackNotPublished) as exc:
                if left == 0 or self._stop.is_set():
                    raise
                log.warning("feedback: %s unavailable (%s); retrying in %.1fs", what, exc, wait)
                self._stop.wait(wait)
                wait = min(wait * 2, self.config.backoff_max_s)
        raise AssertionError("unreachable")
