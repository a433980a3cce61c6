"""Raw ingest in a process of its own, so the firehose and the Faust app do not share one interpreter lock.

A thread beside Faust would share the lock with the app (its events consumer, timers, web pages): each would wait
for the other on a machine with cores to spare. Each child runs the same
:class:`~correlator.stream.raw_ingest.RawIngest`; ``settings.raw_processes`` of them are members of the raw consumer
group, as the loops of several workers would be. The parent keeps a :class:`RawIngestProcess` per child and
:class:`RawIngestProcesses`, the face the app reads (lags, processed offsets, health, combined), and applies the
children's metric updates to its own registry::

    parent (Faust app)                                  children (spawned; killed with their parent)
      live flag, restart_idle, stop      ── pipe ──>      RawIngest loop, one per child
      status and metric updates          <── pipe ──      every STATUS_EVERY_S

Exactly once is each child's business alone: its transactions commit events with the raw offsets, as before.
"""

from __future__ import annotations

import ctypes
import gc
import logging
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from multiprocessing.connection import Connection
from typing import Any

from correlator.adapters import logs
from correlator.adapters.scanners import fastest_scanner
from correlator.config import Settings
from correlator.core.ingest.ingest import IngestConfig
from correlator.stream.metric_updates import MetricUpdates, Updates, apply_updates
from correlator.stream.metrics import UnknownSources, WorkerMetrics
from correlator.stream.raw_ingest import RawIngest, instance_name

log = logging.getLogger(__name__)
STATUS_EVERY_S = 0.25
STOP_GRACE_S = 30.0
RESPAWNS = 3
RESPAWN_WINDOW_S = 600.0
"""A child that dies without a word (killed, out of memory, a crash in native code) is started again in place, at most
``RESPAWNS`` times in ``RESPAWN_WINDOW_S``: its transactions fence the dead one's and its partitions come back after
the group's session timeout. One that keeps dying, or that gave up itself (its stage failed past its retries), stops
the worker as before."""
_PR_SET_PDEATHSIG = 1


@dataclass(frozen=True, slots=True)
class RawIngestStatus:
    """What the app reads of raw ingest (lags, processed offsets, health): sent by each child every
    ``STATUS_EVERY_S``, and combined over the children into the stage's own."""

    lags: dict[tuple[str, int], int] = field(default_factory=dict)
    processed: dict[tuple[str, int], int] = field(default_factory=dict)
    """The last raw offset committed per assigned partition (what the liveness probe compares with the ends)."""
    assigned: frozenset[tuple[str, int]] = frozenset()
    assignment_known: bool = False
    """Every consumer got its (possibly empty) assignment since its loop (re)started."""
    failures: int = 0
    failed: str | None = None
    last_error: str | None = None
    running: bool = False

    @classmethod
    def of(cls, raw: RawIngest) -> RawIngestStatus:
        return cls(dict(raw.lags), dict(raw.processed), frozenset(raw.assigned), raw.assignment_known, raw.failures,
                   raw.failed, raw.last_error, raw.healthy)

    @classmethod
    def combined(cls, parts: list[RawIngestStatus]) -> RawIngestStatus:
        """The children share the raw consumer group: their partitions are disjoint, so the union is the stage's."""
        return cls(
            {tp: lag for part in parts for tp, lag in part.lags.items()},
            {tp: offset for part in parts for tp, offset in part.processed.items()},
            frozenset().union(*(part.assigned for part in parts)),
            bool(parts) and all(part.assignment_known for part in parts),
            sum(part.failures for part in parts),
            next((part.failed for part in parts if part.failed is not None), None),
            next((part.last_error for part in parts if part.last_error is not None), None),
            bool(parts) and all(part.running for part in parts),
        )


