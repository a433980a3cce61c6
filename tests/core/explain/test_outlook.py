"""Outlook: the next scanner run per DataNode, predicted from the log's first part and checked against its later part."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from correlator.core.events import DatasetLockHeld, DirectoryScanConfig, DirectoryScanStats, Event, JvmPause
from correlator.core.explain.outlook import ScanBook
from correlator.core.explain.verdict import verdict_from_dict, verdict_to_dict
from correlator.offline.analyze import analyze, collect_events, run_engine

TESTS = Path(__file__).resolve().parents[2]
GOLDEN = TESTS / "golden" / "scenarios"
LAB_RUNS = sorted(TESTS.glob("data/lab/*/scanner-differences"))
"""Real DataNodes (Hadoop 3.3.6 and 3.4.1) run with a 20 s scanner interval: two or three runs per DataNode."""
SCAN = "HDFS_DIRECTORY_SCAN"


def _runs(events: list[Event]) -> dict[str, list[int]]:
    """When each scanner run began, from the raw lines: its lock hold where one ends with its totals line, else the
    totals line itself (a short run reports no hold)."""
    holds = [(e.host, e.ts_ms, e.held_ms) for e in events
             if isinstance(e, DatasetLockHeld) and "DirectoryScanner" in e.holder]
    out: dict[str, list[int]] = {}
    for e in events:
        if isinstance(e, DirectoryScanStats):
            hold = next(((t, ms) for h, t, ms in holds if h == e.host and abs(t - e.ts_ms) < 1_000), None)
            out.setdefault(e.host, []).append(e.ts_ms if hold is None else hold[0] - hold[1])
    return out


def _interval(events: list[Event], host: str) -> int:
    return next(e.interval_ms for e in events if isinstance(e, DirectoryScanConfig) and e.host == host
                and e.interval_ms)


def _jitter(runs: list[int], interval: int, first: int | None = None) -> int:
    """The scanner's own jitter over the whole log: how far its runs lay from the schedule it logged (its first run
    plus whole intervals), or where it logged no exact first run, the width of the band they occupy on that grid."""
    if first is not None:
        return max(abs((t - first) - round((t - first) / interval) * interval) for t in runs)
    offsets = [(t - runs[0]) - round((t - runs[0]) / interval) * interval for t in runs]
    return max(offsets) - min(offsets)


def _first(events: list[Event], host: str) -> int | None:
    """The first run's time when the start line gave it exactly (``starting in Nms``); ``None`` when it gave none or
    only the minute (the JDK's short date format of 3.2 and older)."""
    return next(None if e.first_scan_to_minute else e.first_scan_ms
                for e in events if isinstance(e, DirectoryScanConfig) and e.host == host)


@pytest.mark.parametrize("run", LAB_RUNS, ids=[p.parent.name for p in LAB_RUNS])
def test_lab_next_scan_is_predicted_within_the_scanners_jitter(run: Path) -> None:
    """Hold back everything after each run but the last; the predicted next run matches the one the log shows."""
    events, _ = collect_events([str(run)])
    runs = _runs(events)
    assert len(runs) == 3 and all(len(r) >= 2 for r in runs.values())
    compared = 0
    for host, times in sorted(runs.items()):
        interval = _interval(events, host)
        assert interval == 20_000
        first = _first(events, host)
        jitter = _jitter(times, interval, first)
        for seen, actual in zip(times, times[1:], strict=False):
            book = ScanBook()
            for e in events:
                if e.ts_ms <= seen:
                    book.observe(e)
            outlook = book.outlook("default", SCAN, (host,), seen, seen)
            assert outlook is not None and outlook.windows[0].host == host
            w = outlook.windows[0]
            assert w.expected_ms is not None and w.earliest_ms is not None and w.latest_ms is not None
            assert abs(w.expected_ms - actual) <= jitter, (host, w, actual)
            assert w.earliest_ms - jitter <= actual <= w.latest_ms + jitter
            assert w.last_ms == seen and w.interval_ms == interval
            assert ("first run scheduled" if first is not None else "The schedule follows the last run seen") in w.basis
            assert "taken at its totals line" in w.basis or "taken at their totals lines" in w.basis  # no hold
            compared += 1
    assert compared >= 3


def test_recurring_golden_next_scan_from_the_held_back_log() -> None:
    """Cut the recurring scenario before dn02's second run: its predicted run is within the scanner's jitter of the
    run the full log shows, and no DataNode shows a run before the time predicted for it."""
    events, _ = collect_events([str(GOLDEN / "recurring")])
    runs = _runs(events)
    cut = runs["dn02.example.com"][1] - 10 * 60_000  # before dn02's second run began
    held = [e for e in events if e.ts_ms <= cut]
    verdicts = run_engine(held)
    assert [v.checkpoint_id for v in verdicts] == [54, 70, 81]
    outlook = verdicts[-1].outlook
    assert outlook is not None and outlook.kind == "directory_scan"
    windows = {w.host: w for w in outlook.windows}
    assert set(windows) == {f"dn0{k}.example.com" for k in range(1, 6)}
    dn02 = windows["dn02.example.com"]
    interval = _interval(events, "dn02.example.com")
    actual = runs["dn02.example.com"][1]
    assert dn02.expected_ms is not None and dn02.interval_ms == interval
    assert abs(dn02.expected_ms - actual) <= _jitter(runs["dn02.example.com"], interval) == 0
    assert dn02.latest_ms is not None and dn02.latest_ms - dn02.expected_ms == 35_000  # the first run's lock hold
    assert "taken from the scanner's lock hold" in dn02.basis
    end = max(e.ts_ms for e in events)
    for host, w in windows.items():
        # every start line is machine-readable, the JDK's short format (dn01, dn05) to the minute
        assert w.expected_ms is not None, (host, w.basis)
        assert w.expected_ms > outlook.as_of_ms and (w.last_ms is None or w.last_ms <= outlook.as_of_ms)
        later = [t for t in runs.get(host, []) if t > cut]
        if host in runs and not later:
            assert w.expected_ms > end  # the log shows no run before the predicted one
    assert _deviation_free(verdicts[-1])


def _deviation_free(v: object) -> bool:
    """The outlook survives the wire unchanged."""
    d = verdict_to_dict(v)  # type: ignore[arg-type]
    return verdict_to_dict(verdict_from_dict(d)) == d


@pytest.mark.parametrize("name", sorted(p.name for p in GOLDEN.iterdir() if p.is_dir()))
def test_only_periodic_causes_carry_an_outlook(name: str) -> None:
    """A verdict without a periodic cause carries no outlook; a single DataNode pause is not periodic either."""
    for v in analyze([str(GOLDEN / name)]):
        if v.root_cause.code == SCAN:
            assert v.outlook is not None and v.outlook.windows[0].host == v.root_cause.hosts[0]
        else:
            assert v.outlook is None, (name, v.root_cause.code)


def _config(host: str, at: int, interval: int | None, first: int | None = None) -> DirectoryScanConfig:
    return DirectoryScanConfig(ts_ms=at, cluster="c", host=host, role="datanode", interval_ms=interval,
                               first_scan_ms=first)


def _stats(host: str, at: int) -> DirectoryScanStats:
    return DirectoryScanStats(ts_ms=at, cluster="c", host=host, role="datanode", block_pool="BP-1", total_blocks=1,
                              missing_meta=0, missing_block=0, missing_memory=0, mismatched=0)


def test_unknown_interval_is_said_not_guessed() -> None:
    book = ScanBook()
    for t in (1_000_000, 2_000_000, 3_000_000):
        book.observe(_stats("dn1", t))
    outlook = book.outlook("c", SCAN, ("dn1",), 3_000_000, 3_000_000)
    assert outlook is not None
    (w,) = outlook.windows
    assert w.expected_ms is None and w.interval_ms is None and w.last_ms == 3_000_000
    assert w.basis.startswith("The scan interval is unknown")


def test_disabled_scanner_and_runs_before_a_restart() -> None:
    """A DataNode restart logs a new start line: runs before it say nothing about the new schedule."""
    book = ScanBook()
    book.observe(_config("dn1", 0, 60_000, 30_000))
    book.observe(_stats("dn1", 30_100))
    book.observe(_config("dn1", 50_000, 600_000, 100_000))
    outlook = book.outlook("c", SCAN, ("dn1",), 60_000, 60_000)
    assert outlook is not None
    w = outlook.windows[0]
    assert w.expected_ms == 100_000 and w.last_ms is None and "no run has been seen yet" in w.basis
    book.observe(DirectoryScanConfig(ts_ms=70_000, cluster="c", host="dn1", role="datanode", enabled=False))
    w = book.outlook("c", SCAN, ("dn1",), 80_000, 80_000).windows[0]  # type: ignore[union-attr]
    assert w.expected_ms is None and "disabled" in w.basis


def test_block_pools_of_one_run_are_one_run_and_later_lines_are_not_read() -> None:
    book = ScanBook()
    book.observe(_config("dn1", 0, 100_000))
    for t in (150_000, 150_300, 250_400, 350_000):
        book.observe(_stats("dn1", t))
    w = book.outlook("c", SCAN, ("dn1",), 260_000, 260_000).windows[0]  # type: ignore[union-attr]
    assert w.last_ms == 250_400 and w.expected_ms == 350_400
    assert (w.earliest_ms, w.latest_ms) == (350_000, 350_400)  # the two runs lie 400 ms off one grid


def test_recurring_pauses_are_periodic_irregular_ones_are_not() -> None:
    def pauses(times: list[int]) -> ScanBook:
        book = ScanBook()
        for t in times:
            book.observe(JvmPause(ts_ms=t, cluster="c", host="dn1", role="datanode", pause_ms=20_000, gc=True))
        book.observe(JvmPause(ts_ms=times[-1] + 1, cluster="c", host="dn1", role="datanode", pause_ms=100, gc=True))
        return book

    regular = pauses([0, 600_000, 1_210_000, 1_800_000])
    outlook = regular.outlook("c", "DATANODE_JVM_PAUSE", ("dn1",), 1_800_000, 1_800_000)
    assert outlook is not None and outlook.kind == "jvm_pause"
    (w,) = outlook.windows
    assert w.interval_ms == 600_000 and w.expected_ms == 2_400_000 and w.latest_ms == 2_410_000
    irregular = pauses([0, 100_000, 1_210_000, 1_800_000])
    assert irregular.outlook("c", "DATANODE_JVM_PAUSE", ("dn1",), 1_800_000, 1_800_000) is None
    assert regular.outlook("c", "NAMENODE_SLOW", ("dn1",), 1_800_000, 1_800_000) is None


def test_text_shows_the_outlook_and_each_figure_under_its_line() -> None:
    from correlator.core.explain.verdict_text import verdict_text

    text = verdict_text(analyze([str(GOLDEN / "recurring")])[-1], width=10_000)  # the content, not its wrapping
    assert ("  outlook:\n    The next DirectoryScanner run on dn02.example.com is expected at about "
            "2020-01-02T10:55:54.025Z") in text
    # the JDK short format
    assert "dn01.example.com is expected at about 2020-01-02T12:51:00.000Z (interval 6 h)" in text
    lines = text.splitlines()
    raise_line = next(i for i, line in enumerate(lines) if "Raise dfs.datanode.directoryscan.interval" in line)
    assert lines[raise_line + 1].startswith("      what if: a scan interval of 24 h would have overlapped 3 of these 4")
    plain = verdict_text(analyze([str(GOLDEN / "slow-disk")])[0], width=10_000)
    assert "outlook:" not in plain
    assert "what if: with setCheckpointTimeout = 30 s, this failure would have completed (it needed 15.2 s)" in plain


def test_cause_hosts_first_then_the_soonest_and_bounded() -> None:
    book = ScanBook()
    for k in range(40):
        book.observe(_config(f"dn{k:02d}", 0, 3_600_000, 1_000_000 + (40 - k) * 1_000))
    book.observe(_config("lost", 0, None))
    outlook = book.outlook("c", SCAN, ("dn05", "lost"), 500_000, 500_000)
    assert outlook is not None
    hosts = [w.host for w in outlook.windows]
    assert len(hosts) == 16 and hosts[:2] == ["dn05", "lost"] and hosts[2:5] == ["dn39", "dn38", "dn37"]


@given(interval=st.integers(min_value=10_000, max_value=86_400_000), first=st.integers(min_value=0, max_value=10**9),
       held=st.lists(st.integers(min_value=0, max_value=4_000), min_size=1, max_size=6),
       skipped=st.sets(st.integers(min_value=0, max_value=5)), exact=st.booleans(), timed=st.booleans())
def test_fixed_rate_runs_are_predicted_at_their_schedule(interval: int, first: int, held: list[int],
                                                         skipped: set[int], exact: bool, timed: bool) -> None:
    """Runs at ``first + k·interval`` lasting ``held`` ms, some missing from the log: the next run is predicted at its
    scheduled start whenever that start is knowable (the first run logged exactly, or runs timed by their lock holds),
    and its window covers it otherwise."""
    book = ScanBook()
    book.observe(_config("dn", first - 5_000, interval, first if exact else None))
    seen = [k for k in range(len(held)) if k not in skipped or k == len(held) - 1]
    for k in seen:
        start = first + k * interval
        book.observe(_stats("dn", start + held[k]))
        if timed:
            book.observe(DatasetLockHeld(ts_ms=start + held[k], cluster="c", host="dn", role="datanode",
                                         lock="FsDatasetImpl", held_ms=held[k], holder="DirectoryScanner.scan"))
    last_end = first + seen[-1] * interval + held[seen[-1]]
    w = book.outlook("c", SCAN, ("dn",), last_end, last_end).windows[0]  # type: ignore[union-attr]
    actual = first + (seen[-1] + 1) * interval
    assert w.expected_ms is not None and w.earliest_ms is not None and w.latest_ms is not None
    if exact or timed:
        assert w.expected_ms == actual
    else:
        assert w.earliest_ms <= actual + max(held) and actual <= w.latest_ms
