"""What one decision knows: the engine's facts about a case, already cut at the decision time, and the stuck write's
window they are judged over."""

from __future__ import annotations

from dataclasses import dataclass, field

from correlator.core.correlate.cases import CaseSummary
from correlator.core.correlate.evidence import Interval, interval_of
from correlator.core.correlate.facts import Placement
from correlator.core.correlate.ranking import MIN_SCORE, Window
from correlator.core.correlate.watermarks import SourceClock
from correlator.core.events import CheckpointCompleted, Event

DEFAULT_WINDOW_MS = 60_000


@dataclass(frozen=True, slots=True)
class Context:
    """Everything the engine knows that one decision needs, already cut at the decision time."""

    cluster: str
    job_id: str | None
    checkpoint_id: int | None
    summary: CaseSummary
    evidence: tuple[Event, ...]
    ip_hosts: dict[str, str]
    """DataNode ``ip:port`` (or bare IP from older lines) → host, as the DataNodes' own lines told it."""
    sources: dict[tuple[str, str], SourceClock]
    versions: dict[tuple[str, str], str]
    decided_at_ms: int
    skew_ms: int
    min_confidence: float = MIN_SCORE
    max_evidence: int = 12
    guessed: frozenset[tuple[str, str]] = frozenset()
    """Sources whose host was guessed (a folder's or a pod-like file name): coverage says so."""
    unread: dict[tuple[str, str], str] = field(default_factory=dict)
    """Sources whose log could not be read to its end (damaged, cut off, not opened), and why."""
    completions: tuple[CheckpointCompleted, ...] = ()
    """The job's last completed checkpoints up to the failure: whether its state outgrew the timeout."""
    settings: dict[str, int] = field(default_factory=dict)
    """The cluster's Flink duration settings (key → ms) as its JobManager logged them at start."""
    checkpoint_dir: str | None = None
    """Where the cluster's checkpoints go, as its JobManager logged it at start (``s3://…``, ``hdfs://…``)."""
    placements: dict[tuple[str, int], Placement] = field(default_factory=dict)
    """(job vertex, subtask) → where it ran, from the JobManager's deployments: what a subtask span names."""
    measured: tuple[Interval, ...] | None = None
    """The intervals ``evidence`` measures (``interval_of`` of each that measures one), in order, as the engine keeps
    them; ``None``: computed from ``evidence`` (see :func:`measured`)."""


def measured(ctx: Context) -> tuple[Interval, ...]:
    """The intervals the case's evidence measures."""
    if ctx.measured is not None:
        return ctx.measured
    return tuple(iv for iv in map(interval_of, ctx.evidence) if iv is not None)


def window_of(s: CaseSummary) -> Window:
    end = s.write_end_ms if s.write_end_ms is not None else s.failed_at_ms
    if s.started_at_ms is not None:
        start = s.started_at_ms
    else:
        start = s.failed_at_ms - (s.timeout_ms or DEFAULT_WINDOW_MS)
    return Window(min(start, end), max(start, end), s.timeout_ms)


def datanode_version(ctx: Context, host: str) -> str | None:
    """A DataNode's version from its banner; else the NameNode's (a DataNode started without one prints none)."""
    own = ctx.versions.get((host, "datanode"))
    if own is not None:
        return own
    return next((v for (h, r), v in sorted(ctx.versions.items()) if r == "namenode"), None)


def sole_taskmanager(ctx: Context) -> tuple[str, ...]:
    """When only the JobManager logged the failure, the one TaskManager of the cluster (if there is one)."""
    tms = sorted({h for h, r in ctx.sources if r == "taskmanager"})
    return tuple(tms) if len(tms) == 1 else ()
