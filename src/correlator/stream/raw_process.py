"""Raw ingest in a process of its own, so the firehose and the Faust app do not share one interpreter lock.

As a thread beside Faust, the ingest loop held the lock about half the time and the app (its events consumer,
timers, web pages) the other half: each waited for the other on a machine with cores to spare. The child runs the
same :class:`~correlator.stream.raw_ingest.RawIngest`; the parent keeps a :class:`RawIngestProcess` with the face the
app reads (lags, processed offsets, health) and applies the child's metric updates to its own registry::

    parent (Faust app)                                  child (spawned; killed with its parent)
      live flag, restart_idle, stop      ── pipe ──>      RawIngest loop
      status and metric updates          <── pipe ──      every STATUS_EVERY_S

Exactly once is the child's business alone: its transactions commit events with the raw offsets, as before.
"""

from __future__ import annotations

import ctypes
import logging
import multiprocessing
import os
import signal
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any

from correlator.adapters import logs
from correlator.adapters.scanners import fastest_scanner
from correlator.config import Settings
from correlator.core.ingest.ingest import IngestConfig
from correlator.stream.metrics import UnknownSources, WorkerMetrics
from correlator.stream.raw_ingest import RawIngest

log = logging.getLogger(__name__)
STATUS_EVERY_S = 0.25
STOP_GRACE_S = 30.0
_PR_SET_PDEATHSIG = 1


@dataclass
class RawIngestProcess:
    """The parent's side: starts the child, mirrors its status, forwards what the app decides."""

    settings: Settings
    config: IngestConfig
    metrics: WorkerMetrics
    tick_s: float = 1.0
    lags: dict[tuple[str, int], int] = field(default_factory=dict)
    processed: dict[tuple[str, int], int] = field(default_factory=dict)
    assigned: set[tuple[str, int]] = field(default_factory=set)
    assignment_known: bool = False
    failures: int = 0
    failed: str | None = None
    last_error: str | None = None
    running: bool = False
    _live: bool = False
    _process: Any = None
    _conn: Connection | None = None
    _reader: threading.Thread | None = None
    _send_lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self) -> None:
        context = multiprocessing.get_context("spawn")  # never fork a process that runs librdkafka and asyncio
        parent, child = context.Pipe()
        self._conn = parent
        self._process = context.Process(
            target=_child_main, name="correlator-raw-ingest", daemon=True,
            args=(self.settings, self.config, self.tick_s, child),
        )
        self._process.start()
        child.close()
        self._reader = threading.Thread(target=self._read, name="raw-ingest-status", daemon=True)
        self._reader.start()

    def stop(self, timeout_s: float = STOP_GRACE_S) -> None:
        process = self._process
        if process is None or not process.is_alive():
            return
        self._send(("stop", None))
        process.join(timeout_s)
        if process.is_alive():
            log.error("raw ingest process did not stop within %.0f s; killing it", timeout_s)
            process.kill()
            process.join(5)
        if self._reader is not None:
            self._reader.join(5)

    @property
    def healthy(self) -> bool:
        return self.running and self._process is not None and self._process.is_alive()

    @property
    def live(self) -> bool:
        return self._live

    @live.setter
    def live(self, value: bool) -> None:
        if value != self._live:
            self._live = value
            self._send(("live", value))

    def restart_idle(self, now_ms: int) -> None:
        self._send(("restart_idle", now_ms))

    def _send(self, command: tuple[str, Any]) -> None:
        if self._conn is None:
            return
        try:
            with self._send_lock:
                self._conn.send(command)
        except (OSError, ValueError):  # the child is gone; the reader reports it
            pass

    def _read(self) -> None:
        assert self._conn is not None
        while True:
            try:
                status = self._conn.recv()
            except (EOFError, OSError):
                break
            self._apply(status)
        self.running = False
        if self._process is not None:
            self._process.join(5)  # the pipe closes a moment before the exit status is known
        code = self._process.exitcode if self._process is not None else None
        if self.failed is None and code not in (0, None):
            self.failed = f"raw ingest process exited with code {code}"
            log.error("%s", self.failed)

    def _apply(self, status: dict[str, Any]) -> None:
        self.lags = status["lags"]
        self.processed = status["processed"]
        self.assigned = status["assigned"]
        self.assignment_known = status["assignment_known"]
        self.failures = status["failures"]
        self.last_error = status["last_error"]
        self.running = status["running"]
        try:
            apply_updates(self.metrics, status["metrics"])
        except Exception:  # a metric's labels changed under the child: the status itself still counts
            log.exception("raw ingest metrics could not be applied")
        if status["failed"] is not None:
            self.failed = status["failed"]


# --- the child ---------------------------------------------------------------------------------------------------


def _child_main(settings: Settings, config: IngestConfig, tick_s: float, conn: Connection) -> None:
    _die_with_parent()
    for signum in (signal.SIGINT, signal.SIGTERM):  # the parent decides when the child stops (Ctrl-C reaches both)
        signal.signal(signum, signal.SIG_IGN)
    logs.configure(settings.log_level)
    updates = MetricUpdates()
    raw = RawIngest(settings, config, fastest_scanner(), updates, _now_ms, tick_s=tick_s,  # type: ignore[arg-type]
                    unknown=UnknownSources(updates))  # type: ignore[arg-type]
    parent = os.getppid()
    raw.start()
    try:
        while os.getppid() == parent:
            if conn.poll(STATUS_EVERY_S):
                command, argument = conn.recv()
                if command == "stop":
                    break
                if command == "live":
                    raw.live = bool(argument)
                elif command == "restart_idle":
                    raw.restart_idle(int(argument))
            conn.send(_status(raw, updates))
    except (EOFError, OSError):  # the parent is gone
        pass
    finally:
        raw.stop()
        try:
            conn.send(_status(raw, updates))
        except OSError:
            pass


def _status(raw: Any, updates: MetricUpdates) -> dict[str, Any]:
    return {
        "lags": dict(raw.lags), "processed": dict(raw.processed), "assigned": set(raw.assigned),
        "assignment_known": raw.assignment_known, "failures": raw.failures, "failed": raw.failed,
        "last_error": raw.last_error, "running": raw.healthy, "metrics": updates.drain(),
    }


def _die_with_parent() -> None:
    """A worker killed with -9 must not leave its ingest running: two would fence each other's transactions.
    (Linux sends the signal when the *thread* that started the child ends: the app starts it from its main thread.)"""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):  # not Linux: the loop's parent check still ends the child within a poll
        pass


def _now_ms() -> int:
    return int(time.time() * 1000)


# --- metrics across the pipe ---------------------------------------------------------------------------------------

Updates = dict[str, Any]
_METRIC_NAMES = frozenset(name for name in vars(WorkerMetrics()) if name != "registry")


class MetricUpdates:
    """Stands in for :class:`WorkerMetrics` in the child: records what the loop does to a metric (by attribute
    name and labels) for the parent to apply to the real one."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._inc: Counter[tuple[str, tuple[str, ...]]] = Counter()
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
