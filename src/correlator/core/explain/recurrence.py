"""Recurrence: failures of one job with the same cause, linked within a run (count and typical interval)."""

from __future__ import annotations

from statistics import median
from typing import Any

from correlator.core.explain.verdict import Recurrence

HISTORY_LIMIT = 64


class History:
    """Failure times per (cluster, job, root-cause code), oldest first, bounded per key."""

    def __init__(self) -> None:
        self._times: dict[tuple[str, str, str], list[int]] = {}

    def record(self, cluster: str, job_id: str | None, code: str, failed_at_ms: int) -> Recurrence | None:
        """Add one failure; return its recurrence when it is not the first of its kind."""
        times = self._times.setdefault((cluster, job_id or "", code), [])
        if failed_at_ms not in times:
            times.append(failed_at_ms)
            times.sort()
            del times[:-HISTORY_LIMIT]
        upto = [t for t in times if t <= failed_at_ms]
        if len(upto) < 2:
            return None
        gaps = [b - a for a, b in zip(upto, upto[1:], strict=False)]
        return Recurrence(count=len(upto), typical_interval_ms=int(median(gaps)), first_at_ms=upto[0])

    def evict(self, horizons: dict[str, int]) -> None:
        """History outlives evidence retention on purpose (failures every 10-30 min span hours); only the per-key
        bound applies, so nothing to do here."""

    def snapshot(self) -> list[list[Any]]:
        return [[list(k), list(v)] for k, v in sorted(self._times.items())]

    @classmethod
    def restore(cls, data: list[list[Any]]) -> History:
        h = cls()
        for key, times in data:
            h._times[(key[0], key[1], key[2])] = list(times)
        return h
