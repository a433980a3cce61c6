"""The Slack bot: verdicts in (``slack_feed``: Kafka topic or JSONL file), one Slack thread per incident out.

Delivery is at-least-once from the source and exactly-once to Slack through the incident store: a verdict already done
is skipped, a verdict whose incident another replica holds waits, and the Kafka offset is committed only after the post
was recorded (or the verdict was a known duplicate). While Redis or Slack is unavailable the bot holds the verdict,
consumes nothing further and retries with backoff; verdicts stay in the topic.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from correlator.adapters.redis_incidents import BeginStatus, Begun, RedisIncidentStore, StoreUnavailable, Thread
from correlator.adapters.slack import Posted, SlackPoster, SlackRejected, SlackUnavailable
from correlator.adapters.slack_blocks import parent_message, reply_message, superseded_message
from correlator.adapters.slack_files import TimelineFiles, UploadBusy
from correlator.core.alert_policy import RecordKind, kind_of
from correlator.core.explain.verdict import verdict_from_dict
from correlator.core.incidents import (
    Action,
    Incident,
    Occurrence,
    VerdictShapeError,
    earlier_delivery_id,
    incident_from_dict,
    observe,
    occurrence,
    resolve,
)
from correlator.notify.risk_notes import RiskNotes
from correlator.notify.sink import Outcome, Stats, default_owner, wall_ms

log = logging.getLogger("correlator.slackbot")
SCHEMA = "correlator.verdict/v1"


class IncidentBusy(RuntimeError):
    """Another replica holds this verdict's incident right now."""


@dataclass(frozen=True, slots=True)
class BotConfig:
    quiet_ms: int = 2 * 3_600_000
    """Quiet period after which an incident counts as resolved (event-time gap, or wall-clock idle in the sweep)."""
    lease_ms: int = 120_000
    """How long one replica may hold an incident; longer than the worst Slack retry sequence."""
    busy_wait_s: float = 0.1
    backoff_initial_s: float = 0.5
    backoff_max_s: float = 30.0
    sweep_every_s: float = 60.0
    clock_margin_ms: int = 300_000
    """Slack's and the replicas' clocks may differ: look this much before a dead replica's attempt for its post."""
    cold_lookback_ms: int = 7 * 86_400_000
    """With no Redis record of a verdict's incident (Redis cold or its data lost), how far back the channel is
    searched for the incident's thread before a new one is opened."""
    feedback_buttons: bool = False
    """Feedback buttons on each verdict's message: only when a Socket Mode listener takes their clicks (a button
    nobody answers shows the clicker an error)."""


