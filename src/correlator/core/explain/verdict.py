"""The verdict: one explained failed checkpoint, in the shape of ``correlator.verdict/v1`` (``correlator schema verdict``).

The dataclasses are the engine's output; ``verdict_to_dict`` / ``verdict_from_dict`` are the only place where the
wire shape lives, so the offline printer, the Kafka codec and the Slack bot read one schema.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from correlator.core.events import iso_ms
from correlator.core.explain.causes import Code, Step

SCHEMA = "correlator.verdict/v1"

CODES: tuple[str, ...] = tuple(Code)

FAILURE_KINDS = ("async_materialize", "expired", "declined", "trigger", "finalize", "task_failure", "other")


@dataclass(frozen=True, slots=True)
class Failure:
    kind: str
    failed_at_ms: int
    started_at_ms: int | None
    duration_ms: int | None
    timeout_ms: int | None
    operator: str | None
    path: str | None
    hosts: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RootCause:
    code: str
    title: str
    confidence: float
    hosts: tuple[str, ...]
    known_issue: str | None
    explanation: str


@dataclass(frozen=True, slots=True)
class Alternative:
    code: str
    confidence: float


@dataclass(frozen=True, slots=True)
class EvidenceItem:
    type: str
    at_ms: int
    host: str
    role: str
    summary: str
    ref: str
    start_ms: int | None = None
    """What the line measured (a lock hold, a pause, a slow write), when it spans time: drawn as a span, not a point."""
    end_ms: int | None = None


class CoverageReason(StrEnum):
    """Why a source is listed under the verdict's coverage; its value is how the verdict says it (``why``)."""

    GUESSED_HOST = "host taken from a folder or a pod-like file name, not proved by the log"
    OUTSIDE_QUIET = "not in the write's pipeline; its last line comes before the write ended"
    STARTS_LATE = "log starts after the write began"
    ENDS_EARLY = "log ends before the write ended"
    NOT_READ = "log not read"
    """Followed by why (the file could not be opened)."""
    DAMAGED = "log damaged"
    """Followed by how (a compressed file cut off or corrupt, read up to the damage)."""
    NO_LOG = "no log from this DataNode of the write pipeline"
    NO_DATANODE_LOG = "no DataNode log in the input"
    NO_NAMENODE_LOG = "no NameNode log in the input"
    NO_TASKMANAGER_LOG = "no TaskManager log in the input"
    NO_STORE_LOG = "no access log of the object store in the input"

    @classmethod
    def read(cls, why: str | None) -> tuple[CoverageReason | str | None, str | None]:
        """``(reason, detail)`` of a ``why`` as the wire says it (``log not read: <detail>``); a reason this
        version does not know (a newer producer's) stays the text it is."""
        if why is None:
            return None, None
        for reason in cls:
            if why == reason:
                return reason, None
            if why.startswith(reason + ": "):
                return reason, why[len(reason) + 2:]
        return why, None


@dataclass(frozen=True, slots=True)
class SourceCoverage:
    host: str
    role: str
    reason: CoverageReason | str | None = None
    """Why the source is listed (``None``: covered, nothing to say); text when the wire gave a reason this version
    does not know."""
    pointed_by: str | None = None
    """For a DataNode of the write whose log is missing: what its neighbours' lines say of it (the suspect)."""
    detail: str | None = None
    """What the reason says more: why a log could not be read, how it was damaged."""

    @property
    def why(self) -> str | None:
        """The reason as the verdict says it (its ``coverage[].why``)."""
        if self.reason is None:
            return None
        return f"{self.reason}: {self.detail}" if self.detail is not None else str(self.reason)


@dataclass(frozen=True, slots=True)
class Recurrence:
    """Earlier failures of the same job with the same cause in this run (the seed's "every 10-30 minutes")."""

    count: int
    typical_interval_ms: int | None
    first_at_ms: int


@dataclass(frozen=True, slots=True)
class NextWindow:
    """When a periodic cause is next due on one host, and how that was derived (``expected_ms`` None: not derivable)."""

    host: str
    expected_ms: int | None
    earliest_ms: int | None
    latest_ms: int | None
    interval_ms: int | None
    last_ms: int | None
    """The latest occurrence seen on this host at ``as_of``."""
    basis: str


@dataclass(frozen=True, slots=True)
class Outlook:
    """Next expected risky windows for a periodic cause, predicted from what was logged up to ``as_of_ms``."""

    kind: str
    """``directory_scan`` or ``jvm_pause``."""
    as_of_ms: int
    windows: tuple[NextWindow, ...]


