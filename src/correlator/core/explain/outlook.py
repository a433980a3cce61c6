"""Outlook: when a periodic cause is next due on each host, from its logged schedule corrected by observed runs.

The DataNode's DirectoryScanner runs at a fixed rate: run k starts at ``first + k·interval`` whatever the previous
run took, and each run's totals line is logged when the run ends. So the interval comes from the start line
(``Periodic Directory Tree Verification scan starting … with interval of …ms``), the phase from the latest totals
line (exact to the millisecond, where older releases log the first run only to the minute), and the window's width
from how far the observed runs strayed from that grid. JVM pauses have no schedule: only a run of regular gaps
between long pauses makes them periodic. Nothing here guesses: with no interval logged, the window says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import median
from typing import Any

from correlator.core.events import DatasetLockHeld, DirectoryScanConfig, DirectoryScanStats, Event, JvmPause, iso_ms
from correlator.core.explain.registry import periodic_codes
from correlator.core.explain.kinds import Periodic
from correlator.core.explain.knowledge import is_scanner_holder, is_scanner_stack
from correlator.core.explain.verdict import NextWindow, Outlook

SCAN_CODES = periodic_codes(Periodic.DIRECTORY_SCAN)
PAUSE_CODES = periodic_codes(Periodic.JVM_PAUSE)
KEEP = 48
"""Runs and pauses kept per host: enough for a stable spread, bounded whatever the log."""
SAME_RUN_MS = 1_000
"""Totals lines closer than this are one run (a DataNode with several block pools logs one line per pool)."""
MAX_WINDOWS = 16
"""The cause's hosts, then the DataNodes due soonest: a verdict stays small on a cluster of hundreds."""
MIN_PAUSES = 3
PAUSE_REGULARITY = 0.2
"""Pauses are periodic when every gap lies within this fraction of their median gap."""


@dataclass(frozen=True, slots=True)
class ScanStart:
    at_ms: int
    interval_ms: int | None
    first_run_ms: int | None
    enabled: bool
    to_minute: bool = False
    """The first run's time was logged to the minute: observed runs give the phase better, when there are any."""


def _bounded(items: list[int], ts: int) -> None:
    if ts not in items:
        items.append(ts)
        items.sort()
        del items[:-KEEP]