@dataclass
class RawIngestProcesses:
    """The worker's raw ingest: ``settings.raw_processes`` children, members of one raw consumer group (each with
    its own transactions), seen by the app as one stage. More than one uses more cores for the firehose."""

    settings: Settings
    config: IngestConfig
    metrics: WorkerMetrics
    tick_s: float = 1.0
    children: list[RawIngestProcess] = field(init=False)
    _go_lock: threading.Lock = field(init=False, default_factory=threading.Lock)
    _went: bool = field(init=False, default=False)

    def __post_init__(self) -> None:
        self.children = [RawIngestProcess(self.settings, self.config, self.metrics, self.tick_s, i, self._ready)
                         for i in range(self.settings.raw_processes)]

    def start(self) -> None:
        for child in self.children:
            child.start()

    def _ready(self) -> None:
        """The children join the raw group together, once all are ready: one joining seconds after another (its
        interpreter still starting) would take partitions from the first in a rebalance, its batches half read."""
        with self._go_lock:
            if self._went or not all(child.ready for child in self.children):
                return
            self._went = True
        for child in self.children:
            child.go()

    def stop(self, timeout_s: float = STOP_GRACE_S) -> None:
        """All are asked at once: one leaving the group alone would hand its partitions to the others first."""
        for child in self.children:
            child.request_stop()
        deadline = time.monotonic() + timeout_s
        for child in self.children:
            child.stop(max(0.0, deadline - time.monotonic()))

    @property
    def status(self) -> RawIngestStatus:
        return RawIngestStatus.combined([child.status for child in self.children])

    @property
    def failed(self) -> str | None:
        return self.status.failed

    @property
    def healthy(self) -> bool:
        return bool(self.children) and all(child.healthy for child in self.children)

    @property
    def live(self) -> bool:
        return all(child.live for child in self.children)

    @live.setter
    def live(self, value: bool) -> None:
        for child in self.children:
            child.live = value

    def restart_idle(self, now_ms: int) -> None:
        for child in self.children:
            child.restart_idle(now_ms)


@dataclass
class RawIngestProcess:
    """The parent's side of one child: starts it, keeps its last status, forwards what the app decides."""

    settings: Settings
    config: IngestConfig
    metrics: WorkerMetrics
    tick_s: float = 1.0
    index: int = 0
    """Which child of the worker: it names the child's transactions (``instance_name``)."""
    on_ready: Callable[[], None] | None = None
    """Called (from the status thread) once the child has started and waits for ``go`` to join the raw group."""
    ready: bool = False
    status: RawIngestStatus = field(default_factory=RawIngestStatus)
    """The child's last word; once it is gone, also how it died (``failed``)."""
    _live: bool = False
    _process: Any = None
    _conn: Connection | None = None
    _reader: threading.Thread | None = None
    _send_lock: threading.Lock = field(default_factory=threading.Lock)
    _stopping: bool = False
    _respawns: list[float] = field(default_factory=list)
    """When the child was restarted after dying unannounced (at most ``RESPAWNS`` within ``RESPAWN_WINDOW_S``)."""
    _go_when_ready: bool = False

    def start(self) -> None:
        context = multiprocessing.get_context("spawn")  # never fork a process that runs librdkafka and asyncio
        parent, child = context.Pipe()
        self._conn = parent
        self._process = context.Process(
            target=_child_main, name=f"correlator-raw-ingest-{self.index}", daemon=True,
            args=(self.settings, self.config, self.tick_s, self.index, child),
        )
        self._process.start()
        child.close()
        self._reader = threading.Thread(target=self._read, name=f"raw-ingest-status-{self.index}", daemon=True)
        self._reader.start()

    def go(self) -> None:
        self._send(("go", None))

    def request_stop(self) -> None:
        self._stopping = True
        if self._process is not None and self._process.is_alive():
            self._send(("stop", None))

    def stop(self, timeout_s: float = STOP_GRACE_S) -> None:
        """The status thread reaps the child once its pipe closes; only if it has not within ``timeout_s`` is the
        child killed (two threads waiting on one child race: one may see it gone, the other still running)."""
        process = self._process
        if process is None:
            return
        self.request_stop()
        if self._reader is not None:
            self._reader.join(timeout_s)
        if process.is_alive():
            log.error("raw ingest process %d did not stop within %.0f s; killing it", self.index, timeout_s)
            process.kill()
            if self._reader is not None:
                self._reader.join(10)

    @property
    def failed(self) -> str | None:
        """Why the child gave up, or how it died."""
        return self.status.failed

    @property
    def healthy(self) -> bool:
        return self.status.running and self._process is not None and self._process.is_alive()

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
                status, updates = self._conn.recv()
            except (EOFError, OSError):
                break
            self._apply(status, updates)
            if self._go_when_ready:  # a respawned child: the worker is running, it joins at once
                self._go_when_ready = False
                if self._live:
                    self._send(("live", True))
                self._send(("go", None))
            if not self.ready:
                self.ready = True
                if self.on_ready is not None:
                    self.on_ready()
        if self._process is not None:
            self._process.join(STOP_GRACE_S)  # the pipe closes a moment before the exit status is known
        code = self._process.exitcode if self._process is not None else None
        failed = self.status.failed
        if failed is None and code not in (0, None) and not self._stopping and self._may_respawn():
            log.error("raw ingest process %d died (exit code %s) without a word; starting it again (%d of %d within "
                      "%.0f s)", self.index, code, len(self._respawns), RESPAWNS, RESPAWN_WINDOW_S)
            self.status = replace(self.status, running=False)
            self._go_when_ready = True
            self.start()
            return
        if failed is None and code not in (0, None):
            failed = f"raw ingest process exited with code {code}"
            log.error("%s", failed)
        self.status = replace(self.status, running=False, failed=failed)

    def _may_respawn(self) -> bool:
        now = time.monotonic()
        self._respawns = [t for t in self._respawns if now - t < RESPAWN_WINDOW_S]
        if len(self._respawns) >= RESPAWNS:
            return False
        self._respawns.append(now)
        return True

    def _apply(self, status: RawIngestStatus, updates: Updates) -> None:
        self.status = status
        try:
            apply_updates(self.metrics, updates)
        except Exception:  # a metric's labels changed under the child: the status itself still counts
            log.exception("raw ingest metrics could not be applied")


