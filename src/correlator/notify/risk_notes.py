"""Early warnings into Slack: one quiet message per risk, edited to its latest state, each later state a reply; and
the records an exactly-once Kafka sink lost: one message per loss, posted once.

A risk is a job's, not an incident's: it gets no incident, no lease and no mention. Its deliveries are recorded in
Redis and looked for in Slack by their metadata before they are posted (a replica may have posted one and stopped
before recording it). A risk's records share a key on the risk topic, so one consumer delivers them in order; only
two consumers handed the same partition during a rebalance could both post a delivery, which a lease would prevent.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any

from correlator.adapters.redis_incidents import RedisIncidentStore, StoreUnavailable, Thread
from correlator.adapters.slack import Posted, SlackPoster, SlackRejected, SlackUnavailable
from correlator.adapters.slack_risk_blocks import delivery_of, loss_message, risk_message
from correlator.core.explain.risk import risk_from_dict
from correlator.core.explain.transactions import loss_from_dict

log = logging.getLogger("correlator.slackbot")
LOOKBACK_MS = 7 * 86_400_000
"""How far back the channel is searched for a warning's message that Redis does not know."""


class RiskNotes:
    def __init__(self, store: RedisIncidentStore, poster: SlackPoster, clock_ms: Callable[[], int],
                 backoff_initial_s: float = 0.5, backoff_max_s: float = 30.0) -> None:
        self.store = store
        self.poster = poster
        self.clock_ms = clock_ms
        self.backoff = (backoff_initial_s, backoff_max_s)

    def deliver(self, risk: Mapping[str, Any], stop: threading.Event) -> bool | None:
        """True when posted, False when it was delivered already; None when ``stop`` came first. Raises
        ``ValueError`` for a record that is not a risk."""
        risk_from_dict(dict(risk))  # the full shape, so rendering cannot fail later
        return self._retrying(f"warning {risk.get('risk_id')}", lambda: self._deliver_once(risk), stop)

    def deliver_loss(self, loss: Mapping[str, Any], stop: threading.Event) -> bool | None:
        """As ``deliver``, for a loss record: one top-level message, never edited. Raises ``ValueError`` for a record
        that is not a loss."""
        loss_from_dict(dict(loss))
        return self._retrying(f"loss {loss.get('loss_id')}", lambda: self._deliver_loss_once(loss), stop)

    def _retrying(self, what: str, once: Callable[[], bool], stop: threading.Event) -> bool | None:
        wait = self.backoff[0]
        while not stop.is_set():
            try:
                return once()
            except (StoreUnavailable, SlackUnavailable) as exc:
                log.warning("%s not delivered yet (%s); retrying in %.1fs", what, exc, wait)
                stop.wait(wait)
                wait = min(wait * 2, self.backoff[1])
        return None

    def _deliver_loss_once(self, loss: Mapping[str, Any]) -> bool:
        loss_id = str(loss["loss_id"])
        _, done = self.store.risk_state(loss_id, "posted")
        if done:
            return False
        try:
            found = self.poster.find_posted(loss_id, None, (self.clock_ms() - LOOKBACK_MS) / 1000, field="loss_id")
        except SlackRejected as exc:
            log.warning("cannot look for an earlier post of loss %s (%s); posting it", loss_id, exc)
            found = None
        posted = found if found is not None else self.poster.post(loss_message(loss))
        self.store.record_risk(loss_id, "posted", Thread(posted.channel, posted.ts))
        log.info("loss %s delivered", loss_id)
        return True

    def _deliver_once(self, risk: Mapping[str, Any]) -> bool:
        risk_id, delivery = str(risk["risk_id"]), delivery_of(risk)
        thread, done = self.store.risk_state(risk_id, delivery)
        if done:
            return False
        message = risk_message(risk)
        oldest_s = (self.clock_ms() - LOOKBACK_MS) / 1000
        where = (thread.channel, thread.ts) if thread is not None else None
        try:
            if thread is None:  # a new warning, or Redis lost its message: the channel knows it by its risk id
                first = self.poster.find_posted(risk_id, None, oldest_s, field="risk_id")
                thread = Thread(first.channel, first.ts) if first is not None else None
                where = (thread.channel, thread.ts) if thread is not None else None
            found = self.poster.find_posted(delivery, where, oldest_s, field="delivery")
            if found is None and thread is not None and risk.get("status") == "raised":
                found = Posted(thread.channel, thread.ts)  # the warning's message is this delivery's post
        except SlackRejected as exc:  # e.g. no history scope: posting again is the lesser evil than not posting
            log.warning("cannot look for an earlier post of warning %s (%s); posting it", risk_id, exc)
            found = None
        if found is not None:
            posted = found
        elif thread is None:
            posted = self.poster.post(message)
        else:
            posted = self.poster.post(message, thread_ts=thread.ts)
        if thread is not None:
            try:
                self.poster.update(thread.channel, thread.ts, message)  # the warning's message shows its latest state
            except SlackUnavailable as exc:
                log.warning("warning %s: its message was not brought up to date: %s", risk_id, exc)
        self.store.record_risk(risk_id, delivery, thread or Thread(posted.channel, posted.ts))
        log.info("warning %s: %s delivered", risk_id, risk.get("status"))
        return True
