"""Where a stage's batch time goes, charged to named steps (``correlator_ingest_seconds``,
``correlator_correlate_seconds``)."""

from __future__ import annotations

import time
from collections import defaultdict


class Steps:
    """Where one batch's time goes: each ``lap`` charges the time since the last one to a step. Added to the metric
    once per batch, so a stage pays a few clock reads, not a metric update per record."""

    __slots__ = ("spent", "_at")

    def __init__(self) -> None:
        self.spent: defaultdict[str, float] = defaultdict(float)
        self._at = time.perf_counter()

    def lap(self, step: str) -> None:
        now = time.perf_counter()
        self.spent[step] += now - self._at
        self._at = now
