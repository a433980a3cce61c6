"""Incidents: verdicts of one job failing for one cause, grouped so a recurring problem is one conversation, not a flood.

Pure state transitions over plain verdict dicts (``correlator.verdict/v1``). Time is event time taken from the verdicts, or an explicit
``now_ms``; the store that keeps incidents and the bot that posts them live in the adapters and the stream layer.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from enum import Enum
from statistics import median
from typing import Any

OPEN = "open"
RESOLVED = "resolved"
MAX_RECENT = 24
"""Occurrence times kept per incident: enough for a stable typical interval, bounded whatever the traffic."""
MAX_HOSTS = 20


class VerdictShapeError(ValueError):
    """A verdict dict lacks what grouping needs (an id, a root-cause code or a failure time)."""


@dataclass(frozen=True, slots=True)
class IncidentKey:
    """What makes two verdicts the same problem: cluster, job and root-cause code."""

    cluster: str
    job_id: str | None
    cause: str

    @property
    def id(self) -> str:
        """A short stable digest, safe in store keys whatever characters the parts hold."""
        raw = "\x1f".join((self.cluster, self.job_id or "", self.cause))
        return hashlib.sha256(raw.encode("utf-8")).hexdigest()[:24]


@dataclass(frozen=True, slots=True)
class Occurrence:
    """The part of a verdict that incidents care about."""

    verdict_id: str
    key: IncidentKey
    at_ms: int
    hosts: tuple[str, ...]
    checkpoint_id: int | None


@dataclass(frozen=True, slots=True)
class Incident:
    """One recurring problem. ``epoch`` counts how often this key has opened afresh after a resolution."""

    key: IncidentKey
    epoch: int
    status: str
    first_seen_ms: int
    last_seen_ms: int
    count: int
    recent_ms: tuple[int, ...]
    hosts: tuple[str, ...]
    resolved_at_ms: int | None = None
    opened_by: str | None = None
    """The verdict whose post opened this epoch's thread (its parent message shows the latest one)."""

    @property
    def typical_interval_ms(self) -> int | None:
        """Median gap between the recent occurrences: robust to one odd gap, None until there are two."""
        gaps = [b - a for a, b in zip(self.recent_ms, self.recent_ms[1:], strict=False)]
        return int(median(gaps)) if gaps else None


class Action(Enum):
    OPEN = "open"
    """A new incident: post a parent message."""
    RECUR = "recur"
    """Another occurrence of an open incident: reply in its thread and update the parent."""


@dataclass(frozen=True, slots=True)
class Transition:
    action: Action
    incident: Incident
    closed: Incident | None = None
    """The previous incident of this key, resolved by this verdict's arrival after a quiet period."""


def parse_iso_ms(text: str) -> int:
    """ISO-8601 (``Z`` or an offset; naive means UTC) to epoch milliseconds."""
    stamp = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=UTC)
    return (stamp - _EPOCH) // timedelta(milliseconds=1)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def incident_key(verdict: Mapping[str, Any]) -> IncidentKey:
    cause = (verdict.get("root_cause") or {}).get("code")
    if not cause:
        raise VerdictShapeError("verdict has no root_cause.code")
    return IncidentKey(str(verdict.get("cluster") or "default"), verdict.get("job_id") or None, str(cause))


def delivery_id(verdict: Mapping[str, Any]) -> str:
    """What is delivered once: the verdict, or one revision of it (``<verdict_id>:r<revision>``)."""
    verdict_id = verdict.get("verdict_id")
    if not verdict_id:
        raise VerdictShapeError("verdict has no verdict_id")
    try:
        revision = int(verdict.get("revision") or 0)
    except (TypeError, ValueError) as exc:
        raise VerdictShapeError(f"unreadable revision {verdict.get('revision')!r}") from exc
    return str(verdict_id) if revision <= 0 else f"{verdict_id}:r{revision}"


def earlier_delivery_id(verdict: Mapping[str, Any]) -> str | None:
    """The delivery a revision replaces (the verdict itself, or its previous revision); ``None`` for a first one."""
    revision = int(verdict.get("revision") or 0)
    if revision <= 0:
        return None
    return str(verdict.get("verdict_id")) if revision == 1 else f"{verdict.get('verdict_id')}:r{revision - 1}"


def occurrence(verdict: Mapping[str, Any]) -> Occurrence:
    """Read a verdict dict; the failure time is when it happened, falling back to when it was decided. A revision
    is its own occurrence (under the incident of its cause), delivered once like the verdict it revises."""
    verdict_id = delivery_id(verdict)
    failure = verdict.get("failure") or {}
    stamp = failure.get("failed_at") or verdict.get("decided_at")
    if not stamp:
        raise VerdictShapeError("verdict has neither failure.failed_at nor decided_at")
    try:
        at_ms = parse_iso_ms(str(stamp))
    except ValueError as exc:
        raise VerdictShapeError(f"unreadable time {stamp!r}") from exc
    cause_hosts = (verdict.get("root_cause") or {}).get("hosts") or []
    hosts = _merge_hosts((), [*cause_hosts, *(failure.get("hosts") or [])])
    checkpoint = verdict.get("checkpoint_id")
    return Occurrence(
        verdict_id, incident_key(verdict), at_ms, hosts, int(checkpoint) if checkpoint is not None else None
    )


