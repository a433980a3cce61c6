"""The timeline of one verdict: lanes per host and role, the checkpoint, the stuck write and every piece of evidence as
a span or a mark, in event time.

It is built from the verdict alone (the wire shape), so the offline report, the Slack bot and the worker's pages draw
the same picture from the same record. Drawing is an adapter's job; this module only decides what is shown where.
"""

from __future__ import annotations

from dataclasses import dataclass

from correlator.core.events import (
    CheckpointCompleted,
    CheckpointDeclined,
    CheckpointExpired,
    CheckpointFailed,
    CheckpointLateAck,
    CheckpointTriggered,
    JobStatus,
    TaskStatus,
)
from correlator.core.explain.registry import CAUSES
from correlator.core.explain.verdict import EvidenceItem, Verdict

ROLE_ORDER = ("jobmanager", "taskmanager", "datanode", "namenode")
ROLE_NAMES = {"jobmanager": "JobManager", "taskmanager": "TaskManager", "datanode": "DataNode",
              "namenode": "NameNode"}
LIFECYCLE = frozenset({CheckpointTriggered.type, CheckpointCompleted.type, CheckpointExpired.type,
                       CheckpointDeclined.type, CheckpointFailed.type, CheckpointLateAck.type, JobStatus.type,
                       TaskStatus.type})
"""Flink's own account of the checkpoint: context on the timeline, never the cause's evidence."""

CAUSE_TYPES: dict[str, frozenset[str]] = {c.code: c.timeline_types for c in CAUSES.values()}
"""Which evidence types speak for which cause (the registry's); a code outside it claims every non-lifecycle type."""

MAX_LANES = 10
MAX_ITEMS = 120
"""Evidence drawn per picture at most (the root cause's first): a record from the topic may carry any amount."""
OTHER = "other"


@dataclass(frozen=True, slots=True)
class Lane:
    index: int
    host: str
    role: str
    label: str
    folded: tuple[str, ...] = ()
    """Hosts drawn together in this lane when there were too many to give each its own."""
    note: str | None = None
    """For a lane without evidence: why its logs were missing, or that they were read and showed nothing."""
    missing: bool = False


@dataclass(frozen=True, slots=True)
class Span:
    lane: int
    kind: str
    """An evidence type, or ``checkpoint`` / ``write`` for the failure itself."""
    start_ms: int
    end_ms: int
    summary: str
    emphasis: str
    """``cause`` (the root cause's evidence), ``alternative`` (a lower-ranked cause's), ``context`` or ``failure``."""
    ref: str = ""

    @property
    def duration_ms(self) -> int:
        return self.end_ms - self.start_ms


@dataclass(frozen=True, slots=True)
class Mark:
    lane: int
    kind: str
    at_ms: int
    summary: str
    emphasis: str
    ref: str = ""


@dataclass(frozen=True, slots=True)
class Timeline:
    verdict_id: str
    title: str
    code: str
    zone: str
    """The zone the logs were written in (named beside the UTC axis)."""
    lanes: tuple[Lane, ...]
    spans: tuple[Span, ...]
    marks: tuple[Mark, ...]
    view_start_ms: int
    view_end_ms: int
    failed_at_ms: int
    timeout_at_ms: int | None
    timeout_ms: int | None
    alternatives: tuple[tuple[str, float], ...]


def role_name(role: str) -> str:
    return ROLE_NAMES.get(role, role)


def _lane_order(key: tuple[str, str]) -> tuple[int, str]:
    host, role = key
    return (ROLE_ORDER.index(role) if role in ROLE_ORDER else len(ROLE_ORDER), host)


def _lane_keys(v: Verdict) -> list[tuple[str, str]]:
    keys = {(e.host, e.role) for e in v.evidence}
    keys |= {(h, "taskmanager") for h in v.failure.hosts if not any(k[0] == h for k in keys)}
    keys |= {(m.host, m.role) for m in v.missing if m.host in v.root_cause.hosts}
    seen = {h for h, _ in keys}
    keys |= {(c.host, c.role) for c in v.covered if c.host in v.root_cause.hosts and c.host not in seen}
    if not keys:
        keys.add(("jobmanager", "jobmanager"))
    return sorted(keys, key=_lane_order)


