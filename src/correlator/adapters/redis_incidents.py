"""Incidents, verdict dedupe and Slack threads in Redis, shared by every bot replica.

Each verdict is handled under a per-incident lease: ``begin`` (Lua, atomic) reports a known duplicate, a lease held by
another replica, or hands out the incident's state and thread; ``finish`` (Lua, atomic) records the verdict as done,
stores the new state and thread and drops the lease. Two replicas therefore never post for the same verdict, and
replies wait until the parent's thread exists. The answers people give on verdicts (feedback buttons) are kept here
too, one per verdict and person, so a click delivered twice is recorded once. Keys live under one namespace and all
carry TTLs.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import Enum, StrEnum
from typing import Any

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from correlator.core.incidents import OPEN, Incident, IncidentKey, incident_from_dict, incident_to_dict

DAY_S = 86_400


class StoreUnavailable(RuntimeError):
    """Redis cannot be reached or answered with an error: the caller backs off and retries, committing nothing."""


def redis_call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """One Redis command; any failure of the store (down, timing out, refusing) becomes ``StoreUnavailable``."""
    try:
        return fn(*args, **kwargs)
    except (redis.ConnectionError, redis.TimeoutError, redis.ResponseError, OSError) as exc:
        raise StoreUnavailable(f"redis: {type(exc).__name__}: {exc}") from exc


class FeedbackStatus(StrEnum):
    NEW = "new"
    """The person's first answer on this verdict."""
    CHANGED = "changed"
    """A different answer than the person's earlier one, given later: it replaces it."""
    REPEATED = "repeated"
    """The answer the person already gave (the same click delivered again, or the same button clicked again)."""
    STALE = "stale"
    """An older click than the answer kept (a late redelivery): the later answer stands."""


@dataclass(frozen=True, slots=True)
class FeedbackClaim:
    status: FeedbackStatus
    previous: str
    """The answer kept before (``<label> <action µs>``), to put back if the record cannot be published."""

    @property
    def recorded(self) -> bool:
        return self.status in (FeedbackStatus.NEW, FeedbackStatus.CHANGED)


class BeginStatus(Enum):
    GO = "go"
    DUPLICATE = "dup"
    BUSY = "busy"


@dataclass(frozen=True, slots=True)
class Thread:
    """Where an incident's parent message lives in Slack."""

    channel: str
    ts: str


@dataclass(frozen=True, slots=True)
class Begun:
    status: BeginStatus
    incident: Incident | None = None
    thread: Thread | None = None
    holder: str | None = None
    last_verdict: dict[str, Any] | None = None
    """The verdict the parent message was last rendered from, to render it again (resolution)."""
    attempted_ms: int | None = None
    """When a replica already went ahead for this verdict without recording the outcome (it may have died right after
    Slack accepted the post): look in Slack from then on before posting again."""


_BEGIN = """
if redis.call('EXISTS', KEYS[1]) == 1 then return {'dup'} end
local holder = redis.call('GET', KEYS[2])
if holder and holder ~= ARGV[1] then return {'busy', holder} end
redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
local attempted = ''
if KEYS[4] ~= '' then
  attempted = redis.call('GET', KEYS[4]) or ''
  if attempted == '' then redis.call('SET', KEYS[4], ARGV[4], 'EX', ARGV[3]) end
end
local s = redis.call('HMGET', KEYS[3], 'state', 'channel', 'ts', 'verdict')
return {'go', s[1] or '', s[2] or '', s[3] or '', s[4] or '', attempted}
"""

_FINISH = """
if ARGV[2] ~= '' then redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[5]) end
redis.call('HSET', KEYS[3], 'state', ARGV[3], 'channel', ARGV[4], 'ts', ARGV[9])
if ARGV[11] ~= '' then redis.call('HSET', KEYS[3], 'verdict', ARGV[11]) end
redis.call('EXPIRE', KEYS[3], ARGV[6])
if ARGV[7] == 'open' then
  redis.call('ZADD', KEYS[4], ARGV[10], ARGV[8])
else
  redis.call('ZREM', KEYS[4], ARGV[8])
end
redis.call('EXPIRE', KEYS[4], ARGV[6])
if redis.call('GET', KEYS[2]) == ARGV[1] then redis.call('DEL', KEYS[2]) end
redis.call('DEL', KEYS[5])
return 1
"""