def _merge_hosts(known: Iterable[str], new: Iterable[str]) -> tuple[str, ...]:
    merged = list(dict.fromkeys([*known, *(str(h) for h in new if h)]))
    return tuple(merged[:MAX_HOSTS])


def _started(occ: Occurrence, epoch: int) -> Incident:
    return Incident(occ.key, epoch, OPEN, occ.at_ms, occ.at_ms, 1, (occ.at_ms,), occ.hosts, opened_by=occ.verdict_id)


def observe(current: Incident | None, occ: Occurrence, quiet_ms: int) -> Transition:
    """Fold one occurrence into the key's incident.

    A resolved incident, or an open one whose last occurrence lies more than ``quiet_ms`` before this one, is closed
    and a new epoch opens. Occurrences may arrive out of order: first/last seen are a min and a max.
    """
    if current is None:
        return Transition(Action.OPEN, _started(occ, 1))
    if current.status == RESOLVED:
        return Transition(Action.OPEN, _started(occ, current.epoch + 1))
    if occ.at_ms - current.last_seen_ms > quiet_ms:
        closed = resolve(current, current.last_seen_ms + quiet_ms)
        return Transition(Action.OPEN, _started(occ, current.epoch + 1), closed)
    recent = tuple(sorted((*current.recent_ms, occ.at_ms)))[-MAX_RECENT:]
    grown = replace(
        current,
        first_seen_ms=min(current.first_seen_ms, occ.at_ms),
        last_seen_ms=max(current.last_seen_ms, occ.at_ms),
        count=current.count + 1,
        recent_ms=recent,
        hosts=_merge_hosts(current.hosts, occ.hosts),
    )
    return Transition(Action.RECUR, grown)


def resolve(incident: Incident, at_ms: int) -> Incident:
    return replace(incident, status=RESOLVED, resolved_at_ms=at_ms)


def resolve_if_quiet(incident: Incident, now_ms: int, quiet_ms: int) -> Incident | None:
    """The resolved incident when nothing recurred for ``quiet_ms`` of event time before ``now_ms``, else None."""
    if incident.status == OPEN and now_ms - incident.last_seen_ms >= quiet_ms:
        return resolve(incident, incident.last_seen_ms + quiet_ms)
    return None


def ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def humanize_ms(ms: int) -> str:
    """A span as people say it: ``40 s``, ``20 min``, ``2 h``, ``2 h 40 min``, ``3 d``."""
    seconds = max(0, round(ms / 1000))
    if seconds < 60:
        return f"{seconds} s"
    minutes = round(seconds / 60)
    if minutes < 90:
        return f"{minutes} min"
    if minutes < 10 * 60:
        hours, rest = divmod(10 * round(minutes / 10), 60)
        return f"{hours} h" + (f" {rest} min" if rest else "")
    if minutes < 48 * 60:
        return f"{round(minutes / 60)} h"
    return f"{round(minutes / 1440)} d"


def recurrence_summary(incident: Incident) -> str:
    """``first time``, or ``5th time in 2 h, about every 20 min``."""
    if incident.count <= 1:
        return "first time"
    text = f"{ordinal(incident.count)} time in {humanize_ms(incident.last_seen_ms - incident.first_seen_ms)}"
    typical = incident.typical_interval_ms
    if typical is not None:
        text += f", about every {humanize_ms(typical)}"
    return text


def incident_to_dict(incident: Incident) -> dict[str, Any]:
    return {
        "cluster": incident.key.cluster,
        "job_id": incident.key.job_id,
        "cause": incident.key.cause,
        "epoch": incident.epoch,
        "status": incident.status,
        "first_seen_ms": incident.first_seen_ms,
        "last_seen_ms": incident.last_seen_ms,
        "count": incident.count,
        "recent_ms": list(incident.recent_ms),
        "hosts": list(incident.hosts),
        "resolved_at_ms": incident.resolved_at_ms,
        "opened_by": incident.opened_by,
    }


def incident_from_dict(data: Mapping[str, Any]) -> Incident:
    return Incident(
        key=IncidentKey(data["cluster"], data["job_id"], data["cause"]),
        epoch=int(data["epoch"]),
        status=data["status"],
        first_seen_ms=int(data["first_seen_ms"]),
        last_seen_ms=int(data["last_seen_ms"]),
        count=int(data["count"]),
        recent_ms=tuple(int(t) for t in data["recent_ms"]),
        hosts=tuple(data["hosts"]),
        resolved_at_ms=data.get("resolved_at_ms"),
        opened_by=data.get("opened_by"),
    )