@dataclass(frozen=True, slots=True)
class WhatIf:
    """What one remediation line would have changed, replayed over the measured failures of the incident."""

    remediation: int
    """Index of the remediation line this figure quantifies."""
    setting: str
    value: str
    metric: str
    """``completed`` (failures that would have completed), ``restarts`` or ``overlapped`` (checkpoints hit)."""
    result: int
    baseline: int
    total: int
    text: str
    assumes: str


@dataclass(frozen=True, slots=True)
class Verdict:
    verdict_id: str
    cluster: str
    job_id: str | None
    checkpoint_id: int | None
    failure: Failure
    root_cause: RootCause
    alternatives: tuple[Alternative, ...]
    evidence: tuple[EvidenceItem, ...]
    remediation: tuple[Step, ...]
    covered: tuple[SourceCoverage, ...]
    missing: tuple[SourceCoverage, ...]
    decided_at_ms: int
    recurrence: Recurrence | None = None
    outlook: Outlook | None = None
    whatif: tuple[WhatIf, ...] = ()
    revision: int = 0
    """0 when first decided; each revision of the same failure (late evidence changed its cause) counts up."""
    revision_reason: str | None = None


def make_verdict_id(cluster: str, job_id: str | None, checkpoint_id: int | None, failed_at_ms: int) -> str:
    """Same failure, same id: a digest of what identifies the failure, never of arrival order or wall time."""
    key = f"{cluster}\x1f{job_id or '-'}\x1f{checkpoint_id if checkpoint_id is not None else '-'}\x1f{failed_at_ms}"
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]


def _iso_or_none(ts_ms: int | None) -> str | None:
    return None if ts_ms is None else iso_ms(ts_ms)


def parse_iso_ms(text: str) -> int:
    """Inverse of :func:`iso_ms` (``2020-01-02T17:18:53.337Z`` → epoch ms)."""
    parsed = datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
    return int(parsed.replace(microsecond=0).timestamp()) * 1000 + parsed.microsecond // 1000


def _parse_opt(text: str | None) -> int | None:
    return None if text is None else parse_iso_ms(text)


def verdict_to_dict(v: Verdict) -> dict[str, Any]:
    """The ``correlator.verdict/v1`` shape, fields in schema order (plus ``recurrence``, ``outlook`` and ``whatif``)."""
    f = v.failure
    rc = v.root_cause
    return {
        "schema": SCHEMA,
        "verdict_id": v.verdict_id,
        "cluster": v.cluster,
        "job_id": v.job_id,
        "checkpoint_id": v.checkpoint_id,
        "failure": {
            "kind": f.kind,
            "failed_at": iso_ms(f.failed_at_ms),
            "started_at": _iso_or_none(f.started_at_ms),
            "duration_ms": f.duration_ms,
            "timeout_ms": f.timeout_ms,
            "operator": f.operator,
            "path": f.path,
            "hosts": list(f.hosts),
        },
        "root_cause": {
            "code": rc.code,
            "title": rc.title,
            "confidence": rc.confidence,
            "hosts": list(rc.hosts),
            "known_issue": rc.known_issue,
            "explanation": rc.explanation,
        },
        "alternatives": [{"code": a.code, "confidence": a.confidence} for a in v.alternatives],
        "evidence": [
            {"type": e.type, "at": iso_ms(e.at_ms), "host": e.host, "role": e.role, "summary": e.summary, "ref": e.ref,
             "start": _iso_or_none(e.start_ms), "end": _iso_or_none(e.end_ms)}
            for e in v.evidence
        ],
        "remediation": [s.text for s in v.remediation],
        "remediation_settings": [{"setting": s.setting, "value": s.value} for s in v.remediation],
        "coverage": {
            "covered": [{"host": c.host, "role": c.role} | ({"why": c.why} if c.why else {}) for c in v.covered],
            "missing": [{"host": m.host, "role": m.role, "why": m.why}
                        | ({"pointed_by": m.pointed_by} if m.pointed_by else {}) for m in v.missing],
        },
        "decided_at": iso_ms(v.decided_at_ms),
        "recurrence": None
        if v.recurrence is None
        else {
            "count": v.recurrence.count,
            "typical_interval_ms": v.recurrence.typical_interval_ms,
            "first_at": iso_ms(v.recurrence.first_at_ms),
        },
        "outlook": None if v.outlook is None else _outlook_to_dict(v.outlook),
        "revision": v.revision,
        "revision_reason": v.revision_reason,
        "whatif": [{"remediation": w.remediation, "setting": w.setting, "value": w.value, "metric": w.metric,
                    "result": w.result, "baseline": w.baseline, "total": w.total, "text": w.text,
                    "assumes": w.assumes} for w in v.whatif],
    }


