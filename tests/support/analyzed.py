"""``analyze`` of a folder, once per test session: several tests judge the same golden and lab runs (their words,
their schema, their advice), and verdicts and warnings are frozen, so they share one analysis."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from correlator.core.explain.risk import Risk
from correlator.core.explain.verdict import Verdict
from correlator.offline.analyze import ordered_events, run_analysis


@cache
def analysis_of(run: Path) -> tuple[tuple[Verdict, ...], tuple[Risk, ...]]:
    """The verdicts and early warnings of ``correlator analyze`` on ``run`` (with its defaults)."""
    verdicts, risks = run_analysis(ordered_events([str(run)]))
    return tuple(verdicts), tuple(risks)


def verdicts_of(run: Path) -> tuple[Verdict, ...]:
    return analysis_of(run)[0]