_FEEDBACK = """
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if cur then
  local sep = string.find(cur, ' ', 1, true)
  if string.sub(cur, 1, sep - 1) == ARGV[2] then return {'repeated', cur} end
  if tonumber(string.sub(cur, sep + 1)) >= tonumber(ARGV[3]) then return {'stale', cur} end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2] .. ' ' .. ARGV[3])
redis.call('EXPIRE', KEYS[1], ARGV[4])
if cur then return {'changed', cur} end
return {'new', ''}
"""

_FEEDBACK_UNDO = """
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
if ARGV[3] == '' then return redis.call('HDEL', KEYS[1], ARGV[1]) end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
return 1
"""

_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


class RedisIncidentStore:
    """The incident store on a real Redis. ``namespace`` keeps deployments (and tests) apart."""

    def __init__(
        self,
        url: str,
        namespace: str = "correlator",
        *,
        verdict_ttl_s: int = 30 * DAY_S,
        incident_ttl_s: int = 30 * DAY_S,
        timeout_s: float = 2.0,
    ) -> None:
        self._client = redis.Redis.from_url(
            url,
            socket_timeout=timeout_s,
            socket_connect_timeout=timeout_s,
            retry=Retry(NoBackoff(), 0),
            decode_responses=True,
        )
        self._ns = f"{namespace}:incidents:v1"
        self.verdict_ttl_s = verdict_ttl_s
        self.incident_ttl_s = incident_ttl_s
        self._begin = self._client.register_script(_BEGIN)
        self._finish = self._client.register_script(_FINISH)
        self._release = self._client.register_script(_RELEASE)
        self._feedback = self._client.register_script(_FEEDBACK)
        self._feedback_undo = self._client.register_script(_FEEDBACK_UNDO)

    def __repr__(self) -> str:
        return f"RedisIncidentStore(namespace={self._ns!r})"

    # --- keys -------------------------------------------------------------------------------------------------
    def _verdict(self, verdict_id: str) -> str:
        return f"{self._ns}:verdict:{verdict_id}"

    def _attempt(self, verdict_id: str) -> str:
        return f"{self._ns}:attempt:{verdict_id}"

    def _lease(self, incident_id: str) -> str:
        return f"{self._ns}:lease:{incident_id}"

    def _incident(self, incident_id: str) -> str:
        return f"{self._ns}:incident:{incident_id}"

    @property
    def _open(self) -> str:
        return f"{self._ns}:open"

    # --- operations -------------------------------------------------------------------------------------------
    def ping(self) -> None:
        self._call(self._client.ping)

    def begin(self, verdict_id: str, key: IncidentKey, owner: str, lease_ms: int, now_ms: int = 0) -> Begun:
        """Claim the incident of a verdict for ``owner`` unless the verdict is done or another replica works on it."""
        keys = [self._verdict(verdict_id), self._lease(key.id), self._incident(key.id), self._attempt(verdict_id)]
        reply = self._call(self._begin, keys=keys, args=[owner, lease_ms, self.verdict_ttl_s, now_ms])
        return _begun(reply)

    def begin_sweep(self, incident_id: str, owner: str, lease_ms: int) -> Begun:
        """Claim an incident for a resolution sweep (no verdict involved)."""
        keys = [self._verdict(""), self._lease(incident_id), self._incident(incident_id), ""]
        return _begun(self._call(self._begin, keys=keys, args=[owner, lease_ms, self.verdict_ttl_s, 0]))

    def finish(
        self,
        verdict_id: str | None,
        owner: str,
        incident: Incident,
        thread: Thread,
        touched_ms: int,
        verdict: Mapping[str, Any] | None = None,
    ) -> None:
        """Record the outcome of a successful post in one step and release the lease.

        ``touched_ms`` (wall clock) orders open incidents for the quiet-period sweep; event time would resolve a
        replayed old incident the moment it arrives.
        """
        kid = incident.key.id
        keys = [self._verdict(verdict_id or ""), self._lease(kid), self._incident(kid), self._open,
                self._attempt(verdict_id or "")]
        args = [
            owner,
            incident.key.id if verdict_id else "",
            json.dumps(incident_to_dict(incident), separators=(",", ":")),
            thread.channel,
            self.verdict_ttl_s,
            self.incident_ttl_s,
            incident.status,
            kid,
            thread.ts,
            touched_ms,
            json.dumps(verdict, separators=(",", ":"), default=str) if verdict is not None else "",
        ]
        self._call(self._finish, keys=keys, args=args)

    def release(self, key: IncidentKey | str, owner: str) -> None:
        """Give the lease back after a failed attempt, so another replica (or a retry) can go on at once."""
        kid = key.id if isinstance(key, IncidentKey) else key
        self._call(self._release, keys=[self._lease(kid)], args=[owner])

    def idle_open_incidents(self, touched_before_ms: int, limit: int = 100) -> list[str]:
        """Ids of open incidents nobody touched since ``touched_before_ms`` (wall clock)."""
        ids: list[str] = self._call(
            self._client.zrangebyscore, self._open, "-inf", touched_before_ms, start=0, num=limit
        )
        return ids

    def is_done(self, verdict_id: str) -> bool:
        return bool(self._call(self._client.exists, self._verdict(verdict_id)))

    def thread_of(self, key: IncidentKey | str) -> Thread | None:
        incident_id = key if isinstance(key, str) else key.id
        channel, ts = self._call(self._client.hmget, self._incident(incident_id), ["channel", "ts"])
        return Thread(channel, ts) if ts else None

    def incident_of(self, verdict_id: str) -> str | None:
        """The incident a delivered verdict was recorded under; ``None`` when it was not (or has expired)."""
        found = self._call(self._client.get, self._verdict(verdict_id))
        return str(found) if found else None

    # --- early warnings: one Slack message per risk, a reply per later state ------------------------------------
    def _risk(self, risk_id: str) -> str:
        return f"{self._ns}:risk:{risk_id}"

    def risk_state(self, risk_id: str, delivery: str) -> tuple[Thread | None, bool]:
        """The risk's message (if posted) and whether ``delivery`` (a status at a time) was delivered already."""
        channel, ts, done = self._call(self._client.hmget, self._risk(risk_id), ["channel", "ts", f"done:{delivery}"])
        return (Thread(channel, ts) if ts else None), bool(done)

    def record_risk(self, risk_id: str, delivery: str, thread: Thread) -> None:
        key = self._risk(risk_id)
        pipe = self._client.pipeline(transaction=True)
        pipe.hsetnx(key, "channel", thread.channel)
        pipe.hsetnx(key, "ts", thread.ts)
        pipe.hset(key, f"done:{delivery}", 1)
        pipe.expire(key, self.incident_ttl_s)
        self._call(pipe.execute)

    # --- feedback: one answer per verdict and person, the latest different one wins ------------------------------
    def _answers(self, verdict_id: str) -> str:
        return f"{self._ns}:feedback:{verdict_id}"

    def claim_feedback(self, verdict_id: str, user_id: str, label: str, at_us: int) -> FeedbackClaim:
        """Keep ``label`` as ``user_id``'s answer on ``verdict_id`` unless it repeats the answer kept or is older than
        it (atomic: two deliveries of one click racing each other record it once)."""
        reply = self._call(self._feedback, keys=[self._answers(verdict_id)],
                           args=[user_id, label, at_us, self.verdict_ttl_s])
        return FeedbackClaim(FeedbackStatus(reply[0]), str(reply[1]))

    def undo_feedback(self, verdict_id: str, user_id: str, label: str, at_us: int, previous: str) -> None:
        """Put the earlier answer back, unless a later click replaced this one meanwhile."""
        self._call(self._feedback_undo, keys=[self._answers(verdict_id)], args=[user_id, f"{label} {at_us}", previous])

    def feedback_of(self, verdict_id: str) -> dict[str, tuple[str, int]]:
        """Each person's kept answer on a verdict: user id -> (label, click time in µs)."""
        raw: dict[str, str] = self._call(self._client.hgetall, self._answers(verdict_id))
        return {user: (value.split(" ")[0], int(value.split(" ")[1])) for user, value in raw.items()}

    def _call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        return redis_call(fn, *args, **kwargs)

    def close(self) -> None:
        self._client.close()


def _begun(reply: list[str]) -> Begun:
    status = BeginStatus(reply[0])
    if status is BeginStatus.BUSY:
        return Begun(status, holder=reply[1])
    if status is BeginStatus.DUPLICATE:
        return Begun(status)
    state, channel, ts, verdict, attempted = reply[1], reply[2], reply[3], reply[4], reply[5]
    incident = incident_from_dict(json.loads(state)) if state else None
    last = json.loads(verdict) if verdict else None
    return Begun(
        status, incident, Thread(channel, ts) if ts else None, last_verdict=last,
        attempted_ms=int(attempted) if attempted else None,
    )


__all__ = ["OPEN", "BeginStatus", "Begun", "FeedbackClaim", "FeedbackStatus", "RedisIncidentStore", "StoreUnavailable",
           "Thread"]
