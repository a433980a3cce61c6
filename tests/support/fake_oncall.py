"""Local doubles of the on-call services ``correlator alerts`` talks to, speaking their documented request and
response shapes on loopback: PagerDuty's Events API v2 (``POST /v2/enqueue``), Opsgenie's Alert API v2 (create
``POST /v2/alerts``, close ``POST /v2/alerts/{alias}/close?identifierType=alias``, ``Authorization: GenieKey``) and a
webhook receiver that checks the HMAC-SHA256 signature. Each keeps what it accepted; ``fail_next`` answers the next
requests with 503 to exercise retries.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import urllib.parse
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ROUTING_KEY = "R0123456789abcdef0123456789abcde"  # PagerDuty integration keys are 32 characters
GENIE_KEY = "eb243592-faa2-4ba2-a551q-1afdf565c889"
WEBHOOK_SECRET = "s3cret-for-tests"
SEVERITIES = {"critical", "error", "warning", "info"}


@dataclass
class Received:
    pagerduty: list[dict[str, Any]] = field(default_factory=list)
    opsgenie: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    """(``create`` or ``close:<alias>``, body)"""
    webhook: list[tuple[dict[str, str], dict[str, Any]]] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)


class FakeOnCall:
    def __init__(self) -> None:
        self.received = Received()
        self.fail_next = 0
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                status, answer = owner._handle(self.path, dict(self.headers.items()), raw)
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *_: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def start(self) -> FakeOnCall:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    # --- what a test reads -------------------------------------------------------------------------------------
    def pagerduty(self, action: str) -> list[dict[str, Any]]:
        return [e for e in self.received.pagerduty if e["event_action"] == action]

    def opsgenie(self, kind: str) -> list[dict[str, Any]]:
        return [b for k, b in self.received.opsgenie if k.split(":")[0] == kind]

    def webhook(self, event: str) -> list[dict[str, Any]]:
        return [b for _, b in self.received.webhook if b["event"] == event]

    # --- the services ------------------------------------------------------------------------------------------
    def _handle(self, path: str, headers: dict[str, str], raw: bytes) -> tuple[int, dict[str, Any]]:
        with self._lock:
            if self.fail_next > 0:
                self.fail_next -= 1
                return 503, {"message": "service unavailable"}
            try:
                body = json.loads(raw)
            except ValueError:
                self.received.refused.append(f"{path}: not JSON")
                return 400, {"message": "invalid JSON"}
            where = urllib.parse.urlsplit(path)
            if where.path == "/v2/enqueue":
                return self._pagerduty(body)
            if where.path.startswith("/v2/alerts"):
                return self._opsgenie(where, headers, body)
            if where.path == "/hook":
                return self._webhook(headers, raw, body)
            return 404, {"message": "no such route"}

    def _pagerduty(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        errors = []
        if body.get("routing_key") != ROUTING_KEY:
            errors.append("Invalid routing key")
        action = body.get("event_action")
        if action not in {"trigger", "acknowledge", "resolve"}:
            errors.append("'event_action' is invalid")
        if action != "trigger" and not body.get("dedup_key"):
            errors.append("'dedup_key' is missing")
        if action == "trigger":
            payload = body.get("payload") or {}
            for name in ("summary", "source"):
                if not payload.get(name):
                    errors.append(f"'payload.{name}' is missing")
            if payload.get("severity") not in SEVERITIES:
                errors.append("'payload.severity' is invalid")
            if len(str(payload.get("summary") or "")) > 1024:
                errors.append("'payload.summary' is too long")
        if errors:
            self.received.refused.append(f"pagerduty: {errors}")
            return 400, {"status": "invalid event", "message": "Event object is invalid", "errors": errors}
        self.received.pagerduty.append(body)
        return 202, {"status": "success", "message": "Event processed", "dedup_key": body.get("dedup_key")}

    def _opsgenie(self, where: urllib.parse.SplitResult, headers: dict[str, str],
                  body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        request_id = str(uuid.uuid4())
        if headers.get("Authorization") != f"GenieKey {GENIE_KEY}":
            self.received.refused.append("opsgenie: key")
            return 401, {"message": "Could not authenticate", "took": 0.0, "requestId": request_id}
        parts = where.path.strip("/").split("/")
        if parts == ["v2", "alerts"]:
            if not body.get("message") or len(body["message"]) > 130 or len(body.get("alias") or "") > 512:
                self.received.refused.append("opsgenie: message")
                return 422, {"message": "Request body is not processable", "took": 0.0, "requestId": request_id}
            self.received.opsgenie.append(("create", body))
        elif len(parts) == 4 and parts[3] == "close" and "identifierType=alias" in where.query:
            self.received.opsgenie.append((f"close:{urllib.parse.unquote(parts[2])}", body))
        else:
            return 404, {"message": "no such route", "took": 0.0, "requestId": request_id}
        return 202, {"result": "Request will be processed", "took": 0.01, "requestId": request_id}

    def _webhook(self, headers: dict[str, str], raw: bytes, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        stamp = headers.get("X-Correlator-Timestamp", "")
        expected = hmac.new(WEBHOOK_SECRET.encode(), stamp.encode() + b"." + raw, hashlib.sha256).hexdigest()
        if not hmac.compare_digest(headers.get("X-Correlator-Signature", ""), f"sha256={expected}"):
            self.received.refused.append("webhook: signature")
            return 401, {"message": "bad signature"}
        self.received.webhook.append((headers, body))
        return 200, {"ok": True}
