"""Posting to Slack through slack_sdk's Web API client, with its own retry handlers for 429 and 5xx; and Slack's Socket
Mode (slack_sdk's builtin client), through which button clicks reach the bot without a public URL.

The tokens are held only by the clients inside; these objects' reprs and errors never show them (slack_sdk itself
redacts the Authorization header in its debug logs).
"""

from __future__ import annotations

import logging
import random
import socket
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.error import URLError

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.http_retry import (
    ConnectionErrorRetryHandler,
    RateLimitErrorRetryHandler,
    RetryIntervalCalculator,
)
from slack_sdk.http_retry.builtin_handlers import ServerErrorRetryHandler
from slack_sdk.http_retry.builtin_interval_calculators import BackoffRetryIntervalCalculator
from slack_sdk.http_retry.jitter import Jitter
from slack_sdk.socket_mode.builtin import SocketModeClient
from slack_sdk.socket_mode.request import SocketModeRequest
from slack_sdk.socket_mode.response import SocketModeResponse

from correlator.adapters.slack_blocks import Message

FATAL_ERRORS = frozenset(
    {
        "invalid_auth",
        "not_authed",
        "account_inactive",
        "token_revoked",
        "token_expired",
        "no_permission",
        "missing_scope",
        "channel_not_found",
        "not_in_channel",
        "is_archived",
        "restricted_action",
        "not_allowed_token_type",
    }
)
"""Errors no retry can cure: the bot stops with the reason instead of retrying forever."""


class ProportionalJitter(Jitter):
    """Jitter scaled to the interval (slack_sdk's default adds up to a whole second, even to a 50 ms backoff)."""

    def recalculate(self, duration: float) -> float:
        return duration + random.uniform(0, duration / 2)


class SlackUnavailable(RuntimeError):
    """Slack could not be reached or kept failing after the retries: try the verdict again later."""


class SlackRejected(RuntimeError):
    """Slack refused the request for a reason no retry cures (bad token, unknown channel...)."""


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How hard the client itself retries before the bot's own backoff takes over."""

    rate_limited_retries: int = 5
    server_error_retries: int = 4
    connection_retries: int = 2
    backoff_factor_s: float = 0.5
    timeout_s: int = 10


@dataclass(frozen=True, slots=True)
class Posted:
    channel: str
    ts: str


class SlackPoster:
    """chat.postMessage / chat.update for one channel."""

    def __init__(
        self,
        base_url: str,
        token: str,
        channel: str,
        policy: RetryPolicy = RetryPolicy(),
        logger: logging.Logger | None = None,
    ) -> None:
        interval: RetryIntervalCalculator = BackoffRetryIntervalCalculator(
            backoff_factor=policy.backoff_factor_s, jitter=ProportionalJitter()
        )
        self.channel = channel
        self._client = WebClient(
            token=token,
            base_url=base_url if base_url.endswith("/") else base_url + "/",
            timeout=policy.timeout_s,
            logger=logger or logging.getLogger("correlator.slack.sdk"),
            retry_handlers=[
                ConnectionErrorRetryHandler(max_retry_count=policy.connection_retries, interval_calculator=interval),
                RateLimitErrorRetryHandler(max_retry_count=policy.rate_limited_retries),
                ServerErrorRetryHandler(max_retry_count=policy.server_error_retries, interval_calculator=interval),
            ],
        )

    def __repr__(self) -> str:
        return f"SlackPoster(channel={self.channel!r})"

    def post(self, message: Message, thread_ts: str | None = None) -> Posted:
        response = self._send(
            self._client.chat_postMessage,
            channel=self.channel,
            text=message.text,
            blocks=message.blocks,
            metadata=message.metadata,
            thread_ts=thread_ts,
            parse="none",
            link_names=False,
            unfurl_links=False,
            unfurl_media=False,
        )
        return Posted(str(response["channel"]), str(response["ts"]))

    def find_posted(self, verdict_id: str, thread: tuple[str, str] | None, oldest_s: float,
                    field: str = "verdict_id") -> Posted | None:
        """The message already posted for ``verdict_id`` (by its metadata's ``field``), in ``thread`` (channel, ts) or
        among the channel's messages since ``oldest_s``; ``None`` when there is none."""
        if thread is not None:
            response = self._send(
                self._client.conversations_replies, channel=thread[0], ts=thread[1], include_all_metadata=True,
                limit=1000,
            )
            channel = thread[0]
        else:
            response = self._send(
                self._client.conversations_history, channel=self.channel, oldest=f"{oldest_s:.6f}",
                include_all_metadata=True, limit=1000,
            )
            channel = str(response.get("channel") or self.channel)
        for message in response.get("messages") or []:
            payload = (message.get("metadata") or {}).get("event_payload") or {}
            if payload.get(field) == verdict_id:
                return Posted(channel, str(message["ts"]))
        return None

    def find_incident(self, incident_id: str, oldest_s: float) -> tuple[Posted, dict[str, Any]] | None:
        """The newest parent message of ``incident_id`` since ``oldest_s`` and its metadata payload (which carries
        the incident as it was last rendered); ``None`` when the channel has none."""
        response = self._send(
            self._client.conversations_history, channel=self.channel, oldest=f"{oldest_s:.6f}",
            include_all_metadata=True, limit=1000,
        )
        channel = str(response.get("channel") or self.channel)
        newest: tuple[float, Posted, dict[str, Any]] | None = None
        for message in response.get("messages") or []:
            payload = (message.get("metadata") or {}).get("event_payload") or {}
            if payload.get("incident_id") == incident_id and (newest is None or float(message["ts"]) > newest[0]):
                newest = (float(message["ts"]), Posted(channel, str(message["ts"])), payload)
        return None if newest is None else (newest[1], newest[2])

    def post_text(self, channel: str, text: str, thread_ts: str | None = None) -> Posted:
        """A plain-text message (no mrkdwn, no link or name parsing): for sentences carrying user-supplied words, which
        the caller escapes as well."""
        response = self._send(
            self._client.chat_postMessage,
            channel=channel,
            text=text,
            thread_ts=thread_ts,
            mrkdwn=False,
            parse="none",
            link_names=False,
            unfurl_links=False,
            unfurl_media=False,
        )
        return Posted(str(response["channel"]), str(response["ts"]))

    def update(self, channel: str, ts: str, message: Message) -> None:
        self._send(
            self._client.chat_update,
            channel=channel,
            ts=ts,
            text=message.text,
            blocks=message.blocks,
            metadata=message.metadata,
            parse="none",
            link_names=False,
        )

    def call(self, method: str, **kwargs: Any) -> Any:
        """Any other Web API method of the client (e.g. ``files_upload_v2``), with the same retries and errors."""
        return self._send(getattr(self._client, method), **kwargs)

    def _send(self, method: Any, **kwargs: Any) -> Any:
        try:
            return method(**{k: v for k, v in kwargs.items() if v is not None})
        except SlackApiError as exc:
            error = str(exc.response.get("error") or f"HTTP {exc.response.status_code}")
            if error in FATAL_ERRORS:
                raise SlackRejected(f"slack refused: {error}") from None
            raise SlackUnavailable(f"slack error: {error} (HTTP {exc.response.status_code})") from None
        except (SlackClientError, URLError, OSError) as exc:
            raise SlackUnavailable(f"slack unreachable: {type(exc).__name__}") from None