# --- the child ---------------------------------------------------------------------------------------------------


GC_THRESHOLDS = (100_000, 20, 100)
"""The cyclic collector's thresholds in a raw-ingest process (CPython's: 700, 10, 10).

Each record's first ``headers()`` call builds a list and a tuple per header, and a batch holds a whole
``raw_batch`` of records: at the default threshold the collector would run many times a batch and walk every record
still held each time. Nothing the loop makes lives in a cycle for long; its garbage is freed by reference counts."""


def collect_rarely() -> None:
    """Start-up's objects (modules, settings, scanner) are never garbage: frozen, no collection walks them again."""
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


def _child_main(settings: Settings, config: IngestConfig, tick_s: float, index: int, conn: Connection) -> None:
    _die_with_parent()
    for signum in (signal.SIGINT, signal.SIGTERM):  # the parent decides when the child stops (Ctrl-C reaches both)
        signal.signal(signum, signal.SIG_IGN)
    logs.configure(settings.log_level)
    updates = MetricUpdates()
    raw = RawIngest(settings, config, fastest_scanner(), updates, _now_ms, tick_s=tick_s,  # type: ignore[arg-type]
                    instance=instance_name(settings, index), unknown=UnknownSources(updates))  # type: ignore[arg-type]
    collect_rarely()
    parent, started = os.getppid(), False
    try:
        conn.send((RawIngestStatus.of(raw), updates.drain()))  # ready: the parent answers "go" when all are
        while os.getppid() == parent:
            if conn.poll(STATUS_EVERY_S):
                command, argument = conn.recv()
                if command == "stop":
                    break
                if command == "go" and not started:
                    raw.start()
                    started = True
                elif command == "live":
                    raw.live = bool(argument)
                elif command == "restart_idle":
                    raw.restart_idle(int(argument))
            conn.send((RawIngestStatus.of(raw), updates.drain()))
    except (EOFError, OSError):  # the parent is gone
        pass
    finally:
        raw.stop()
        try:
            conn.send((RawIngestStatus.of(raw), updates.drain()))
        except OSError:
            pass


def _die_with_parent() -> None:
    """A worker killed with -9 must not leave its ingest running: two would fence each other's transactions.
    (Linux sends the signal when the *thread* that started the child ends: the app starts it from its main thread.)"""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):  # not Linux: the loop's parent check still ends the child within a poll
        pass


def _now_ms() -> int:
    return int(time.time() * 1000)
