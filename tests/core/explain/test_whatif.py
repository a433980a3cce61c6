"""What-if figures: each one re-derived by brute force from the raw log events of the recurring scenario."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from correlator.core.events import (
    CheckpointCompleted,
    CheckpointFailed,
    CheckpointTriggered,
    DatasetLockHeld,
    DirectoryScanConfig,
    Event,
    HdfsClientSlow,
    JobStatus,
)
from correlator.core.explain.verdict import Verdict, WhatIf
from correlator.core.explain.whatif import overlaps_with, restarts_with, stall_of, whatif
from correlator.offline.analyze import analyze, collect_events

RECURRING = Path(__file__).resolve().parents[2] / "golden" / "scenarios" / "recurring"
DAY = 86_400_000


def _write_windows(events: list[Event], checkpoints: list[int]) -> dict[int, tuple[int, int]]:
    """Each failed checkpoint's write from the raw lines: its trigger until the last line saying the write ended."""
    out = {}
    for chk in checkpoints:
        start = next(e.ts_ms for e in events if isinstance(e, CheckpointTriggered) and e.checkpoint_id == chk)
        ends = [e.ts_ms for e in events if isinstance(e, CheckpointFailed) and e.checkpoint_id == chk
                and e.kind == "async_materialize" and e.role == "taskmanager"]
        ends += [e.ts_ms for e in events if isinstance(e, HdfsClientSlow) and e.path and f"/chk-{chk}/" in e.path]
        out[chk] = (start, max(ends))
    return out


def _figure(verdict: Verdict, setting: str) -> list[WhatIf]:
    return [w for w in verdict.whatif if w.setting == setting]


def test_recurring_figures_match_a_brute_force_replay() -> None:
    verdicts = analyze([str(RECURRING)])
    events, _ = collect_events([str(RECURRING)])
    last = verdicts[-1]
    checkpoints = [v.checkpoint_id for v in verdicts if v.checkpoint_id is not None]
    writes = _write_windows(events, checkpoints)

    # checkpoint timeout: a checkpoint completes when its write ends before the timeout fires
    timeouts = _figure(last, "setCheckpointTimeout")
    assert timeouts and {w.total for w in timeouts} == {4}
    for w in timeouts:
        value = int(w.value.removesuffix(" s")) * 1000
        replayed = sum(1 for start, end in writes.values() if end < start + value)
        assert w.result == replayed and w.baseline == 0
        assert f"{replayed} of these 4 failures would have completed" in w.text
    assert max(w.result for w in timeouts) == 4
    current = last.failure.timeout_ms
    assert current is not None and sum(1 for s, e in writes.values() if e < s + current) == 0  # as logged: all fail

    # restarts: the logs show one per failure; failing on checkpoint errors off, none
    (restarts,) = _figure(last, "setFailOnCheckpointingErrors")
    logged = sum(1 for e in events if isinstance(e, JobStatus) and e.to_state == "RESTARTING")
    assert (restarts.baseline, restarts.result, restarts.total) == (logged, 0, 4) == (4, 0, 4)

    # scan interval: the scanner's runs on each DataNode replayed on a one-day grid from its first run here
    (interval,) = _figure(last, "dfs.datanode.directoryscan.interval")
    assert interval.value == f"{DAY // 1000} s"
    scans = [(e.host, e.ts_ms - e.held_ms, e.ts_ms) for e in events
             if isinstance(e, DatasetLockHeld) and "DirectoryScanner" in e.holder]
    first = {h: min(s for hh, s, _ in scans if hh == h) for h, _, _ in scans}
    hit = 0
    for v in verdicts:
        start, end = writes[v.checkpoint_id or 0]
        host = v.root_cause.hosts[0]
        held = next(e - s for h, s, e in scans if h == host and s < end and e > start)
        if any(first[host] + k * DAY < end and first[host] + k * DAY + held > start for k in range(0, 3)):
            hit += 1
    assert (interval.result, interval.total) == (hit, 4) == (3, 4)


