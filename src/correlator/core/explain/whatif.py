"""What-if: replay the measured stall of every failure of an incident against the settings its remediation names.

Each figure is a count over the failures actually seen (``k of n``), derived from what the verdicts measured — how
long each write needed, which checkpoints failed in a row, when each scanner run began — and carries the one
assumption the replay makes. A figure that needs a measurement some failure lacks is left out, never estimated.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from statistics import median

from correlator.core.events import (
    DatasetLockHeld,
    DatasetLockWait,
    JobStatus,
    JvmPause,
    NameNodeLockHeld,
    SlowIo,
    TaskStatus,
)
from correlator.core.explain.causes import Step
from correlator.core.explain.kinds import Periodic
from correlator.core.explain.verdict import Outlook, Verdict, WhatIf

STEP_MS = 15_000
"""Suggested timeouts are rounded up to this step: a setting people write, not a measured millisecond."""
DAY_MS = 86_400_000
MEASURED_MS = 1_000
"""An expiry alone makes a duration the timeout plus the coordinator's tick: only a write that ended this long after
the timeout was measured."""
FAILED_STATES = (" to FAILED", " to FAILING", " to RESTARTING")
STALL_TYPES = frozenset({DatasetLockHeld.type, DatasetLockWait.type, JvmPause.type, NameNodeLockHeld.type,
                         SlowIo.type})
"""Evidence whose span is the cause's own stall (a block write's span is only its symptom)."""


@dataclass(frozen=True, slots=True)
class Stall:
    """What one failure measured: the write's need, the timeout it met, the cause's span, whether the job restarted."""

    verdict_id: str
    checkpoint_id: int | None
    failed_at_ms: int
    started_at_ms: int | None
    needed_ms: int | None
    """How long the write needed, when measured beyond the timeout: its own end, else the end of the cause's stall.
    ``None`` when neither outlasted the timeout (what held the checkpoint up then is not measured)."""
    timeout_ms: int | None
    restarted: bool
    host: str | None
    span: tuple[int, int] | None
    """The longest measured span (lock hold, pause) of the cause on its first host."""


def stall_of(v: Verdict, restarted: bool = False) -> Stall:
    """``restarted``: the job's own lines show it restarting after this failure (the engine keeps no job lines)."""
    f = v.failure
    host = v.root_cause.hosts[0] if v.root_cause.hosts else None
    spans = [(e.start_ms, e.end_ms) for e in v.evidence
             if e.host == host and e.type in STALL_TYPES and e.start_ms is not None and e.end_ms is not None and e.end_ms > e.start_ms]
    span = max(spans, key=lambda s: (s[1] - s[0], s)) if spans else None
    needed: int | None = None
    if f.duration_ms is not None and f.timeout_ms is not None and f.duration_ms > f.timeout_ms + MEASURED_MS:
        needed = f.duration_ms
    elif span is not None and f.started_at_ms is not None and f.timeout_ms is not None \
            and span[1] - f.started_at_ms > f.timeout_ms:
        needed = span[1] - f.started_at_ms  # the write could not end before the stall did
    restarted = restarted or any(e.type in (TaskStatus.type, JobStatus.type) and e.summary.endswith(FAILED_STATES)
                                 for e in v.evidence)
    return Stall(v.verdict_id, v.checkpoint_id, f.failed_at_ms, f.started_at_ms, needed, f.timeout_ms, restarted,
                 host, span)


