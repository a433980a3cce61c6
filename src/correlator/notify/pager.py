"""Incidents to on-call services: one trigger when an incident opens, one resolve when it goes quiet, per target,
exactly once across restarts and replicas.

Each target keeps its own incident record in Redis (``RedisIncidentStore`` under ``<namespace>:<target>``: the Slack
bot's store, leases included), so one service being down delays only its own sends and a replayed verdict is a known
duplicate for every target that already has it. The grouping is the Slack bot's (``core/incidents.py``): cluster, job
and root-cause code, resolved after the quiet period — by event time when a later failure arrives, by wall clock in
the sweep. A verdict returns from ``deliver`` only once every target has it, so the feed commits nothing a target
still lacks; a target that refuses a request for good (4xx) is said in the log and passed over for that verdict.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from correlator.adapters.http_call import ServiceRejected, ServiceUnavailable
from correlator.adapters.pagers import Page, Target
from correlator.adapters.redis_incidents import BeginStatus, RedisIncidentStore, StoreUnavailable, Thread
from correlator.core.alert_policy import AlertPolicy, RecordKind, kind_of
from correlator.core.incidents import Action, VerdictShapeError, observe, occurrence, resolve
from correlator.notify.sink import Outcome, Stats, VerdictSink, default_owner, wall_ms

log = logging.getLogger("correlator.pager")
RETRYABLE = (ServiceUnavailable, StoreUnavailable)
REFUSED = ServiceRejected


@dataclass(frozen=True, slots=True)
class PagerConfig:
    quiet_ms: int = 2 * 3_600_000
    lease_ms: int = 120_000
    """How long one replica may hold an incident; longer than a send's timeout."""
    busy_wait_s: float = 0.2
    backoff_initial_s: float = 1.0
    backoff_max_s: float = 60.0
    sweep_every_s: float = 60.0
    report_base_url: str | None = None
    policy: AlertPolicy = AlertPolicy()


@dataclass
class Lane:
    """One target and its incident store."""

    target: Target
    store: RedisIncidentStore


