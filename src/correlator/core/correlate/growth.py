"""State growth as a cause: the completed checkpoints before a failure show the state and the upload growing together.

A checkpoint that expires while every HDFS log stays quiet is not explained by storage; when the job's own completed
checkpoints show its state growing steadily and their duration rising with it toward the timeout, the state outgrew
the timeout. Both rises must be steady by the early warning's test (:mod:`correlator.core.explain.risk`), so noise
never makes this cause; storage evidence outranks it, so a real stall is never hidden behind it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from correlator.core.correlate.packing import pack, unpack
from correlator.core.events import CheckpointCompleted
from correlator.core.explain.risk import GROWTH, MAX_POINTS, MIN_POINTS, Z_RAISE
from correlator.core.explain.trend import theil_sen

NEAR_TIMEOUT = 0.5
"""The fitted duration at the failure must have come at least this close to the timeout."""


@dataclass(frozen=True, slots=True)
class Growth:
    first: CheckpointCompleted
    last: CheckpointCompleted
    points: int
    size_from_bytes: int
    size_to_bytes: int
    duration_from_ms: int
    duration_to_ms: int
    """Fitted at the first and the last completion: the trend's values, not single noisy checkpoints."""
    expected_ms: int = 0
    expected_bytes: int = 0
    """The trend carried on to the failed checkpoint's start: what its own growth alone predicts for it."""

    @property
    def factor(self) -> float:
        return self.size_to_bytes / max(1, self.size_from_bytes)


def state_growth(completions: tuple[CheckpointCompleted, ...], timeout_ms: int | None,
                 at_ms: int | None = None) -> Growth | None:
    """The growth the job's completed checkpoints show up to its failure, when both rises are steady; ``at_ms``:
    the failed checkpoint's start, to which the trend is carried on (no further than the series reaches back)."""
    points = [c for c in completions if c.size_bytes is not None and c.duration_ms is not None][-MAX_POINTS:]
    if len(points) < MIN_POINTS or points[-1].ts_ms <= points[0].ts_ms:
        return None
    start = points[0].ts_ms
    xs = [c.ts_ms - start for c in points]
    sizes = theil_sen(xs, [float(c.size_bytes or 0) for c in points])
    durations = theil_sen(xs, [float(c.duration_ms or 0) for c in points])
    size_from, size_to = max(1, int(sizes.at(0))), max(1, int(sizes.at(xs[-1])))
    duration_to = int(durations.at(xs[-1]))
    if sizes.z < Z_RAISE or size_to < GROWTH * size_from or durations.z < Z_RAISE:
        return None
    if timeout_ms is not None and duration_to < NEAR_TIMEOUT * timeout_ms:
        return None
    ahead = xs[-1] + min(max(0, (at_ms or points[-1].ts_ms) - points[-1].ts_ms), xs[-1])
    return Growth(points[0], points[-1], len(points), size_from, size_to, max(0, int(durations.at(0))), duration_to,
                  max(duration_to, int(durations.at(ahead))), max(size_to, int(sizes.at(ahead))))


class Completions:
    """The last completed checkpoints of each job, kept for the failures that may follow them."""

    def __init__(self) -> None:
        self._by_job: dict[tuple[str, str], list[CheckpointCompleted]] = {}

    def observe(self, event: CheckpointCompleted) -> None:
        kept = self._by_job.setdefault((event.cluster, event.job_id), [])
        if kept and event.checkpoint_id <= kept[-1].checkpoint_id:
            return
        kept.append(event)
        del kept[:-MAX_POINTS]

    def before(self, cluster: str, job_id: str | None, ts_ms: int) -> tuple[CheckpointCompleted, ...]:
        return tuple(c for c in self._by_job.get((cluster, job_id or ""), ()) if c.ts_ms <= ts_ms)

    def snapshot(self) -> list[list[Any]]:
        return [pack(c) for kept in self._by_job.values() for c in kept]

    @classmethod
    def restore(cls, data: list[list[Any]]) -> Completions:
        out = cls()
        for d in data:
            event = unpack(d)
            if isinstance(event, CheckpointCompleted):
                out.observe(event)
        return out