def _round_up(ms: int) -> int:
    return (ms // STEP_MS + 1) * STEP_MS


def _line(remediation: tuple[Step, ...], *settings: str) -> int | None:
    """The index of the first step that changes one of ``settings``."""
    return next((i for i, r in enumerate(remediation) if r.setting in settings), None)


def timeout_figures(remediation: tuple[Step, ...], stalls: list[Stall]) -> list[WhatIf]:
    index = _line(remediation, "execution.checkpointing.timeout", "setCheckpointTimeout")
    if index is None or not stalls or any(s.needed_ms is None for s in stalls):
        return []
    needs = [s.needed_ms for s in stalls if s.needed_ms is not None]
    setting = remediation[index].setting or ""
    out = []
    for value in sorted({_round_up(int(median(needs))), _round_up(max(needs))}):
        done = sum(1 for n in needs if n < value)
        out.append(WhatIf(
            index, setting, f"{value // 1000} s", "completed", done, 0, len(needs),
            f"with {setting} = {value // 1000} s, {_of(done, len(needs), 'failures')} would have completed "
            + (f"(they needed {_seconds(min(needs))}–{_seconds(max(needs))})" if len(needs) > 1
               else f"(it needed {_seconds(needs[0])})"),
            "each write would still have taken as long as it measured, and nothing else in the checkpoint was slower"))
    return out


def restarts_with(tolerable: int, checkpoint_ids: list[int]) -> int:
    """Restarts of Flink's failure manager: the (N+1)-th failed checkpoint in a row fails the job, then it resets."""
    restarts, run, previous = 0, 0, None
    for chk in sorted(set(checkpoint_ids)):
        run = run + 1 if previous is not None and chk == previous + 1 else 1
        previous = chk
        if run > tolerable:
            restarts += 1
            run = 0
    return restarts


def restart_figures(remediation: tuple[Step, ...], stalls: list[Stall]) -> list[WhatIf]:
    index = _line(remediation, "execution.checkpointing.tolerable-failed-checkpoints", "setFailOnCheckpointingErrors")
    seen = sum(1 for s in stalls if s.restarted)
    if index is None or seen == 0:
        return []
    if remediation[index].setting == "setFailOnCheckpointingErrors":
        return [WhatIf(index, "setFailOnCheckpointingErrors", "false", "restarts", 0, seen, len(stalls),
                       f"with setFailOnCheckpointingErrors(false), the job would have restarted 0 times instead of "
                       f"{seen}", "each failed write declines its checkpoint instead of failing the task")]
    ids = [s.checkpoint_id for s in stalls if s.checkpoint_id is not None]
    if len(ids) != len(stalls):
        return []
    tolerable = next(n for n in range(1, len(ids) + 1) if restarts_with(n, ids) == 0)
    return [WhatIf(index, "execution.checkpointing.tolerable-failed-checkpoints", str(tolerable), "restarts",
                   restarts_with(tolerable, ids), seen, len(stalls),
                   f"with execution.checkpointing.tolerable-failed-checkpoints = {tolerable}, the job would have "
                   f"restarted {restarts_with(tolerable, ids)} times instead of {seen}",
                   "every other checkpoint of this job completed (a failure for another cause would break the run)")]


def interval_figures(remediation: tuple[Step, ...], stalls: list[Stall], outlook: Outlook | None) -> list[WhatIf]:
    index = _line(remediation, "dfs.datanode.directoryscan.interval")
    if index is None or outlook is None or outlook.kind != Periodic.DIRECTORY_SCAN or not stalls:
        return []
    intervals = {w.host: w.interval_ms for w in outlook.windows if w.interval_ms}
    if any(s.span is None or s.started_at_ms is None or s.needed_ms is None or s.host not in intervals
           for s in stalls):
        return []
    longest = max(intervals[s.host or ""] for s in stalls)
    value = DAY_MS if longest < DAY_MS else 2 * longest
    hit = sum(1 for s in stalls if overlaps_with(value, s, stalls))
    runs = ", ".join(f"{h} {DAY_MS / i:.3g}×" for h, i in sorted(intervals.items()) if h in {s.host for s in stalls})
    return [WhatIf(
        index, "dfs.datanode.directoryscan.interval", f"{value // 1000} s", "overlapped", hit, len(stalls),
        len(stalls),
        f"a scan interval of {_hours(value)} {_overlapped(hit, len(stalls))}"
        + f" (scans a day now: {runs}; then {DAY_MS / value:.3g}× each)",
        "each DataNode's first scan in this incident stays where it was and later ones follow the new interval, "
        "each as long as measured")]


def overlaps_with(interval_ms: int, s: Stall, stalls: list[Stall]) -> bool:
    """Whether a run on the new schedule of ``s``'s host (anchored at that host's first run here) hits its write."""
    assert s.span is not None and s.started_at_ms is not None and s.needed_ms is not None
    first = min(o.span[0] for o in stalls if o.host == s.host and o.span is not None)
    held = s.span[1] - s.span[0]
    write_end = s.started_at_ms + s.needed_ms
    k = max(0, (s.started_at_ms - held - first) // interval_ms)
    while first + k * interval_ms < write_end:
        run = first + k * interval_ms
        if run < write_end and run + held > s.started_at_ms:
            return True
        k += 1
    return False


def whatif(remediation: tuple[Step, ...], stalls: list[Stall], outlook: Outlook | None) -> tuple[WhatIf, ...]:
    """Every figure the incident's measured failures allow, in remediation order."""
    figures = [*interval_figures(remediation, stalls, outlook), *timeout_figures(remediation, stalls),
               *restart_figures(remediation, stalls)]
    return tuple(sorted(figures, key=lambda w: w.remediation))


def helps(w: WhatIf) -> bool:
    """Whether the change would have avoided any of the measured failures (fewer overlaps or restarts, some
    completed)."""
    return w.result > 0 if w.metric == "completed" else w.result < w.baseline


NOT_ENOUGH = "; alone it would not have avoided these failures (the figure below)"


def helpful_first(remediation: tuple[Step, ...], figures: tuple[WhatIf, ...]) -> tuple[tuple[Step, ...],
                                                                                       tuple[WhatIf, ...]]:
    """The steps whose own figure says they would not have helped go last, and say so: advice never leads with what
    its own replay shows useless. The figures follow their steps."""
    useless = {w.remediation for w in figures if not helps(w)} - {w.remediation for w in figures if helps(w)}
    if not useless:
        return remediation, figures
    order = [i for i in range(len(remediation)) if i not in useless] + sorted(useless)
    steps = tuple(replace(remediation[i], text=remediation[i].text + NOT_ENOUGH) if i in useless else remediation[i]
                  for i in order)
    moved = {old: new for new, old in enumerate(order)}
    return steps, tuple(sorted((replace(w, remediation=moved[w.remediation]) for w in figures),
                               key=lambda w: w.remediation))


def _of(k: int, n: int, what: str) -> str:
    """``3 of these 4 failures``; for a single one, ``this failure`` or ``none``."""
    if n == 1:
        return f"this {what[:-1]}" if k else "none"
    return f"{k} of these {n} {what}"


def _overlapped(hit: int, n: int) -> str:
    """``would have overlapped 1 of these 6 checkpoints instead of 6``; ``still`` when the change would not help."""
    if n == 1:
        return "would still have overlapped this checkpoint" if hit else "would have missed this checkpoint"
    if hit == n:
        return f"would still have overlapped all {n} of these checkpoints"
    return f"would have overlapped {hit} of these {n} checkpoints instead of {n}"


def _seconds(ms: int) -> str:
    return f"{ms / 1000:.1f} s"


def _hours(ms: int) -> str:
    return f"{ms / 3_600_000:g} h"