def _lanes(v: Verdict, max_lanes: int) -> tuple[list[Lane], dict[tuple[str, str], int]]:
    keys = _lane_keys(v)
    if len(keys) > max_lanes:
        wanted = {k for k in keys if k[0] in v.root_cause.hosts or k[0] in v.failure.hosts or k[1] == "jobmanager"}
        keep = sorted(wanted, key=_lane_order)[: max_lanes - 1]
        keep += [k for k in keys if k not in wanted][: max_lanes - 1 - len(keep)]
        keep.sort(key=_lane_order)
        folded = [k for k in keys if k not in keep]
    else:
        keep, folded = keys, []
    why = {(m.host, m.role): "logs missing: " + (m.why or "no logs") for m in v.missing}
    has_evidence = {(e.host, e.role) for e in v.evidence} | {(h, r) for h, r in keep if h in v.failure.hosts}
    lanes = [Lane(i, host, role, f"{role_name(role)} {host}",
                  note=None if (host, role) in has_evidence else why.get((host, role), "log read: nothing abnormal"),
                  missing=(host, role) in why and (host, role) not in has_evidence)
             for i, (host, role) in enumerate(keep)]
    where = {k: i for i, k in enumerate(keep)}
    if folded:
        other = Lane(len(lanes), OTHER, OTHER, f"{len(folded)} other hosts", tuple(sorted({h for h, _ in folded})))
        lanes.append(other)
        where.update({k: other.index for k in folded})
    return lanes, where


def _emphasis(e: EvidenceItem, v: Verdict) -> str:
    def speaks_for(code: str) -> bool:
        types = CAUSE_TYPES.get(code)
        return e.type in types if types is not None else e.type not in LIFECYCLE

    if e.host in v.root_cause.hosts and speaks_for(v.root_cause.code):
        return "cause"
    if any(speaks_for(a.code) for a in v.alternatives) and e.type not in LIFECYCLE:
        return "alternative"
    return "context"


def build_timeline(v: Verdict, zone: str = "UTC", max_lanes: int = MAX_LANES) -> Timeline:
    """Everything the picture shows, positioned in event time (epoch ms) and by lane."""
    lanes, where = _lanes(v, max_lanes)
    f = v.failure
    jm = next((i for (h, r), i in where.items() if r == "jobmanager"), 0)
    tm = next((where[(h, r)] for h in f.hosts for r in ("taskmanager", "jobmanager") if (h, r) in where), jm)
    spans: list[Span] = []
    marks: list[Mark] = []
    started = f.started_at_ms
    if started is not None and f.failed_at_ms > started:
        spans.append(Span(jm, "checkpoint", started, f.failed_at_ms,
                          f"checkpoint {v.checkpoint_id if v.checkpoint_id is not None else '?'} "
                          f"({f.kind.replace('_', ' ')})", "failure"))
    if started is not None and f.duration_ms:
        spans.append(Span(tm, "write", started, started + f.duration_ms,
                          f"checkpoint write ran {f.duration_ms / 1000:.1f} s", "failure"))
    ranked = sorted(((_emphasis(e, v), e) for e in v.evidence), key=lambda p: p[0] != "cause")[:MAX_ITEMS]
    for emphasis, e in ranked:
        lane = where[(e.host, e.role)]
        if e.start_ms is not None and e.end_ms is not None and e.end_ms > e.start_ms:
            spans.append(Span(lane, e.type, e.start_ms, e.end_ms, e.summary, emphasis, e.ref))
        else:
            marks.append(Mark(lane, e.type, e.at_ms, e.summary, emphasis, e.ref))
    timeout_at = started + f.timeout_ms if started is not None and f.timeout_ms is not None else None
    times = [s.start_ms for s in spans] + [s.end_ms for s in spans] + [m.at_ms for m in marks] + [f.failed_at_ms]
    times += [timeout_at] if timeout_at is not None else []
    lo, hi = min(times), max(times)
    pad = max((hi - lo) // 20, 500)
    return Timeline(
        verdict_id=v.verdict_id,
        title=v.root_cause.title,
        code=v.root_cause.code,
        zone=zone,
        lanes=tuple(lanes),
        spans=tuple(spans),
        marks=tuple(marks),
        view_start_ms=lo - pad,
        view_end_ms=hi + pad,
        failed_at_ms=f.failed_at_ms,
        timeout_at_ms=timeout_at,
        timeout_ms=f.timeout_ms,
        alternatives=tuple((a.code, a.confidence) for a in v.alternatives),
    )