class SlackBot:
    """Delivers verdicts to Slack as incidents; one instance per process, any number of replicas."""

    def __init__(
        self,
        store: RedisIncidentStore,
        poster: SlackPoster,
        config: BotConfig = BotConfig(),
        owner: str | None = None,
        clock_ms: Callable[[], int] = wall_ms,
        timelines: TimelineFiles | None = None,
    ) -> None:
        self.timelines = timelines
        self.store = store
        self.poster = poster
        self.config = config
        self.owner = owner or default_owner()
        self.clock_ms = clock_ms
        self.stats = Stats()
        self.risks = RiskNotes(store, poster, clock_ms, config.backoff_initial_s, config.backoff_max_s)
        """Early warnings (``correlator.risk/v1``) from the same feed: quiet messages, no incident."""
        self._recovered: set[str] = set()
        """Incidents resumed from their Slack thread: Redis lost them, so any of their verdicts may be in Slack
        already; each is looked up in the thread before it is posted."""

    def __repr__(self) -> str:
        return f"SlackBot(owner={self.owner!r}, store={self.store!r}, poster={self.poster!r})"

    def deliver(self, verdict: Mapping[str, Any], stop: threading.Event) -> Outcome | None:
        """Deliver one verdict (or early warning), retrying through outages; None only when ``stop`` was set before it
        was done."""
        kind = kind_of(verdict)
        if kind is RecordKind.WARNING:
            return self._deliver_note(verdict, stop, self.risks.deliver)
        if kind is RecordKind.LOSS:
            return self._deliver_note(verdict, stop, self.risks.deliver_loss)
        try:
            schema = str(verdict.get("schema") or SCHEMA)
            if not schema.startswith(SCHEMA.split("/")[0] + "/"):
                raise VerdictShapeError(f"not a verdict schema: {schema[:60]!r}")
            occ = occurrence(verdict)
            verdict_from_dict(dict(verdict))  # the full shape, so rendering cannot fail on a field's type later
        except (VerdictShapeError, ValueError, TypeError, AttributeError, KeyError) as exc:
            log.warning("skipping a verdict this bot cannot group: %s", exc)
            self.stats.count(Outcome.SKIPPED)
            return Outcome.SKIPPED
        backoff = self.config.backoff_initial_s
        while not stop.is_set():
            try:
                outcome = self._deliver_once(verdict, occ, stop)
            except IncidentBusy:
                stop.wait(self.config.busy_wait_s)
                continue
            except (StoreUnavailable, SlackUnavailable) as exc:
                self.stats.retries += 1
                log.warning("verdict %s not delivered yet (%s); retrying in %.1fs", occ.verdict_id, exc, backoff)
                stop.wait(backoff)
                backoff = min(backoff * 2, self.config.backoff_max_s)
                continue
            if outcome is not None:
                self.stats.count(outcome)
                if self.timelines is not None and not self._attach_timeline(self.timelines, verdict, stop):
                    return None  # stopped before the file was settled: the verdict comes again, as a duplicate
            return outcome
        return None

    def _deliver_note(self, record: Mapping[str, Any], stop: threading.Event,
                      deliver: Callable[[Mapping[str, Any], threading.Event], bool | None]) -> Outcome | None:
        """An early warning or a loss record: a note of its own, no incident."""
        try:
            posted = deliver(record, stop)
        except (ValueError, TypeError, AttributeError, KeyError) as exc:
            log.warning("skipping a %s record this bot cannot read: %s", str(record.get("schema"))[:40], exc)
            self.stats.count(Outcome.SKIPPED)
            return Outcome.SKIPPED
        if posted is None:
            return None
        outcome = Outcome.POSTED if posted else Outcome.DUPLICATE
        self.stats.count(outcome)
        return outcome

    def _attach_timeline(self, timelines: TimelineFiles, verdict: Mapping[str, Any], stop: threading.Event) -> bool:
        """The verdict's timeline PNG into its thread (also on a duplicate: the post may have been recorded by a
        replica that stopped before uploading). Retried through outages; given up only when Slack refuses.
        False only when ``stop`` came first."""
        verdict_id = str(verdict.get("verdict_id"))
        backoff = self.config.backoff_initial_s
        while not stop.is_set():
            try:
                if timelines.attach(verdict) is not None:
                    self.stats.timelines += 1
                return True
            except UploadBusy:
                stop.wait(self.config.busy_wait_s)
            except (StoreUnavailable, SlackUnavailable) as exc:
                self.stats.retries += 1
                log.warning("timeline of verdict %s not attached yet (%s); retrying in %.1fs", verdict_id, exc, backoff)
                stop.wait(backoff)
                backoff = min(backoff * 2, self.config.backoff_max_s)
            except SlackRejected as exc:  # e.g. no files:write scope: the messages matter more than the picture
                log.warning("timeline of verdict %s not attached: %s", verdict_id, exc)
                return True
            except (ValueError, KeyError, TypeError) as exc:  # a verdict the picture cannot be drawn from
                log.error("timeline of verdict %s cannot be drawn: %s", verdict_id, exc)
                return True
        return False

    def _deliver_once(self, verdict: Mapping[str, Any], occ: Occurrence, stop: threading.Event) -> Outcome | None:
        begun = self.store.begin(occ.verdict_id, occ.key, self.owner, self.config.lease_ms, self.clock_ms())
        if begun.status is BeginStatus.DUPLICATE:
            log.info("verdict %s already delivered", occ.verdict_id)
            return Outcome.DUPLICATE
        if begun.status is BeginStatus.BUSY:
            raise IncidentBusy(begun.holder)
        if begun.incident is None:
            recovered = self._recover_from_slack(occ, begun, verdict, stop)
            if isinstance(recovered, Outcome) or recovered is None:
                return recovered
            begun = recovered
        elif occ.key.id in self._recovered and begun.thread is not None and begun.attempted_ms is None:
            try:
                found = self.poster.find_posted(occ.verdict_id, (begun.thread.channel, begun.thread.ts), 0)
            except BaseException:
                self._release_quietly(occ.key)
                raise
            if found is not None:  # counted in the incident the thread carried: record, neither post nor count
                return Outcome.POSTED if self._record(occ.verdict_id, begun.incident, begun.thread, verdict, stop) \
                    else None
        transition = observe(begun.incident, occ, self.config.quiet_ms)
        incident = transition.incident
        try:
            if transition.closed is not None and begun.thread is not None:
                self._update_parent(begun.thread, begun.last_verdict or verdict, transition.closed)
            reply = transition.action is Action.RECUR and begun.thread is not None
            earlier = None
            if begun.attempted_ms is not None:
                earlier = self._earlier_post(occ.verdict_id, begun.thread if reply else None, begun.attempted_ms)
            if reply and begun.thread is not None:
                if earlier is None:
                    self.poster.post(reply_message(verdict, incident, self.config.feedback_buttons),
                                     thread_ts=begun.thread.ts)
                thread = begun.thread
            else:
                posted = earlier or self.poster.post(parent_message(verdict, incident, self.config.feedback_buttons))
                thread = Thread(posted.channel, posted.ts)
        except BaseException:
            self._release_quietly(occ.key)
            raise
        if transition.action is Action.RECUR and begun.thread is not None:
            self._update_parent(thread, verdict, incident)  # under the lease, so replicas cannot reorder updates
        if self.timelines is not None:
            self.timelines.want(occ.verdict_id, thread)  # before the record: no recorded post without its file due
        if not self._record(occ.verdict_id, incident, thread, verdict, stop):
            return None
        log.info("verdict %s posted (%s, incident %s #%d)", occ.verdict_id, transition.action.value,
                 incident.key.id, incident.count)
        self._mark_superseded(verdict)
        return Outcome.POSTED

    def _mark_superseded(self, verdict: Mapping[str, Any]) -> None:
        """After a revision is posted, the message of the delivery it revises says so. Best effort: the revision
        itself is posted and recorded, and a missing edit only leaves the earlier words standing."""
        earlier = earlier_delivery_id(verdict)
        if earlier is None:
            return
        revision = int(verdict.get("revision") or 0)
        try:
            incident_id = self.store.incident_of(earlier)
            thread = self.store.thread_of(incident_id) if incident_id else None
            found = self.poster.find_posted(earlier, (thread.channel, thread.ts), 0) if thread else None
            if found is None:
                log.info("revision %d of verdict %s posted; its earlier message was not found to mark", revision,
                         verdict["verdict_id"])
                return
            self.poster.update(found.channel, found.ts, superseded_message(verdict, incident_id))
        except (StoreUnavailable, SlackUnavailable, SlackRejected) as exc:
            log.warning("revision %d of verdict %s posted, but its earlier message was not marked: %s", revision,
                        verdict["verdict_id"], exc)

    def _recover_from_slack(
        self, occ: Occurrence, begun: Begun, verdict: Mapping[str, Any], stop: threading.Event
    ) -> Begun | Outcome | None:
        """Redis knows nothing of this verdict's incident: it may be new, or Redis lost its data. The channel knows:
        the incident's newest thread carries the incident in its metadata. A verdict found there already is only
        recorded (``POSTED``, as for a post a dead replica made); otherwise the recovered incident and thread let it reply instead of opening a
        second thread. Slack lookups that fail raise ``SlackUnavailable`` like a post would (the bot retries)."""
        oldest_s = (self.clock_ms() - self.config.cold_lookback_ms) / 1000
        try:
            found = self.poster.find_incident(occ.key.id, oldest_s)
        except SlackRejected as exc:  # e.g. no history scope: a second thread is the lesser evil than no post
            log.warning("cannot look up incident %s in the channel (%s)", occ.key.id, exc)
            self._release_quietly(occ.key)
            return begun
        except BaseException:
            self._release_quietly(occ.key)
            raise
        if found is None:
            return begun
        parent, payload = found
        thread = Thread(parent.channel, parent.ts)
        try:
            incident = incident_from_dict(payload["incident"])
        except (KeyError, TypeError, ValueError):
            return begun  # a parent from an older bot: nothing to resume from
        try:
            already = incident.opened_by == occ.verdict_id or self.poster.find_posted(
                occ.verdict_id, (thread.channel, thread.ts), oldest_s) is not None
        except BaseException:
            self._release_quietly(occ.key)
            raise
        log.info("incident %s recovered from its Slack thread (Redis had no record)", occ.key.id)
        self._recovered.add(occ.key.id)
        if already:
            if not self._record(occ.verdict_id, incident, thread, verdict, stop):
                return None
            log.info("verdict %s was already in Slack; recorded, not posted again", occ.verdict_id)
            return Outcome.POSTED
        return replace(begun, incident=incident, thread=thread, last_verdict=begun.last_verdict or dict(verdict))

    def _earlier_post(self, verdict_id: str, thread: Thread | None, attempted_ms: int) -> Posted | None:
        """After a replica died between Slack's answer and Redis, find its post instead of posting twice."""
        oldest_s = (attempted_ms - self.config.clock_margin_ms) / 1000
        try:
            found = self.poster.find_posted(verdict_id, (thread.channel, thread.ts) if thread else None, oldest_s)
        except SlackRejected as exc:  # e.g. no history scope: posting again is the lesser evil than never posting
            log.warning("cannot look for an earlier post of verdict %s (%s); posting it", verdict_id, exc)
            return None
        if found is not None:
            log.info("verdict %s was already posted by a replica that stopped before recording it", verdict_id)
        return found

    def _record(
        self, verdict_id: str, incident: Incident, thread: Thread, verdict: Mapping[str, Any], stop: threading.Event
    ) -> bool:
        """Store what was posted. The post happened, so this must not fail: retry until Redis answers again."""
        backoff = self.config.backoff_initial_s
        while True:
            try:
                self.store.finish(verdict_id, self.owner, incident, thread, self.clock_ms(), verdict)
                return True
            except StoreUnavailable as exc:
                if stop.is_set():
                    log.error("stopping before verdict %s was recorded as posted (%s)", verdict_id, exc)
                    return False
                self.stats.retries += 1
                log.warning("posted verdict %s but cannot record it yet (%s); retrying in %.1fs",
                            verdict_id, exc, backoff)
                stop.wait(backoff)
                backoff = min(backoff * 2, self.config.backoff_max_s)

    def _update_parent(self, thread: Thread, verdict: Mapping[str, Any], incident: Incident) -> None:
        """Refresh the parent (count, last seen, resolved). Best effort: the next update carries the same facts."""
        try:
            self.poster.update(thread.channel, thread.ts,
                               parent_message(verdict, incident, self.config.feedback_buttons))
        except SlackUnavailable as exc:
            log.warning("could not update incident %s's parent message: %s", incident.key.id, exc)

    def _release_quietly(self, key: Any) -> None:
        try:
            self.store.release(key, self.owner)
        except StoreUnavailable:
            pass

    def sweep(self) -> int:
        """Resolve open incidents idle (wall clock) for the quiet period and mark their parents; returns how many."""
        now_ms = self.clock_ms()
        resolved = 0
        for incident_id in self.store.idle_open_incidents(now_ms - self.config.quiet_ms):
            begun = self.store.begin_sweep(incident_id, self.owner, self.config.lease_ms)
            if begun.status is not BeginStatus.GO or begun.incident is None or begun.thread is None:
                continue
            done = resolve(begun.incident, begun.incident.last_seen_ms + self.config.quiet_ms)
            if begun.last_verdict is not None:
                self._update_parent(begun.thread, begun.last_verdict, done)
            self.store.finish(None, self.owner, done, begun.thread, now_ms)
            resolved += 1
        return resolved