@dataclass
class Pager:
    lanes: Sequence[Lane]
    config: PagerConfig = PagerConfig()
    owner: str = field(default_factory=default_owner)
    clock_ms: Callable[[], int] = wall_ms
    stats: Stats = field(default_factory=Stats)
    sent: Counter[str] = field(default_factory=Counter)
    """Requests each target took, by kind ("webhook trigger"): the honest count, one per incident, not per verdict."""

    def deliver(self, verdict: Mapping[str, Any], stop: threading.Event) -> Outcome | None:
        """Every target's share of one verdict; ``None`` only when ``stop`` was set first. Early warnings and loss
        records are not incidents: they pass (a loss alerts through Alertmanager)."""
        if kind_of(verdict) is not RecordKind.VERDICT:
            self.stats.count(Outcome.SKIPPED)
            return Outcome.SKIPPED
        try:
            occurrence(verdict)
        except VerdictShapeError as exc:
            log.warning("skipping a record that is not a verdict this can page on: %s", exc)
            self.stats.count(Outcome.SKIPPED)
            return Outcome.SKIPPED
        outcomes = []
        for lane in self.lanes:
            outcome = self._deliver_to(lane, verdict, stop)
            if outcome is None:
                return None
            outcomes.append(outcome)
        outcome = Outcome.POSTED if Outcome.POSTED in outcomes else outcomes[0] if outcomes else Outcome.SKIPPED
        self.stats.count(outcome)
        return outcome

    def _deliver_to(self, lane: Lane, verdict: Mapping[str, Any], stop: threading.Event) -> Outcome | None:
        occ = occurrence(verdict)
        delay = self.config.backoff_initial_s
        while not stop.is_set():
            begun = None
            try:
                begun = lane.store.begin(occ.verdict_id, occ.key, self.owner, self.config.lease_ms, self.clock_ms())
                if begun.status is BeginStatus.DUPLICATE:
                    return Outcome.DUPLICATE
                if begun.status is BeginStatus.BUSY:
                    stop.wait(self.config.busy_wait_s)
                    continue
                transition = observe(begun.incident, occ, self.config.quiet_ms)
                if transition.closed is not None and begun.last_verdict is not None:
                    lane.target.resolve(Page(transition.closed, begun.last_verdict, self.config.report_base_url))
                    self.sent[f"{lane.target.name} resolve"] += 1
                page = Page(transition.incident, verdict, self.config.report_base_url,
                            self.config.policy.severity_of(occ.key.cause))
                if transition.action is Action.OPEN:
                    lane.target.trigger(page)
                    self.sent[f"{lane.target.name} trigger"] += 1
                else:
                    lane.target.update(page)
                lane.store.finish(occ.verdict_id, self.owner, transition.incident,
                                  Thread(lane.target.name, page.dedup_key), self.clock_ms(), verdict)
                return Outcome.POSTED
            except REFUSED as exc:
                log.error("%s refused incident %s's page; passed over: %s", lane.target.name, occ.key.id, exc)
                self._release(lane, occ.key.id)
                return Outcome.SKIPPED
            except RETRYABLE as exc:
                if begun is not None:
                    self._release(lane, occ.key.id)
                if not self.stats.retries % 10:
                    log.warning("%s unavailable, retrying in %.0f s: %s", lane.target.name, delay, exc)
                self.stats.retries += 1
                stop.wait(delay)
                delay = min(delay * 2, self.config.backoff_max_s)
        return None

    def _release(self, lane: Lane, incident_id: str) -> None:
        try:
            lane.store.release(incident_id, self.owner)
        except StoreUnavailable:
            pass  # the lease runs out on its own

    def sweep(self) -> int:
        """Resolve, in every target, the open incidents idle (wall clock) for the quiet period; returns how many."""
        resolved = 0
        for lane in self.lanes:
            try:
                resolved += self._sweep(lane)
            except RETRYABLE as exc:
                log.warning("%s: resolution sweep skipped, tried again at the next: %s", lane.target.name, exc)
        return resolved

    def _sweep(self, lane: Lane) -> int:
        now_ms = self.clock_ms()
        resolved = 0
        for incident_id in lane.store.idle_open_incidents(now_ms - self.config.quiet_ms):
            begun = lane.store.begin_sweep(incident_id, self.owner, self.config.lease_ms)
            if begun.status is not BeginStatus.GO or begun.incident is None or begun.thread is None:
                continue
            done = resolve(begun.incident, begun.incident.last_seen_ms + self.config.quiet_ms)
            try:
                if begun.last_verdict is not None:
                    lane.target.resolve(Page(done, begun.last_verdict, self.config.report_base_url))
                    self.sent[f"{lane.target.name} resolve"] += 1
            except REFUSED as exc:
                log.error("%s refused resolving incident %s; recorded as resolved: %s", lane.target.name,
                          incident_id, exc)
            except RETRYABLE:
                self._release(lane, incident_id)
                raise
            lane.store.finish(None, self.owner, done, begun.thread, now_ms)
            resolved += 1
        return resolved


@dataclass
class Sinks:
    """Several verdict sinks fed from one consumer: a verdict is done when each of them has it, or when the alert
    policy keeps it from all of them (said in the log and counted)."""

    parts: Sequence[VerdictSink]
    stats: Stats = field(default_factory=Stats)
    policy: AlertPolicy = AlertPolicy()
    clock_ms: Callable[[], int] = wall_ms

    @property
    def config(self) -> Any:
        return min((p.config for p in self.parts), key=lambda c: c.sweep_every_s)

    def deliver(self, verdict: Mapping[str, Any], stop: threading.Event) -> Outcome | None:
        why = self.policy.suppressed(verdict, self.clock_ms())
        if why is not None:
            log.info("verdict %s not sent: %s", str(verdict.get("verdict_id"))[:40], why)
            self.stats.count(Outcome.SUPPRESSED)
            return Outcome.SUPPRESSED
        delivered = [part.deliver(verdict, stop) for part in self.parts]
        outcomes = [o for o in delivered if o is not None]
        if len(outcomes) < len(delivered):
            return None
        outcome = Outcome.POSTED if Outcome.POSTED in outcomes else outcomes[0]
        self.stats.count(outcome)
        return outcome

    def sweep(self) -> int:
        return sum(part.sweep() for part in self.parts)