class ScanBook:
    """Scanner start lines, scanner runs and long pauses per (cluster, host), as logged: the outlook's inputs."""

    def __init__(self, min_pause_ms: int = 5_000) -> None:
        self.min_pause_ms = min_pause_ms
        self._starts: dict[tuple[str, str], list[ScanStart]] = {}
        self._runs: dict[tuple[str, str], list[int]] = {}
        self._pauses: dict[tuple[str, str], list[int]] = {}
        self._holds: dict[tuple[str, str], list[tuple[int, int]]] = {}
        """The scanner's dataset-lock holds (end, length): where a run began, which its totals line does not say."""

    def observe(self, event: Event) -> None:
        key = (event.cluster, event.host)
        if isinstance(event, DirectoryScanConfig):
            starts = self._starts.setdefault(key, [])
            starts.append(ScanStart(event.ts_ms, event.interval_ms, event.first_scan_ms, event.enabled,
                                    event.first_scan_to_minute))
            starts.sort(key=lambda s: s.at_ms)
            del starts[:-4]
        elif isinstance(event, DirectoryScanStats):
            runs = self._runs.setdefault(key, [])
            if not any(abs(event.ts_ms - t) < SAME_RUN_MS for t in runs):
                _bounded(runs, event.ts_ms)
        elif isinstance(event, DatasetLockHeld) and (is_scanner_holder(event.holder) or is_scanner_stack(event.stack)):
            holds = self._holds.setdefault(key, [])
            if (event.ts_ms, event.held_ms) not in holds:
                holds.append((event.ts_ms, event.held_ms))
                holds.sort()
                del holds[:-KEEP]
        elif isinstance(event, JvmPause) and event.pause_ms >= self.min_pause_ms:
            _bounded(self._pauses.setdefault(key, []), event.ts_ms)

    def snapshot(self) -> list[list[Any]]:
        starts = [[c, h, [[s.at_ms, s.interval_ms, s.first_run_ms, s.enabled, s.to_minute] for s in v]]
                  for (c, h), v in sorted(self._starts.items())]
        return [starts, [[c, h, v] for (c, h), v in sorted(self._runs.items())],
                [[c, h, v] for (c, h), v in sorted(self._pauses.items())],
                [[c, h, [list(x) for x in v]] for (c, h), v in sorted(self._holds.items())]]

    @classmethod
    def restore(cls, data: list[list[Any]]) -> ScanBook:
        book = cls()
        starts, runs, pauses, holds = data
        book._starts = {(c, h): [ScanStart(*s) for s in v] for c, h, v in starts}
        book._runs = {(c, h): list(v) for c, h, v in runs}
        book._pauses = {(c, h): list(v) for c, h, v in pauses}
        book._holds = {(c, h): [(int(x[0]), int(x[1])) for x in v] for c, h, v in holds}
        return book

    def outlook(self, cluster: str, code: str, hosts: tuple[str, ...], as_of_ms: int, known_ms: int) -> Outlook | None:
        """The outlook of a verdict whose cause is ``code`` on ``hosts``, from lines logged up to ``known_ms``.

        ``None`` unless the cause is periodic: a scanner cause always is (every DataNode that logged its scanner is
        listed, the cause's hosts first); a pause cause only where the pauses recur at regular gaps.
        """
        if code in SCAN_CODES:
            names = sorted({h for c, h in (*self._starts, *self._runs) if c == cluster} | set(hosts))
            every = [self._scan_window(cluster, h, as_of_ms, known_ms) for h in names]
            every.sort(key=lambda w: (w.host not in hosts, w.expected_ms is None, w.expected_ms or 0, w.host))
            windows = tuple(every[:MAX_WINDOWS])
            return Outlook(Periodic.DIRECTORY_SCAN, as_of_ms, windows) if windows else None
        if code in PAUSE_CODES:
            found = [w for h in hosts if (w := self._pause_window(cluster, h, as_of_ms, known_ms)) is not None]
            return Outlook(Periodic.JVM_PAUSE, as_of_ms, tuple(found)) if found else None
        return None

    def _scan_window(self, cluster: str, host: str, as_of_ms: int, known_ms: int) -> NextWindow:
        starts = [s for s in self._starts.get((cluster, host), ()) if s.at_ms <= known_ms]
        start = starts[-1] if starts else None
        since = start.at_ms if start is not None else None
        ends = [t for t in self._runs.get((cluster, host), ()) if t <= known_ms and (since is None or t >= since)]
        holds = [h for h in self._holds.get((cluster, host), ()) if h[0] <= known_ms]
        runs = [_run(t, holds) for t in ends]
        last = ends[-1] if ends else None
        if start is not None and not start.enabled:
            return NextWindow(host, None, None, None, None, last,
                              f"The DirectoryScanner is disabled on this DataNode (logged {iso_ms(start.at_ms)}).")
        if start is None or not start.interval_ms or start.interval_ms <= 0:
            seen = f" (the last run seen ended at {iso_ms(last)})" if last is not None else ""
            return NextWindow(host, None, None, None, None, last,
                              "The scan interval is unknown: this DataNode's DirectoryScanner start line is not in the "
                              f"logs{seen}.")
        return scan_window(host, start, runs, max(as_of_ms, runs[-1].start_ms if runs else as_of_ms))

    def _pause_window(self, cluster: str, host: str, as_of_ms: int, known_ms: int) -> NextWindow | None:
        pauses = [t for t in self._pauses.get((cluster, host), ()) if t <= known_ms]
        if len(pauses) < MIN_PAUSES:
            return None
        gaps = [b - a for a, b in zip(pauses, pauses[1:], strict=False)]
        typical = int(median(gaps))
        spread = max(abs(g - typical) for g in gaps)
        if typical <= 0 or spread > PAUSE_REGULARITY * typical:
            return None
        expected = _next_on_grid(pauses[-1], typical, max(as_of_ms, pauses[-1]))
        basis = (f"{len(pauses)} pauses of {self.min_pause_ms // 1000} s or more were logged at a median gap of "
                 f"{span_text(typical)} (each gap within {span_text(spread)} of it), the last at "
                 f"{iso_ms(pauses[-1])}.")
        return NextWindow(host, expected, expected - spread, expected + spread, typical, pauses[-1], basis)


