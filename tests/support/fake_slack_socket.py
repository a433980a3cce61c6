"""Slack's Socket Mode on 127.0.0.1: the websocket ``apps.connections.open`` hands out (aiohttp, on its own event loop
thread). As Slack documents it: a ``hello`` message on connect, envelopes ``{"envelope_id", "type", "payload",
"accepts_response_payload"}`` out, and the client's acks ``{"envelope_id"}`` recorded, in the order they came.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
import uuid
from typing import Any

from aiohttp import WSMsgType, web

APP_ID = "A0FAKEAPP"


class SocketModeServer:
    def __init__(self) -> None:
        self.acks: list[str] = []
        """Envelope ids the client acked; an envelope acked twice is listed twice."""
        self.received: list[dict[str, Any]] = []
        self.sent: list[dict[str, Any]] = []
        self.connections = 0
        """Websockets accepted so far (each got its ``hello``)."""
        self._tickets: set[str] = set()
        self._open: list[web.WebSocketResponse] = []
        self._changed = threading.Condition()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="fake-slack-socket", daemon=True)
        self._runner: web.AppRunner | None = None
        self.port = 0

    @property
    def started(self) -> bool:
        return self._runner is not None

    def start(self) -> SocketModeServer:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(10)
        return self

    async def _start(self) -> None:
        app = web.Application()
        app.router.add_get("/link/", self._websocket)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = self._runner.addresses[0][1]

    def stop(self) -> None:
        if self._runner is not None:
            asyncio.run_coroutine_threadsafe(self._stop(), self._loop).result(10)
        if self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=10)
        self._loop.close()

    async def _stop(self) -> None:
        for ws in list(self._open):
            await ws.close()
        assert self._runner is not None
        await self._runner.cleanup()

    def issue_url(self) -> str:
        """A one-time websocket URL, as ``apps.connections.open`` answers it."""
        ticket = uuid.uuid4().hex
        with self._changed:
            self._tickets.add(ticket)
        return f"ws://127.0.0.1:{self.port}/link/?ticket={ticket}&app_id={APP_ID}"

    async def _websocket(self, request: web.Request) -> web.StreamResponse:
        with self._changed:
            ticket = request.query.get("ticket", "")
            if ticket not in self._tickets:
                return web.Response(status=401, text="invalid ticket")
            self._tickets.discard(ticket)
        ws = web.WebSocketResponse(timeout=1.0)  # the close handshake: the client never answers a close frame
        await ws.prepare(request)
        with self._changed:
            self._open.append(ws)
            self.connections += 1
            hello = {"type": "hello", "num_connections": len(self._open),
                     "debug_info": {"host": "applink-fake", "build_number": 1, "approximate_connection_time": 18060},
                     "connection_info": {"app_id": APP_ID}}
        await ws.send_str(json.dumps(hello))
        try:
            async for message in ws:
                if message.type != WSMsgType.TEXT:
                    continue
                data = json.loads(message.data)
                with self._changed:
                    self.received.append(data)
                    if isinstance(data, dict) and "envelope_id" in data:
                        self.acks.append(str(data["envelope_id"]))
                    self._changed.notify_all()
        finally:
            with self._changed:
                self._open.remove(ws)
                self._changed.notify_all()
        return ws

    # --- what tests drive -------------------------------------------------------------------------------------------
    def wait_connected(self, timeout_s: float = 10.0) -> None:
        with self._changed:
            assert self._changed.wait_for(lambda: bool(self._open), timeout_s), "no Socket Mode client connected"

    def send(self, envelope: dict[str, Any], times: int = 1) -> None:
        """The envelope to the newest connection, ``times`` times over (Slack's redelivery)."""
        self.wait_connected()
        text = json.dumps(envelope)
        for _ in range(times):
            asyncio.run_coroutine_threadsafe(self._send(text), self._loop).result(10)
            with self._changed:
                self.sent.append(envelope)

    async def _send(self, text: str) -> None:
        await self._open[-1].send_str(text)

    def acked(self, envelope_id: str) -> int:
        with self._changed:
            return self.acks.count(envelope_id)

    def wait_acked(self, envelope_id: str, times: int = 1, timeout_s: float = 10.0) -> None:
        with self._changed:
            done = self._changed.wait_for(lambda: self.acks.count(envelope_id) >= times, timeout_s)
        assert done, f"envelope {envelope_id} acked {self.acked(envelope_id)} time(s), not {times}"


def block_actions(message: Any, button: dict[str, Any], block_id: str, user: dict[str, Any],
                  action_ts: str | None = None, value: str | None = None) -> dict[str, Any]:
    """The ``block_actions`` payload Slack sends when ``user`` clicks ``button`` of ``message`` (a posted message with
    ``channel``, ``ts``, ``thread_ts``, ``text`` and ``blocks``); ``value`` replaces the button's own."""
    thread = {"thread_ts": message.thread_ts} if message.thread_ts else {}
    return {
        "type": "block_actions",
        "user": {"team_id": "T1", **user},
        "api_app_id": APP_ID,
        "token": "legacy-verification-token",
        "container": {"type": "message", "message_ts": message.ts, "channel_id": message.channel,
                      "is_ephemeral": False, **thread},
        "trigger_id": f"{int(time.time())}.1.{uuid.uuid4().hex[:12]}",
        "team": {"id": "T1", "domain": "fake"},
        "enterprise": None,
        "is_enterprise_install": False,
        "channel": {"id": message.channel, "name": "incidents"},
        "message": {"type": "message", "subtype": "bot_message", "bot_id": "B1", "user": "UBOT",
                    "text": message.text, "ts": message.ts, "blocks": message.blocks, **thread},
        "state": {"values": {}},
        "response_url": "http://127.0.0.1:9/actions/T1/1/x",  # never called
        "actions": [{
            "action_id": button["action_id"],
            "block_id": block_id,
            "text": button["text"],
            "value": button["value"] if value is None else value,
            **({"style": button["style"]} if "style" in button else {}),
            "type": "button",
            "action_ts": action_ts or f"{time.time():.6f}",
        }],
    }