@dataclass(frozen=True, slots=True)
class Envelope:
    """One Socket Mode envelope: its id (what the ack names), its type (``interactive``, ``events_api``...) and
    payload."""

    envelope_id: str
    type: str
    payload: Mapping[str, Any]


class SlackSocket:
    """A Socket Mode connection: ``apps.connections.open`` with the app-level token on the Web API at ``base_url``,
    then a websocket whose envelopes go to ``on_envelope`` (on the client's worker threads) and whose acks go back
    through ``ack``. The client reconnects by itself when Slack asks it to or the connection goes stale."""

    def __init__(
        self,
        base_url: str,
        app_token: str,
        on_envelope: Callable[[Envelope], None],
        policy: RetryPolicy = RetryPolicy(),
        logger: logging.Logger | None = None,
        ping_interval_s: float = 5.0,
    ) -> None:
        self._on_envelope = on_envelope
        logger = logger or logging.getLogger("correlator.slack.socket")
        web = WebClient(base_url=base_url if base_url.endswith("/") else base_url + "/", timeout=policy.timeout_s,
                        logger=logger)
        self._client = SocketModeClient(app_token=app_token, web_client=web, logger=logger,
                                        ping_interval=ping_interval_s)
        self._client.socket_mode_request_listeners.append(self._on_request)

    def __repr__(self) -> str:
        return f"SlackSocket(connected={self.connected})"

    @property
    def connected(self) -> bool:
        return bool(self._client.is_connected())

    def connect(self) -> None:
        """Open a connection; ``SlackRejected`` when the app token is refused, ``SlackUnavailable`` when Slack cannot
        be reached or the websocket did not open."""
        try:
            self._client.connect()
        except SlackApiError as exc:
            error = str(exc.response.get("error") or f"HTTP {exc.response.status_code}")
            if error in FATAL_ERRORS:
                raise SlackRejected(f"slack refused the app token: {error}") from None
            raise SlackUnavailable(f"slack error: {error} (HTTP {exc.response.status_code})") from None
        except (SlackClientError, URLError, OSError) as exc:
            raise SlackUnavailable(f"slack unreachable: {type(exc).__name__}") from None
        if not self.connected:
            raise SlackUnavailable("the Socket Mode websocket did not open")

    def ack(self, envelope_id: str) -> None:
        """Tell Slack the envelope arrived (Slack delivers it again when no ack comes within a few seconds)."""
        try:
            self._client.send_socket_mode_response(SocketModeResponse(envelope_id=envelope_id))
        except (SlackClientError, OSError) as exc:
            raise SlackUnavailable(f"ack not sent: {type(exc).__name__}") from None

    def close(self) -> None:
        """Stop receiving and every thread of the client. The socket is shut first: a receive blocked on it would
        otherwise hold the client's close until its read timeout."""
        self._client.auto_reconnect_enabled = False
        self._client.closed = True
        session = self._client.current_session
        sock = getattr(session, "sock", None)
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._client.message_queue.put(None)  # wakes the message processor, which waits on the queue otherwise
        self._client.close()

    def _on_request(self, _client: Any, request: SocketModeRequest) -> None:
        self._on_envelope(Envelope(str(request.envelope_id), str(request.type), request.payload or {}))