def _next_on_grid(anchor: int, interval: int, after: int) -> int:
    """The first ``anchor + k·interval`` (k ≥ 0) strictly after ``after``."""
    if anchor > after:
        return anchor
    return anchor + ((after - anchor) // interval + 1) * interval


def _deviation(t: int, anchor: int, interval: int) -> int:
    """How far ``t`` lies from the nearest point of the grid ``anchor + k·interval``."""
    offset = (t - anchor) % interval
    return offset if offset <= interval // 2 else offset - interval


@dataclass(frozen=True, slots=True)
class Run:
    start_ms: int
    """From the scanner's lock hold ending with the totals line; the totals line itself when no hold was logged."""
    end_ms: int
    held_ms: int | None


def _run(end_ms: int, holds: list[tuple[int, int]]) -> Run:
    hold = next(((t, h) for t, h in holds if abs(t - end_ms) < SAME_RUN_MS), None)
    return Run(end_ms, end_ms, None) if hold is None else Run(hold[0] - hold[1], end_ms, hold[1])


def scan_window(host: str, start: ScanStart, runs: list[Run], after: int) -> NextWindow:
    """The next run starting after ``after`` on a fixed-rate schedule; ``runs`` are those seen since ``start``.

    ``expected_ms`` is when that run should begin (the risky window opens), ``latest_ms`` when it should have ended
    (its start's spread plus the longest run seen)."""
    interval = start.interval_ms
    assert interval
    every = f"The DataNode logged a scan interval of {span_text(interval)} at {iso_ms(start.at_ms)}"
    longest = max((r.held_ms for r in runs if r.held_ms is not None), default=0)
    how = _how(runs)
    if runs and start.first_run_ms is not None and not start.to_minute:
        offsets = [_deviation(r.start_ms, start.first_run_ms, interval) for r in runs]
        if all(0 <= d < interval // 2 for d in offsets):
            grid = _next_on_grid(start.first_run_ms, interval, after)
            seen = "ending" if all(r.held_ms is None for r in runs) else "starting"
            spread = span_text(min(offsets)) + ("" if min(offsets) == max(offsets) else f"–{span_text(max(offsets))}")
            basis = (f"{every}, with the first run scheduled for {iso_ms(start.first_run_ms)}. "
                     + ("One run was" if len(runs) == 1 else f"{len(runs)} runs were")
                     + f" seen ({how}), {seen} {spread} after {'its' if len(runs) == 1 else 'their'} scheduled "
                     f"start; the last ended at {iso_ms(runs[-1].end_ms)}.")
            # a fixed-rate run begins at its scheduled time; the runs seen say how long after it they lasted
            return NextWindow(host, grid, grid, grid + max(offsets) + longest, interval, runs[-1].end_ms, basis)
    if runs:
        anchor = runs[-1].start_ms
        devs = [_deviation(r.start_ms, anchor, interval) for r in runs]
        expected = _next_on_grid(anchor, interval, after)
        basis = (f"{every}. The schedule follows the last run seen, which began at {iso_ms(anchor)} ({how})"
                 + (f"; {len(runs)} runs fall within {span_text(max(devs) - min(devs))} of it." if len(runs) > 1
                    else "; with one run seen, the spread of its start is not measured."))
        return NextWindow(host, expected, expected + min(devs), expected + max(devs) + longest, interval,
                          runs[-1].end_ms, basis)
    if start.first_run_ms is not None:
        expected = _next_on_grid(start.first_run_ms, interval, after)
        scheduled = "scheduled within the minute from" if start.to_minute else "scheduled for"
        basis = f"{every}, with the first run {scheduled} {iso_ms(start.first_run_ms)}; no run has been seen yet."
        return NextWindow(host, expected, expected, None, interval, None, basis)
    return NextWindow(host, None, None, None, interval, None,
                      f"{every}, but the first run's time is not machine-readable and no run was seen, so the next run "
                      "is unknown.")


def _how(runs: list[Run]) -> str:
    """Where the runs' starts come from, in the words of a reader: one run, or several."""
    timed = sum(1 for r in runs if r.held_ms is not None)
    if len(runs) == 1:
        return "its start taken from the scanner's lock hold" if timed else "its start taken at its totals line"
    if timed == len(runs):
        return "their starts taken from the scanner's lock holds"
    if timed == 0:
        return "their starts taken at their totals lines"
    return f"{timed} of their starts taken from lock holds, the others at their totals lines"


def span_text(ms: int) -> str:
    """A duration in the unit a reader expects: ``155 ms``, ``20 s``, ``55.7 min``, ``6 h``."""
    ms = abs(ms)
    if ms < 1_000:
        return f"{ms} ms"
    if ms < 120_000:
        return f"{ms / 1000:.3g} s"
    if ms < 7_200_000:
        return f"{ms / 60_000:.3g} min"
    return f"{ms / 3_600_000:.3g} h"
