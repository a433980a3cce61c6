"""The timeline PNG of each verdict, attached to its incident's Slack thread through Slack's external upload flow
(``files.getUploadURLExternal``, the upload, ``files.completeUploadExternal`` — slack_sdk's ``files_upload_v2``).

No file is shared twice, with the same means as the messages: Redis remembers, per verdict, the thread the file
belongs in (written before the post is recorded, so no recorded post lacks it), that an upload was attempted and that
it is done. After an attempt whose outcome never reached Redis, the thread is searched for the file by its name
(which holds the verdict id) before uploading again. A short lease keeps two replicas from uploading at once.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from correlator.adapters.redis_incidents import DAY_S, StoreUnavailable, Thread, redis_call
from correlator.adapters.report_html import page_key
from correlator.adapters.slack import SlackPoster
from correlator.adapters.slack_blocks import escape
from correlator.core.explain.timeline import build_timeline
from correlator.core.explain.verdict import verdict_from_dict

log = logging.getLogger("correlator.slack.files")


def timeline_filename(verdict_id: str) -> str:
    return f"timeline-{page_key(verdict_id)}.png"


class UploadBusy(RuntimeError):
    """Another replica holds this verdict's upload lease: wait, it finishes or its lease runs out."""


def timeline_png(verdict: Mapping[str, Any], zone: str = "UTC") -> bytes:
    from correlator.adapters.timeline_plot import render  # matplotlib: loaded when the first picture is drawn

    return render(build_timeline(verdict_from_dict(dict(verdict)), zone=zone), "png")


@dataclass(frozen=True, slots=True)
class FileState:
    thread: Thread
    attempted: bool
    done: bool


class FileLedger:
    """Per verdict in Redis: where its file goes, whether an upload was tried, whether it is done."""

    def __init__(self, url: str, namespace: str = "correlator", *, ttl_s: int = 30 * DAY_S,
                 timeout_s: float = 2.0) -> None:
        self._client = redis.Redis.from_url(url, socket_timeout=timeout_s, socket_connect_timeout=timeout_s,
                                            retry=Retry(NoBackoff(), 0), decode_responses=True)
        self._ns = f"{namespace}:files:v1"
        self.ttl_s = ttl_s

    def __repr__(self) -> str:
        return f"FileLedger(namespace={self._ns!r})"

    def _key(self, verdict_id: str) -> str:
        return f"{self._ns}:{verdict_id}"

    def want(self, verdict_id: str, thread: Thread) -> None:
        """The verdict's file belongs in ``thread`` (kept if already known: a replay must not move it)."""
        key = self._key(verdict_id)
        self._call(self._client.hsetnx, key, "thread", f"{thread.channel} {thread.ts}")
        self._call(self._client.expire, key, self.ttl_s)

    def state(self, verdict_id: str) -> FileState | None:
        thread, attempted, done = self._call(self._client.hmget, self._key(verdict_id),
                                             ["thread", "attempted", "done"])
        if not thread:
            return None
        channel, _, ts = thread.partition(" ")
        return FileState(Thread(channel, ts), bool(attempted), bool(done))

    def lease(self, verdict_id: str, owner: str, lease_ms: int) -> bool:
        """Take (or keep) the upload lease; False while another owner holds it."""
        key = self._key(verdict_id) + ":lease"
        if self._call(self._client.set, key, owner, nx=True, px=lease_ms):
            return True
        return bool(self._call(self._client.get, key) == owner)

    def attempt(self, verdict_id: str) -> None:
        self._call(self._client.hset, self._key(verdict_id), "attempted", "1")

    def done(self, verdict_id: str, file_id: str) -> None:
        key = self._key(verdict_id)
        self._call(self._client.hset, key, "done", file_id)
        self._call(self._client.delete, key + ":lease")

    def release(self, verdict_id: str) -> None:
        self._call(self._client.delete, self._key(verdict_id) + ":lease")

    def _call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        return redis_call(fn, *args, **kwargs)

    def close(self) -> None:
        self._client.close()


class TimelineFiles:
    """Attach a verdict's timeline to its thread, at most once; raises StoreUnavailable / SlackUnavailable to be
    retried, SlackRejected when Slack refuses (e.g. the token lacks ``files:write``)."""

    def __init__(self, ledger: FileLedger, poster: SlackPoster, *, owner: str, zone: str = "UTC",
                 report_base_url: str | None = None, lease_ms: int = 120_000,
                 png: Callable[[Mapping[str, Any], str], bytes] = timeline_png) -> None:
        self.ledger = ledger
        self.poster = poster
        self.owner = owner
        self.zone = zone
        self.report_base_url = report_base_url.rstrip("/") if report_base_url else None
        self.lease_ms = lease_ms
        self.png = png

    def __repr__(self) -> str:
        return f"TimelineFiles(ledger={self.ledger!r})"

    def want(self, verdict_id: str, thread: Thread) -> None:
        self.ledger.want(verdict_id, thread)

    def attach(self, verdict: Mapping[str, Any]) -> str | None:
        """Upload the PNG unless it is there already; the file id, or ``None`` when nothing was due or done here."""
        verdict_id = str(verdict["verdict_id"])
        state = self.ledger.state(verdict_id)
        if state is None or state.done:
            return None
        if not self.ledger.lease(verdict_id, self.owner, self.lease_ms):
            raise UploadBusy(verdict_id)
        try:
            name = timeline_filename(verdict_id)
            found = self._find(state.thread, name) if state.attempted else None
            if found is not None:
                log.info("timeline of verdict %s was already shared; recording it", verdict_id)
                self.ledger.done(verdict_id, found)
                return found
            data = self.png(verdict, self.zone)
            self.ledger.attempt(verdict_id)
            response = self.poster.call(
                "files_upload_v2", file=data, filename=name, title=self._title(verdict),
                alt_txt="timeline of the failed checkpoint, one lane per host", channel=state.thread.channel,
                thread_ts=state.thread.ts, initial_comment=self._comment(verdict),
            )
            file_id = str((response.get("file") or {}).get("id") or "")
            self.ledger.done(verdict_id, file_id)
            return file_id
        except BaseException:
            self._release_quietly(verdict_id)
            raise

    def _find(self, thread: Thread, name: str) -> str | None:
        response = self.poster.call("conversations_replies", channel=thread.channel, ts=thread.ts, limit=1000)
        for message in response.get("messages") or []:
            for info in message.get("files") or []:
                if info.get("name") == name:
                    return str(info.get("id") or "")
        return None

    def _title(self, verdict: Mapping[str, Any]) -> str:
        cp = verdict.get("checkpoint_id")
        code = str((verdict.get("root_cause") or {}).get("code") or "")
        return f"Timeline of checkpoint {cp if isinstance(cp, int) else '?'} – {code}"[:200]

    def _comment(self, verdict: Mapping[str, Any]) -> str:
        text = escape(self._title(verdict))
        if self.report_base_url:
            text += f" · <{self.report_base_url}/verdicts/{page_key(str(verdict['verdict_id']))}|open the report page>"
        return text

    def _release_quietly(self, verdict_id: str) -> None:
        try:
            self.ledger.release(verdict_id)
        except StoreUnavailable:
            pass
