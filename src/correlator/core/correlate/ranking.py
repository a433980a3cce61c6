"""Ranking: score candidate root causes of one stuck checkpoint write, causes before symptoms.

A candidate's score grows with how much of the stuck write its interval covers, how large it is against the
checkpoint timeout, and how relevant its host is (a DataNode of the write's pipeline beats one that merely overlapped
in time). Evidence that is better explained by another cause on the same host (slow writes under a scanner-held lock,
a lock held across a GC pause) is demoted to a symptom.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from correlator.core.correlate.evidence import Interval, is_write_path_holder, overlap_ms, touches
from correlator.core.explain.causes import Code
from correlator.core.explain.registry import BASE, CAUSES, CODE_OF_KIND, POINT_KINDS, ROOT_CODES, STATED_KINDS
from correlator.core.explain.kinds import EvidenceKind

STATED_TAIL_MS = 60_000
"""How long after the stuck write a refusal that states its cause still counts: the failure's own cause chain (where
a client logs HDFS's refusal) may come long after the checkpoint's timeout."""
SCANNER_KINDS = (EvidenceKind.SCANNER_LOCK, EvidenceKind.SCAN_STATS, EvidenceKind.SCAN_RECONCILE)
DN_SYMPTOM_KINDS = (EvidenceKind.SLOW_DISK, EvidenceKind.SLOW_PIPELINE, EvidenceKind.DN_STALL,
                    EvidenceKind.SLOW_COMMANDS, EvidenceKind.BAD_LINK)
SYMPTOM_FACTOR = 0.35
MIN_SCORE = 0.35
CONTRIBUTING_SCORE = 0.1
"""A storage stall this strong is named beside a cause that outranks it (the time budget's contributing factor)."""


@dataclass(frozen=True, slots=True)
class Window:
    """The stuck write: from the trigger (or write start) to the write's end (or the failure)."""

    start_ms: int
    end_ms: int
    timeout_ms: int | None

    @property
    def duration_ms(self) -> int:
        return max(1, self.end_ms - self.start_ms)


@dataclass(frozen=True, slots=True)
class Scored:
    interval: Interval
    score: float
    symptom_of: Code | None


@dataclass(frozen=True, slots=True)
class Candidate:
    code: Code
    score: float
    hosts: tuple[str, ...]
    scored: tuple[Scored, ...]


def relevance(iv: Interval, pipeline: frozenset[str], tm_hosts: frozenset[str]) -> float:
    if iv.role == "datanode":
        if not pipeline:
            return 0.6
        return 1.0 if iv.host in pipeline else 0.25
    if iv.role == "namenode":
        return 0.9
    if not tm_hosts:
        return 0.6
    return 1.0 if iv.host in tm_hosts else 0.2


def strength(iv: Interval, window: Window, skew_ms: int) -> float:
    if iv.kind in STATED_KINDS:
        return 1.0
    if iv.kind in POINT_KINDS:
        return 0.5
    covered = min(1.0, overlap_ms(iv.start_ms, iv.end_ms, window.start_ms, window.end_ms, skew_ms)
                  / window.duration_ms)
    reference = window.timeout_ms or window.duration_ms
    magnitude = min(1.0, iv.magnitude_ms / max(1, reference))
    return 0.5 * covered + 0.5 * magnitude


def relevant(iv: Interval, window: Window, skew_ms: int, tail_ms: int) -> bool:
    """Evidence that touches the stuck write (points may trail it a little: reconcile follows the compare)."""
    end = window.end_ms + (STATED_TAIL_MS if iv.kind in STATED_KINDS else tail_ms if iv.kind in POINT_KINDS else 0)
    if iv.kind not in POINT_KINDS and overlap_ms(iv.start_ms, iv.end_ms, window.start_ms, end, skew_ms) <= 0:
        return False
    return touches(iv.start_ms, iv.end_ms, window.start_ms, end, skew_ms)


def _explained_by(iv: Interval, host_kinds: Mapping[EvidenceKind, list[Interval]]) -> Code | None:
    """The cause that explains ``iv`` among the intervals of its host (``host_kinds``: them by kind), if any. The
    kinds looked for are never ``iv``'s own, so ``iv`` itself is never taken for its cause."""
    if iv.kind in DN_SYMPTOM_KINDS:
        if any(host_kinds.get(kind) for kind in SCANNER_KINDS):
            return Code.HDFS_DIRECTORY_SCAN
        if any(_mostly_inside(iv, o) for o in host_kinds.get(EvidenceKind.LOCK_HELD, ())):
            return Code.DATANODE_LOCK_HELD
    if iv.kind == EvidenceKind.LOCK_HELD and is_write_path_holder(getattr(iv.source, "holder", "")):
        if host_kinds.get(EvidenceKind.SLOW_DISK):
            return Code.HDFS_SLOW_DISK
    if iv.kind in DN_SYMPTOM_KINDS + (EvidenceKind.SCANNER_LOCK, EvidenceKind.LOCK_HELD):
        for o in host_kinds.get(EvidenceKind.DN_PAUSE, ()):
            if overlap_ms(o.start_ms, o.end_ms, iv.start_ms, iv.end_ms) * 2 >= max(1, iv.duration_ms):
                return Code.DATANODE_JVM_PAUSE
    return None


def _mostly_inside(iv: Interval, cause: Interval) -> bool:
    return overlap_ms(iv.start_ms, iv.end_ms, cause.start_ms, cause.end_ms) * 2 >= max(1, iv.duration_ms)


def rank(
    intervals: list[Interval],
    window: Window,
    *,
    pipeline: frozenset[str],
    tm_hosts: frozenset[str],
    skew_ms: int,
    tail_ms: int = 10_000,
) -> list[Candidate]:
    """Candidates best first; ties broken by code so the order is deterministic."""
    pool = [iv for iv in intervals if iv.kind in CODE_OF_KIND and relevant(iv, window, skew_ms, tail_ms)]
    by_code: dict[Code, list[Scored]] = {}
    by_host: dict[str, dict[EvidenceKind, list[Interval]]] = {}
    for iv in pool:  # once per case, so a dense window stays linear: each interval asks only its host's intervals
        by_host.setdefault(iv.host, {}).setdefault(iv.kind, []).append(iv)
    for iv in pool:
        cause = _explained_by(iv, by_host[iv.host])
        score = BASE[iv.kind] * relevance(iv, pipeline, tm_hosts) * (0.3 + 0.7 * strength(iv, window, skew_ms))
        if cause is not None and cause != CODE_OF_KIND[iv.kind]:
            score *= SYMPTOM_FACTOR
        by_code.setdefault(CODE_OF_KIND[iv.kind], []).append(Scored(iv, score, cause))
    candidates = [_candidate(code, items) for code, items in by_code.items()]
    present = {c.code for c in candidates if c.score >= MIN_SCORE}
    candidates = [Candidate(c.code, round(c.score * SYMPTOM_FACTOR, 2), c.hosts, c.scored)
                  if CAUSES[c.code].explained_by & present else c for c in candidates]
    best_root = max((c.score for c in candidates if c.code in ROOT_CODES), default=0.0)
    if best_root >= 0.5:
        candidates = [
            c if c.code in ROOT_CODES else Candidate(c.code, round(c.score * 0.5, 2), c.hosts, c.scored)
            for c in candidates
        ]
    return sorted(candidates, key=lambda c: (-c.score, c.code))


STORAGE_ROLES = frozenset({"datanode", "namenode"})


def _candidate(code: Code, items: list[Scored]) -> Candidate:
    items.sort(key=lambda s: (-s.score, s.interval.start_ms, s.interval.host))
    top = items[0].score
    support = sum(1 for s in items[1:] if s.score >= 0.25 * top)
    score = min(0.99, top + min(0.08, 0.02 * support))
    strong = [s.interval for s in items if s.score >= 0.5 * top]
    daemons = [iv for iv in strong if iv.role in STORAGE_ROLES]
    role = CAUSES[code].on_role
    own = [iv for iv in daemons if iv.role == role]
    hosts = sorted({iv.host for iv in own or daemons or strong})  # a Flink host that logged the cause is not where it is
    return Candidate(code, round(score, 2), tuple(hosts), tuple(items))