def _outlook_to_dict(o: Outlook) -> dict[str, Any]:
    return {
        "kind": o.kind,
        "as_of": iso_ms(o.as_of_ms),
        "windows": [{"host": w.host, "expected": _iso_or_none(w.expected_ms), "earliest": _iso_or_none(w.earliest_ms),
                     "latest": _iso_or_none(w.latest_ms), "interval_ms": w.interval_ms, "last": _iso_or_none(w.last_ms),
                     "basis": w.basis} for w in o.windows],
    }


def outlook_from_dict(d: dict[str, Any] | None) -> Outlook | None:
    if d is None:
        return None
    return Outlook(d["kind"], parse_iso_ms(d["as_of"]), tuple(
        NextWindow(w["host"], _parse_opt(w.get("expected")), _parse_opt(w.get("earliest")), _parse_opt(w.get("latest")),
                   w.get("interval_ms"), _parse_opt(w.get("last")), w.get("basis", ""))
        for w in d.get("windows") or ()))


def _steps(d: dict[str, Any]) -> tuple[Step, ...]:
    """The remediation lines with the setting each changes (a record without ``remediation_settings``: none)."""
    texts = d.get("remediation") or ()
    settings = list(d.get("remediation_settings") or ())
    settings += [None] * (len(texts) - len(settings))
    return tuple(Step(text, (s or {}).get("setting"), (s or {}).get("value")) for text, s in zip(texts, settings))


def _coverage(d: dict[str, Any], *, pointed: bool) -> SourceCoverage:
    """One source of the coverage; only a missing one may be pointed at."""
    reason, detail = CoverageReason.read(d.get("why"))
    return SourceCoverage(d["host"], d["role"], reason, d.get("pointed_by") if pointed else None, detail)


def verdict_from_dict(d: dict[str, Any]) -> Verdict:
    """Inverse of :func:`verdict_to_dict`; unknown keys are ignored (forward compatibility)."""
    if d.get("schema") != SCHEMA:
        raise ValueError(f"not a {SCHEMA} object: schema={d.get('schema')!r}")
    f = d["failure"]
    rc = d["root_cause"]
    cov = d.get("coverage") or {}
    rec = d.get("recurrence")
    return Verdict(
        verdict_id=d["verdict_id"],
        cluster=d["cluster"],
        job_id=d.get("job_id"),
        checkpoint_id=d.get("checkpoint_id"),
        failure=Failure(
            kind=f["kind"],
            failed_at_ms=parse_iso_ms(f["failed_at"]),
            started_at_ms=_parse_opt(f.get("started_at")),
            duration_ms=f.get("duration_ms"),
            timeout_ms=f.get("timeout_ms"),
            operator=f.get("operator"),
            path=f.get("path"),
            hosts=tuple(f.get("hosts") or ()),
        ),
        root_cause=RootCause(
            code=rc["code"],
            title=rc["title"],
            confidence=float(rc["confidence"]),
            hosts=tuple(rc.get("hosts") or ()),
            known_issue=rc.get("known_issue"),
            explanation=rc.get("explanation", ""),
        ),
        alternatives=tuple(Alternative(a["code"], float(a["confidence"])) for a in d.get("alternatives") or ()),
        evidence=tuple(
            EvidenceItem(e["type"], parse_iso_ms(e["at"]), e["host"], e["role"], e["summary"], e.get("ref", ""),
                         _parse_opt(e.get("start")), _parse_opt(e.get("end")))
            for e in d.get("evidence") or ()
        ),
        remediation=_steps(d),
        covered=tuple(_coverage(c, pointed=False) for c in cov.get("covered") or ()),
        missing=tuple(_coverage(m, pointed=True) for m in cov.get("missing") or ()),
        decided_at_ms=parse_iso_ms(d["decided_at"]),
        recurrence=None
        if rec is None
        else Recurrence(rec["count"], rec.get("typical_interval_ms"), parse_iso_ms(rec["first_at"])),
        outlook=outlook_from_dict(d.get("outlook")),
        whatif=tuple(WhatIf(int(w["remediation"]), w["setting"], w["value"], w["metric"], int(w["result"]),
                            int(w["baseline"]), int(w["total"]), w["text"], w.get("assumes", ""))
                     for w in d.get("whatif") or ()),
        revision=int(d.get("revision") or 0),
        revision_reason=d.get("revision_reason"),
    )
