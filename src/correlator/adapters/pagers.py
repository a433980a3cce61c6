"""Where on-call lives besides Slack: a signed webhook, PagerDuty's Events API v2, Opsgenie's Alert API and
Alertmanager, each told once when an incident opens and once when it resolves.

A target only speaks its service's documented request shape; which incidents open and end, and that each is sent
once across restarts, is ``notify/pager.py``'s. Every target is idempotent on its own side too (PagerDuty's
``dedup_key``, Opsgenie's ``alias``, the webhook's ``Idempotency-Key``), so a send repeated after a crash between the
service's answer and our record is still one alert there.

Log text reaches these payloads: it is cut to each service's limits, control characters removed; receivers render it
through their own templates. Keys and secrets go in headers or the body, never in a log line.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, ClassVar, Protocol

from correlator.adapters.alertmanager import ALERTNAME, AlertmanagerClient, clean, iso
from correlator.adapters.http_call import ServiceRejected, ServiceUnavailable, send
from correlator.adapters.report_html import page_key
from correlator.core.explain.causes import Severity
from correlator.core.incidents import Incident

PAGE_SCHEMA = "correlator.page/v1"
OPSGENIE_PRIORITY: Mapping[Severity, str] = {"critical": "P1", "warning": "P3", "info": "P5"}


PageUnavailable = ServiceUnavailable
PageRejected = ServiceRejected


class PageEvent(StrEnum):
    TRIGGER = "trigger"
    RESOLVE = "resolve"


@dataclass(frozen=True, slots=True)
class Page:
    """One incident as the targets see it: its state and the verdict that speaks for it (the latest delivered)."""

    incident: Incident
    verdict: Mapping[str, Any]
    report_base_url: str | None = None
    severity: Severity = "warning"
    """The alert policy's for the incident's code: PagerDuty's severity, Opsgenie's priority."""

    @property
    def dedup_key(self) -> str:
        """Stable per incident epoch: a reopened incident pages afresh, a repeated send is the same alert."""
        return f"correlator-{self.incident.key.id}-{self.incident.epoch}"

    @property
    def summary(self) -> str:
        key = self.incident.key
        title = (self.verdict.get("root_cause") or {}).get("title") or key.cause
        return f"{key.cause} on {key.cluster}, job {key.job_id or 'unknown'}: {title}"

    @property
    def report_url(self) -> str | None:
        if not self.report_base_url:
            return None
        return f"{self.report_base_url.rstrip('/')}/verdicts/{page_key(str(self.verdict.get('verdict_id')))}"

    def details(self) -> dict[str, str]:
        """The incident and its verdict in plain strings (every service takes string maps)."""
        key, cause = self.incident.key, self.verdict.get("root_cause") or {}
        steps = [f"{n}. {s}" for n, s in enumerate(self.verdict.get("remediation") or (), start=1)]
        found = {
            "cluster": key.cluster, "job_id": key.job_id or "unknown", "code": key.cause,
            "hosts": ", ".join(self.incident.hosts), "failures": str(self.incident.count),
            "first_failure": iso(self.incident.first_seen_ms / 1000), "last_failure": iso(self.incident.last_seen_ms / 1000),
            "verdict_id": str(self.verdict.get("verdict_id") or ""),
            "explanation": str(cause.get("explanation") or ""), "remediation": "\n".join(steps),
            "known_issue": str(cause.get("known_issue") or ""), "report": self.report_url or "",
        }
        return {k: clean(v) for k, v in found.items() if v}


class Target(Protocol):
    """One service. ``update`` refreshes an open incident (only Alertmanager needs it; the others keep theirs)."""

    @property
    def name(self) -> str: ...

    @property
    def needs_store(self) -> bool:
        """Whether it must remember each incident (Redis) to page once and resolve it; a service that groups and
        resolves alerts itself works, less well, without."""
        ...

    def trigger(self, page: Page) -> None: ...

    def update(self, page: Page) -> None: ...

    def resolve(self, page: Page) -> None: ...


@dataclass(frozen=True, slots=True)
class WebhookTarget:
    """JSON to any URL, signed: ``X-Correlator-Signature: sha256=<hex HMAC of "<timestamp>.<body>">`` with
    ``X-Correlator-Timestamp``, so a receiver can refuse forgeries and replays; ``Idempotency-Key`` names the send."""

    url: str
    secret: str | None = None
    timeout_s: float = 10.0
    clock_s: Callable[[], float] = time.time
    name: str = "webhook"
    needs_store: ClassVar[bool] = True

    def _post(self, event: PageEvent, page: Page) -> None:
        body = json.dumps({
            "schema": PAGE_SCHEMA, "event": str(event), "dedup_key": page.dedup_key,
            "verdict_id": str(page.verdict.get("verdict_id") or ""), "summary": clean(page.summary, 1000),
            "status": page.incident.status, "epoch": page.incident.epoch, "details": page.details(),
            "resolved_at": None if page.incident.resolved_at_ms is None else iso(page.incident.resolved_at_ms / 1000),
        }, separators=(",", ":")).encode()
        stamp = str(int(self.clock_s()))
        headers = {"Content-Type": "application/json", "Idempotency-Key": f"{page.dedup_key}:{event}",
                   "X-Correlator-Timestamp": stamp}
        if self.secret:
            mac = hmac.new(self.secret.encode(), stamp.encode() + b"." + body, hashlib.sha256).hexdigest()
            headers["X-Correlator-Signature"] = f"sha256={mac}"
        send(self.url, body, headers, self.timeout_s)

    def trigger(self, page: Page) -> None:
        self._post(PageEvent.TRIGGER, page)

    def update(self, page: Page) -> None:
        return None

    def resolve(self, page: Page) -> None:
        self._post(PageEvent.RESOLVE, page)


@dataclass(frozen=True, slots=True)
class PagerDutyTarget:
    """Events API v2: ``POST /v2/enqueue`` with the routing key; the incident's dedup key triggers and resolves."""

    base_url: str
    routing_key: str
    timeout_s: float = 10.0
    name: str = "pagerduty"
    needs_store: ClassVar[bool] = True

    def _enqueue(self, event: dict[str, Any]) -> None:
        send(f"{self.base_url.rstrip('/')}/v2/enqueue", json.dumps({"routing_key": self.routing_key, **event}).encode(),
             {"Content-Type": "application/json"}, self.timeout_s)

    def trigger(self, page: Page) -> None:
        key = page.incident.key
        event: dict[str, Any] = {
            "event_action": str(PageEvent.TRIGGER), "dedup_key": page.dedup_key,
            "payload": {"summary": clean(page.summary, 1024), "severity": page.severity,
                        "source": clean(", ".join(page.incident.hosts) or key.cluster, 255),
                        "timestamp": iso(page.incident.first_seen_ms / 1000), "component": clean(key.job_id or "", 255),
                        "group": clean(key.cluster, 255), "class": key.cause, "custom_details": page.details()},
        }
        if page.report_url:
            event["links"] = [{"href": page.report_url, "text": "correlator verdict"}]
        self._enqueue(event)

    def update(self, page: Page) -> None:
        return None

    def resolve(self, page: Page) -> None:
        self._enqueue({"event_action": str(PageEvent.RESOLVE), "dedup_key": page.dedup_key})