def test_the_schedule_model_reproduces_what_happened_at_the_logged_interval() -> None:
    """Replayed at the interval each DataNode logged, every failure of the incident is hit by a scan again."""
    verdicts = analyze([str(RECURRING)])
    events, _ = collect_events([str(RECURRING)])
    logged = {e.host: e.interval_ms for e in events if isinstance(e, DirectoryScanConfig) and e.interval_ms}
    stalls = [stall_of(v) for v in verdicts]
    assert all(overlaps_with(logged[s.host or ""], s, stalls) for s in stalls)
    assert not overlaps_with(DAY, stalls[-1], stalls)  # dn02's second run moves a day on


def test_figures_grow_with_the_incident_and_need_every_measurement() -> None:
    verdicts = analyze([str(RECURRING)])
    totals = [max((w.total for w in v.whatif), default=0) for v in verdicts]
    assert totals == [1, 2, 3, 4]
    stalls = [stall_of(v) for v in verdicts]
    unmeasured = [replace(stalls[0], needed_ms=None), *stalls[1:]]
    remediation = verdicts[-1].remediation
    settings = {w.setting for w in whatif(remediation, unmeasured, verdicts[-1].outlook)}
    assert "setCheckpointTimeout" not in settings and "dfs.datanode.directoryscan.interval" not in settings
    assert "setFailOnCheckpointingErrors" in settings


def test_no_figure_without_its_remediation_line() -> None:
    v = analyze([str(RECURRING)])[-1]
    assert whatif((), [stall_of(v)], v.outlook) == ()


def _flink_failure_manager(tolerable: int, outcomes: list[bool]) -> int:
    """Checkpoint by checkpoint: a failure counts, a completion resets, count > tolerable fails the job."""
    restarts = count = 0
    for failed in outcomes:
        if not failed:
            count = 0
            continue
        count += 1
        if count > tolerable:
            restarts += 1
            count = 0
    return restarts


@given(st.lists(st.booleans(), min_size=1, max_size=60), st.integers(min_value=0, max_value=5))
def test_restarts_match_the_failure_manager_checkpoint_by_checkpoint(outcomes: list[bool], tolerable: int) -> None:
    """Given only the failed ids, the replay equals a checkpoint-by-checkpoint run where every other one completed."""
    failed = [i for i, f in enumerate(outcomes, start=1) if f]
    assert restarts_with(tolerable, failed) == _flink_failure_manager(tolerable, outcomes)


def test_completed_checkpoints_are_unused_by_the_replay() -> None:
    """The replay's assumption is checkable on the recurring scenario: completions separate all four failures."""
    events, _ = collect_events([str(RECURRING)])
    completed = {e.checkpoint_id for e in events if isinstance(e, CheckpointCompleted)}
    for chk in (54, 70, 81, 106):
        assert chk - 1 in completed and chk + 1 in completed


def test_real_lab_restarts_replayed_checkpoint_by_checkpoint() -> None:
    """Hadoop 3.3.6 + Flink 1.20.1, a held dataset lock failing checkpoints 4 and 5 in a row: the figure's tolerable
    count is the least that keeps the job running when every checkpoint the JobManager logged is replayed in order."""
    run = RECURRING.parents[2] / "data" / "lab" / "3.3.6-1.20.1" / "lock-held"
    verdicts = analyze([str(run)])
    events, _ = collect_events([str(run)])
    (figure,) = _figure(verdicts[-1], "execution.checkpointing.tolerable-failed-checkpoints")
    triggered = sorted({e.checkpoint_id for e in events if isinstance(e, CheckpointTriggered)})
    completed = {e.checkpoint_id for e in events if isinstance(e, CheckpointCompleted)}
    failed = {v.checkpoint_id for v in verdicts}
    assert failed == {4, 5} and failed <= set(triggered)
    outcomes = [chk in failed for chk in triggered if chk in completed or chk in failed]
    logged = sum(1 for e in events if isinstance(e, JobStatus) and e.to_state == "RESTARTING")
    least = next(n for n in range(10) if _flink_failure_manager(n, outcomes) == 0)
    assert (figure.value, figure.result, figure.baseline) == (str(least), 0, logged) == ("2", 0, 2)
    assert _flink_failure_manager(0, outcomes) == logged  # the replay at Flink's default reproduces the log
