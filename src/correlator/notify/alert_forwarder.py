"""``correlator alerts``' delivery: each verdict becomes an Alertmanager alert, retried through Alertmanager's outages;
the verdict feed commits a verdict's offset only once it was delivered (see ``adapters/alertmanager.py`` for the
alert itself)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from correlator.adapters.alertmanager import (ALERTNAME, AlertmanagerClient, AlertmanagerUnavailable, alert_of,
                                              loss_alert_of)
from correlator.core.alert_policy import AlertPolicy, RecordKind, kind_of
from correlator.core.incidents import VerdictShapeError
from correlator.notify.sink import Outcome, Stats

log = logging.getLogger("correlator.alerts")


@dataclass(frozen=True, slots=True)
class ForwarderConfig:
    hold_s: float = 3600.0
    report_base_url: str | None = None
    backoff_initial_s: float = 1.0
    backoff_max_s: float = 60.0
    sweep_every_s: float = 3600.0
    """Nothing to sweep (Alertmanager ends alerts itself); read by the shared verdict feed."""
    policy: AlertPolicy = AlertPolicy()


@dataclass
class AlertForwarder:
    """Delivers verdicts to Alertmanager, retrying through its outages (the feed commits only what was delivered)."""

    client: AlertmanagerClient
    config: ForwarderConfig = ForwarderConfig()
    clock_s: Callable[[], float] = time.time
    stats: Stats = field(default_factory=Stats)

    def deliver(self, verdict: Mapping[str, Any], stop: threading.Event) -> Outcome | None:
        """One verdict or loss record (an early warning alerts nobody); ``None`` only when ``stop`` was set before
        Alertmanager took it."""
        kind = kind_of(verdict)
        if kind is RecordKind.WARNING:
            self.stats.count(Outcome.SKIPPED)
            return Outcome.SKIPPED
        try:
            if kind is RecordKind.LOSS:
                alert = loss_alert_of(verdict, now_s=self.clock_s(), hold_s=self.config.hold_s)
            else:
                alert = alert_of(verdict, now_s=self.clock_s(), hold_s=self.config.hold_s,
                                 report_base_url=self.config.report_base_url,
                                 severity=self.config.policy.severity_of(str(verdict["root_cause"]["code"])))
        except (KeyError, TypeError, AttributeError, VerdictShapeError) as exc:
            log.warning("skipping a record that is not a verdict this can alert on (%s: %s)", type(exc).__name__,
                        str(exc)[:200])
            self.stats.count(Outcome.SKIPPED)
            return Outcome.SKIPPED
        delay = self.config.backoff_initial_s
        while not stop.is_set():
            try:
                self.client.post([alert, *self._superseded(verdict, alert)])
                self.stats.count(Outcome.POSTED)
                return Outcome.POSTED
            except AlertmanagerUnavailable as exc:
                if not self.stats.retries % 10:
                    log.warning("Alertmanager unavailable, retrying in %.0f s: %s", delay, exc)
                self.stats.retries += 1
                stop.wait(delay)
                delay = min(delay * 2, self.config.backoff_max_s)
        return None

    def _superseded(self, verdict: Mapping[str, Any], alert: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Earlier revisions' alerts of this verdict under other labels (code or hosts), ended now."""
        if not verdict.get("revision"):
            return []
        ended = alert["startsAt"]
        return [{"labels": old["labels"], "annotations": old.get("annotations") or {},
                 "startsAt": old.get("startsAt") or ended, "endsAt": ended}
                for old in self.client.active({"alertname": ALERTNAME, "verdict_id": alert["labels"]["verdict_id"]})
                if isinstance(old.get("labels"), dict) and old["labels"] != alert["labels"]]

    def sweep(self) -> int:
        return 0