@dataclass(frozen=True, slots=True)
class OpsgenieTarget:
    """Alert API v2: create with the incident's dedup key as ``alias``, close by that alias."""

    base_url: str
    api_key: str
    timeout_s: float = 10.0
    name: str = "opsgenie"
    needs_store: ClassVar[bool] = True

    def _post(self, path: str, body: dict[str, Any]) -> None:
        send(f"{self.base_url.rstrip('/')}{path}", json.dumps(body).encode(),
             {"Content-Type": "application/json", "Authorization": f"GenieKey {self.api_key}"}, self.timeout_s)

    def trigger(self, page: Page) -> None:
        key = page.incident.key
        details = page.details()
        self._post("/v2/alerts", {
            "message": clean(page.summary, 130), "alias": page.dedup_key, "source": "correlator",
            "description": clean("\n\n".join(filter(None, (details.get("explanation"), details.get("remediation")))),
                                 15_000),
            "entity": clean(", ".join(page.incident.hosts) or key.cluster, 512),
            "priority": OPSGENIE_PRIORITY[page.severity],
            "tags": [clean(t, 50) for t in ("correlator", key.cause, key.cluster)], "details": details,
        })

    def update(self, page: Page) -> None:
        return None

    def resolve(self, page: Page) -> None:
        alias = urllib.parse.quote(page.dedup_key, safe="")
        self._post(f"/v2/alerts/{alias}/close?identifierType=alias",
                   {"source": "correlator", "note": "no further failure of this cause within the quiet period"})


@dataclass(frozen=True, slots=True)
class AlertmanagerTarget:
    """Ends an incident's alerts in Alertmanager when the incident resolves.

    The alerts themselves are the verdicts' (``alert_forwarder``: one per verdict, held ``hold_s``); without this
    they would fire on until their hold ran out, however long ago the failures stopped.
    """

    client: AlertmanagerClient
    clock_s: Callable[[], float] = time.time
    name: str = "alertmanager"
    needs_store: ClassVar[bool] = False
    """Alertmanager groups the forwarder's alerts and ends them when their hold runs out."""

    def trigger(self, page: Page) -> None:
        return None

    def update(self, page: Page) -> None:
        return None

    def resolve(self, page: Page) -> None:
        key = page.incident.key
        matchers = {"alertname": ALERTNAME, "cluster": clean(key.cluster, 200),
                    "job_id": clean(key.job_id or "unknown", 200), "code": clean(key.cause, 100)}
        ended = iso(self.clock_s())
        alerts = [{"labels": a["labels"], "annotations": a.get("annotations") or {},
                   "startsAt": a.get("startsAt") or ended, "endsAt": ended}
                  for a in self.client.active(matchers) if isinstance(a.get("labels"), dict)]
        if alerts:
            self.client.post(alerts)
