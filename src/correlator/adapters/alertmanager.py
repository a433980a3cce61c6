"""Verdicts as Alertmanager alerts: on-call keeps its routing (PagerDuty, Opsgenie, e-mail, webhooks) in Alertmanager.

One alert per verdict. Its labels name it — ``alertname``, ``cluster``, ``job_id``, ``code``, ``hosts`` (of the
cause: the DataNode, NameNode or TaskManager, comma-separated), ``verdict_id`` — so
Alertmanager's own deduplication makes a verdict delivered twice one alert, and ``group_by: [cluster, job_id, code]``
gathers a job's recurring failures of one cause into one notification, as the Slack bot's incidents do. The
annotations carry what the verdict says: title, explanation, remediation, hosts, the failed checkpoint.

A verdict is an event, not a condition Alertmanager could watch: the alert starts when it is delivered and ends
``hold_s`` later, or sooner when its incident goes quiet (``pagers.AlertmanagerTarget``). A revision whose code or hosts changed resolves the earlier revision's alert (found by asking
Alertmanager for the verdict's active alerts), so on-call is never left with the cause that turned out wrong.

The records an exactly-once Kafka sink lost (``correlator.loss/v1``) are alerts too, louder: ``alertname``
``CorrelatorRecordsLost``, ``severity`` critical, labelled by the transactional id and the loss; records cannot be
un-lost, so a loss alert holds ``hold_s`` and is never resolved early.

Log text reaches the annotations: it is cut to a bounded length with control characters removed; receivers render
annotations through their own templates. Delivery and its retries are ``notify/alert_forwarder.py``'s.
"""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from correlator.adapters.http_call import ServiceRejected, ServiceUnavailable, send
from correlator.adapters.report_html import page_key
from correlator.core.explain.registry import hosts_are
from correlator.core.incidents import incident_key

ALERTNAME = "FlinkCheckpointRootCause"
LOSS_ALERTNAME = "CorrelatorRecordsLost"
LOSS_SEVERITY = "critical"
"""Above every verdict's default: a verdict explains a failed checkpoint, a loss is data gone."""
ANNOTATION_CHARS = 2_000
"""Longest annotation kept: a cause chain pasted into an explanation must not make an alert megabytes long."""


AlertmanagerUnavailable = ServiceUnavailable
AlertRejected = ServiceRejected


def clean(text: object, limit: int = ANNOTATION_CHARS) -> str:
    kept = "".join(c if c.isprintable() or c == "\n" else " " for c in str(text))
    return kept if len(kept) <= limit else kept[:limit - 1] + "…"


def iso(epoch_s: float) -> str:
    return datetime.fromtimestamp(epoch_s, tz=UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def labels_of(verdict: Mapping[str, Any], severity: str = "warning") -> dict[str, str]:
    """The alert's identity: the verdict, its incident's key (the Slack bot's grouping: cluster, job, code), the
    hosts of the cause and the severity, which routes match on."""
    key = incident_key(verdict)
    return {
        "alertname": ALERTNAME,
        "cluster": clean(key.cluster, 200),
        "job_id": clean(key.job_id or "unknown", 200),
        "code": clean(key.cause, 100),
        "hosts": clean(",".join(sorted(verdict["root_cause"].get("hosts") or ())), 500),
        "severity": severity,
        "verdict_id": clean(verdict["verdict_id"], 200),
    }


def alert_of(verdict: Mapping[str, Any], *, now_s: float, hold_s: float,
             report_base_url: str | None = None, severity: str = "warning") -> dict[str, Any]:
    """The Alertmanager v2 alert of a verdict (``POST /api/v2/alerts`` takes a list of these)."""
    cause = verdict["root_cause"]
    failure = verdict.get("failure") or {}
    steps = [f"{n}. {step}" for n, step in enumerate(verdict.get("remediation") or (), start=1)]
    annotations = {
        "summary": cause.get("title") or cause["code"],
        "description": cause.get("explanation") or "",
        "remediation": "\n".join(steps),
        "hosts": (f"{hosts_are(str(cause['code']))} " + ", ".join(cause["hosts"])) if cause.get("hosts") else "",
        "checkpoint": f"checkpoint {verdict.get('checkpoint_id')} ({failure.get('kind', 'failed')}) at "
                      f"{failure.get('failed_at', 'an unknown time')}",
        "known_issue": cause.get("known_issue") or "",
    }
    if verdict.get("revision"):
        annotations["revision"] = f"revision {verdict['revision']}: {verdict.get('revision_reason') or ''}".strip()
    alert: dict[str, Any] = {
        "labels": labels_of(verdict, severity),
        "annotations": {k: clean(v) for k, v in annotations.items() if v},
        "startsAt": iso(now_s),
        "endsAt": iso(now_s + hold_s),
    }
    if report_base_url:
        alert["generatorURL"] = f"{report_base_url.rstrip('/')}/verdicts/{page_key(str(verdict['verdict_id']))}"
    return alert


def loss_alert_of(loss: Mapping[str, Any], *, now_s: float, hold_s: float) -> dict[str, Any]:
    """The Alertmanager v2 alert of a loss record: the broker's (or committer's) line and the failed checkpoints as
    annotations."""
    steps = [f"{n}. {step}" for n, step in enumerate(loss.get("advice") or (), start=1)]
    failed = ", ".join(str(c) for c in loss.get("failed_checkpoints") or ())
    annotations = {"summary": loss["headline"], "description": loss.get("line") or "", "remediation": "\n".join(steps),
                   "checkpoints": f"failed checkpoints {failed}" if failed else "",
                   "lost_at": str(loss.get("as_of") or "")}
    labels = {"alertname": LOSS_ALERTNAME, "cluster": clean(loss["cluster"], 200),
              "job_id": clean(loss.get("job_id") or "unknown", 200),
              "transactional_id": clean(loss.get("transactional_id") or "unknown", 200),
              "severity": LOSS_SEVERITY, "loss_id": clean(loss["loss_id"], 200)}
    return {"labels": labels, "annotations": {k: clean(v) for k, v in annotations.items() if v},
            "startsAt": iso(now_s), "endsAt": iso(now_s + hold_s)}


class AlertmanagerClient:
    """``/api/v2/alerts`` of one Alertmanager (or a load balancer before a cluster of them)."""

    def __init__(self, url: str, timeout_s: float = 10.0) -> None:
        self.url = url.rstrip("/")
        self.timeout_s = timeout_s

    def post(self, alerts: list[dict[str, Any]]) -> None:
        self._call("POST", "/api/v2/alerts", json.dumps(alerts).encode())

    def active(self, matchers: Mapping[str, str]) -> list[dict[str, Any]]:
        """Active alerts whose labels equal ``matchers``."""
        query = urllib.parse.urlencode([("active", "true"), *(("filter", f'{k}="{v}"') for k, v in matchers.items())])
        found = json.loads(self._call("GET", f"/api/v2/alerts?{query}") or b"[]")
        return [a for a in found if isinstance(a, dict)]

    def _call(self, method: str, path: str, body: bytes | None = None) -> bytes:
        return send(self.url + path, body, {"Content-Type": "application/json"} if body else {}, self.timeout_s, method)
