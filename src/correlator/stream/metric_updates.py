"""Metrics across the pipe: the raw-ingest child records what its loop does to each metric, and the parent applies
it to the real :class:`WorkerMetrics` (a Prometheus registry lives in one process only)."""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from correlator.stream.metrics import WorkerMetrics

Updates = dict[str, Any]
_METRIC_NAMES = frozenset(name for name in vars(WorkerMetrics()) if name != "registry")


class MetricUpdates:
    """Stands in for :class:`WorkerMetrics` in the child: records what the loop does to a metric (by attribute
    name and labels) for the parent to apply to the real one."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._inc: defaultdict[tuple[str, tuple[str, ...]], float] = defaultdict(float)
        self._set: dict[tuple[str, tuple[str, ...]], float] = {}
        self._observed: list[tuple[str, tuple[str, ...], float]] = []

    def __getattr__(self, name: str) -> _Metric:
        if name not in _METRIC_NAMES:
            raise AttributeError(f"WorkerMetrics has no metric {name!r}")
        return _Metric(self, name, ())

    def drain(self) -> Updates:
        with self._lock:
            out = {"inc": dict(self._inc), "set": dict(self._set), "observe": list(self._observed)}
            self._inc.clear()
            self._set.clear()
            self._observed.clear()
        return out


@dataclass(frozen=True, slots=True)
class _Metric:
    updates: MetricUpdates
    name: str
    labelled: tuple[str, ...]

    def labels(self, *values: str) -> _Metric:
        return _Metric(self.updates, self.name, tuple(values))

    def inc(self, amount: float = 1) -> None:
        with self.updates._lock:
            self.updates._inc[(self.name, self.labelled)] += amount

    def set(self, value: float) -> None:
        with self.updates._lock:
            self.updates._set[(self.name, self.labelled)] = value

    def observe(self, value: float) -> None:
        with self.updates._lock:
            self.updates._observed.append((self.name, self.labelled, value))

    @contextmanager
    def time(self) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.observe(time.perf_counter() - start)


def apply_updates(metrics: WorkerMetrics, updates: Updates) -> None:
    def metric(name: str, labels: tuple[str, ...]) -> Any:
        found = getattr(metrics, name)
        return found.labels(*labels) if labels else found

    for (name, labels), amount in updates["inc"].items():
        metric(name, labels).inc(amount)
    for (name, labels), value in updates["set"].items():
        metric(name, labels).set(value)
    for name, labels, value in updates["observe"]:
        metric(name, labels).observe(value)
