"""A local Slack Web API on 127.0.0.1: chat.postMessage, chat.update, conversations.history/replies, auth.test and the
external file upload (files.getUploadURLExternal, the upload URL itself, files.completeUploadExternal), recording every
request and every file shared; and Socket Mode: apps.connections.open (app-level token) hands out a websocket
(``fake_slack_socket``) through which ``click`` delivers a button's ``block_actions`` envelope.

Failures are scripted per method: ``fail_next("chat.postMessage", 429, retry_after=1)`` or ``fail_next(..., 500)``
answer the next matching request(s) with that status instead of handling them.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs

from tests.support.fake_slack_socket import SocketModeServer, block_actions


@dataclass
class Request:
    method: str
    body: dict[str, Any]
    authorization: str
    status: int


@dataclass
class Posted:
    channel: str
    ts: str
    text: str
    blocks: list[dict[str, Any]]
    thread_ts: str | None
    metadata: dict[str, Any] | None
    """As the message is now (chat.update replaces it when given)."""
    updates: list[dict[str, Any]] = field(default_factory=list)
    files: list[dict[str, Any]] = field(default_factory=list)
    """Set on the message a completed upload shares (as Slack lists it in the thread)."""
    posted_metadata: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        self.posted_metadata = self.metadata

    @property
    def verdict_id(self) -> str | None:
        """The verdict this message was posted for."""
        return ((self.posted_metadata or {}).get("event_payload") or {}).get("verdict_id")


@dataclass
class SharedFile:
    """One file as completed into a channel or thread: what a person sees there."""

    id: str
    filename: str
    title: str
    data: bytes
    channel: str
    thread_ts: str | None
    initial_comment: str | None


class FakeSlack:
    def __init__(self, token: str = "xoxb-test-token", app_token: str = "xapp-1-test-app-token") -> None:
        self.token = token
        self.app_token = app_token
        self.socket_mode = SocketModeServer()
        """Started by the first apps.connections.open."""
        self.requests: list[Request] = []
        self.messages: dict[str, Posted] = {}
        self._failures: dict[str, deque[tuple[int, int | None]]] = {}
        self._lock = threading.Lock()
        self._seq = 0
        self._pending: dict[str, dict[str, Any]] = {}
        self.shared: list[SharedFile] = []
        self.after_post: Callable[[Posted], None] | None = None
        """Called once a message is stored, before Slack answers: lets a test break things in that window."""
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                length = int(self.headers.get("Content-Length") or 0)
                data = self.rfile.read(length)
                if self.path.startswith("/upload/"):
                    status, reply_text = fake._upload(self.path.rsplit("/", 1)[-1], data)
                    self._answer(status, {}, reply_text.encode(), "text/plain")
                    return
                raw = data.decode("utf-8")
                if "json" in (self.headers.get("Content-Type") or ""):
                    body = json.loads(raw or "{}")
                else:
                    body = {k: v[0] for k, v in parse_qs(raw).items()}
                method = self.path.rsplit("/", 1)[-1]
                status, headers, reply = fake._handle(method, body, self.headers.get("Authorization") or "")
                hook = fake.after_post
                if hook is not None and method == "chat.postMessage" and reply.get("ok"):
                    hook(fake.messages[reply["ts"]])
                self._answer(status, headers, json.dumps(reply).encode(), "application/json; charset=utf-8")

            def _answer(self, status: int, headers: dict[str, str], payload: bytes, content_type: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(payload)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - http.server's signature
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/api/"

    def start(self) -> FakeSlack:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self.socket_mode.stop()

    def click(self, message: Posted, label: str, user: dict[str, Any], *, times: int = 1,
              action_ts: str | None = None, value: str | None = None) -> str:
        """``user`` ({id, username, name}) clicks the button captioned ``label`` on ``message`` as it is now: one
        envelope, delivered ``times`` times over the Socket Mode connection. Returns the envelope id."""
        for block in (b for b in message.blocks if b.get("type") == "actions"):
            for element in block.get("elements") or []:
                if element.get("type") == "button" and element["text"]["text"] == label:
                    envelope_id = str(uuid.uuid4())
                    envelope = {"envelope_id": envelope_id, "type": "interactive",
                                "payload": block_actions(message, element, block.get("block_id", ""), user,
                                                         action_ts, value),
                                "accepts_response_payload": False}
                    self.socket_mode.send(envelope, times)
                    return envelope_id
        raise AssertionError(f"no button {label!r} on message {message.ts}")

    def fail_next(self, method: str, status: int, *, retry_after: int | None = None, times: int = 1) -> None:
        with self._lock:
            queue = self._failures.setdefault(method, deque())
            queue.extend([(status, retry_after)] * times)

    def clear_failures(self) -> None:
        with self._lock:
            self._failures.clear()

    # --- what tests read ----------------------------------------------------------------------------------------
    def calls(self, method: str) -> list[Request]:
        with self._lock:
            return [r for r in self.requests if r.method == method]

    def parents(self) -> list[Posted]:
        with self._lock:
            return [m for m in self.messages.values() if m.thread_ts is None]

    def replies(self, thread_ts: str) -> list[Posted]:
        with self._lock:
            return [m for m in self.messages.values() if m.thread_ts == thread_ts and not m.files]

    def posted_verdict_ids(self) -> list[str | None]:
        """One entry per successful chat.postMessage, in order: duplicates show up as repeats."""
        with self._lock:
            return [m.verdict_id for m in self.messages.values() if not m.files]

    def files_in(self, thread_ts: str) -> list[SharedFile]:
        """Files shared into a thread (its parent's ts), in order: a doubled upload shows up twice."""
        with self._lock:
            return [f for f in self.shared if f.thread_ts == thread_ts]

    # --- the API ------------------------------------------------------------------------------------------------
    def _handle(self, method: str, body: dict[str, Any], authorization: str) -> tuple[int, dict[str, str], Any]:
        with self._lock:
            queue = self._failures.get(method)
            if queue:
                status, retry_after = queue.popleft()
                self.requests.append(Request(method, body, authorization, status))
                headers = {"Retry-After": str(retry_after)} if retry_after is not None else {}
                return status, headers, {"ok": False, "error": "ratelimited" if status == 429 else "internal_error"}
            self.requests.append(Request(method, body, authorization, 200))
            if method == "apps.connections.open":
                return 200, {}, self._connections_open(authorization)
            if authorization != f"Bearer {self.token}":
                return 200, {}, {"ok": False, "error": "invalid_auth"}
            if method == "auth.test":
                return 200, {}, {"ok": True, "user_id": "UBOT", "team_id": "T1"}
            if method == "chat.postMessage":
                return 200, {}, self._post(body)
            if method == "chat.update":
                return 200, {}, self._update(body)
            if method == "conversations.history":
                return 200, {}, self._listing(body, lambda m: m.thread_ts is None and float(m.ts) >= float(
                    body.get("oldest") or 0))
            if method == "conversations.replies":
                return 200, {}, self._listing(body, lambda m: m.ts == body.get("ts") or m.thread_ts == body.get("ts"))
            if method == "files.getUploadURLExternal":
                return 200, {}, self._upload_url(body)
            if method == "files.completeUploadExternal":
                return 200, {}, self._complete(body)
            return 404, {}, {"ok": False, "error": "unknown_method"}

    def _connections_open(self, authorization: str) -> dict[str, Any]:
        """Socket Mode's websocket URL, for the app-level token only (a bot token is the wrong type)."""
        if authorization == f"Bearer {self.token}":
            return {"ok": False, "error": "not_allowed_token_type"}
        if authorization != f"Bearer {self.app_token}":
            return {"ok": False, "error": "invalid_auth"}
        if not self.socket_mode.started:
            self.socket_mode.start()
        return {"ok": True, "url": self.socket_mode.issue_url()}

    def _upload_url(self, body: dict[str, Any]) -> dict[str, Any]:
        if not body.get("filename") or not str(body.get("length") or "").isdigit():
            return {"ok": False, "error": "invalid_arguments"}
        self._seq += 1
        file_id = f"F{self._seq:08d}"
        self._pending[file_id] = {"filename": body["filename"], "length": int(body["length"]), "data": None}
        port = self._server.server_address[1]
        return {"ok": True, "upload_url": f"http://127.0.0.1:{port}/upload/{file_id}", "file_id": file_id}

    def _upload(self, file_id: str, data: bytes) -> tuple[int, str]:
        with self._lock:
            queue = self._failures.get("upload")
            if queue:
                status, _ = queue.popleft()
                self.requests.append(Request("upload", {"file_id": file_id}, "", status))
                return status, "error"
            self.requests.append(Request("upload", {"file_id": file_id, "bytes": len(data)}, "", 200))
            pending = self._pending.get(file_id)
            if pending is None:
                return 404, "file not found"
            if len(data) != pending["length"]:
                return 400, "length mismatch"
            pending["data"] = data
            return 200, f"OK - {len(data)}"

    def _complete(self, body: dict[str, Any]) -> dict[str, Any]:
        """Shares each uploaded file into the channel (and thread); completing a file again shares it again."""
        files = json.loads(body.get("files") or "[]")
        channel = self._channel_id(str(body.get("channel_id") or ""))
        thread_ts = body.get("thread_ts")
        if not body.get("channel_id"):
            return {"ok": False, "error": "channel_not_found"}
        if thread_ts is not None and thread_ts not in self.messages:
            return {"ok": False, "error": "thread_not_found"}
        done = []
        for item in files:
            pending = self._pending.get(item.get("id"))
            if pending is None or pending["data"] is None:
                return {"ok": False, "error": "file_not_found"}
            shared = SharedFile(item["id"], pending["filename"], item.get("title") or pending["filename"],
                                pending["data"], channel, thread_ts, body.get("initial_comment"))
            self.shared.append(shared)
            self._seq += 1
            ts = f"{int(time.time())}.{self._seq:06d}"
            info = {"id": shared.id, "name": shared.filename, "title": shared.title}
            self.messages[ts] = Posted(channel, ts, body.get("initial_comment") or "", [], thread_ts, None,
                                       files=[info])
            done.append(info)
        return {"ok": True, "files": done}

    def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        if not body.get("channel"):
            return {"ok": False, "error": "channel_not_found"}
        thread_ts = body.get("thread_ts")
        if thread_ts is not None and thread_ts not in self.messages:
            return {"ok": False, "error": "thread_not_found"}
        self._seq += 1
        ts = f"{int(time.time())}.{self._seq:06d}"
        channel = self._channel_id(str(body["channel"]))
        self.messages[ts] = Posted(
            channel, ts, body.get("text", ""), body.get("blocks") or [], thread_ts, body.get("metadata")
        )
        return {"ok": True, "channel": channel, "ts": ts, "message": {"ts": ts, "text": body.get("text", "")}}

    def _channel_id(self, name: str) -> str:
        """Channel names map to ids the way Slack answers them; an id already handed out stays itself."""
        if any(m.channel == name for m in self.messages.values()):
            return name
        return "C" + name.lstrip("#").upper()[:10]

    def _listing(self, body: dict[str, Any], keep: Callable[[Posted], bool]) -> dict[str, Any]:
        channel = self._channel_id(str(body.get("channel") or ""))
        with_metadata = str(body.get("include_all_metadata")).lower() in ("true", "1")
        messages = [
            {"ts": m.ts, "text": m.text, **({"thread_ts": m.thread_ts} if m.thread_ts else {}),
             **({"files": m.files} if m.files else {}),
             **({"metadata": m.metadata} if with_metadata and m.metadata else {})}
            for m in sorted(self.messages.values(), key=lambda m: float(m.ts), reverse=True)
            if m.channel == channel and keep(m)
        ]
        return {"ok": True, "channel": channel, "messages": messages, "has_more": False}

    def _update(self, body: dict[str, Any]) -> dict[str, Any]:
        message = self.messages.get(str(body.get("ts")))
        if message is None or message.channel != body.get("channel"):
            return {"ok": False, "error": "message_not_found"}
        message.updates.append(body)
        message.text = body.get("text", message.text)
        message.blocks = body.get("blocks") or message.blocks
        message.metadata = body.get("metadata") or message.metadata  # as Slack: left as-is when not given
        return {"ok": True, "channel": message.channel, "ts": message.ts}
