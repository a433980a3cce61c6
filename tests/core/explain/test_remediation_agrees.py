"""Remediation never contradicts itself: over every golden scenario and lab fixture, no verdict advises steps for
Flink releases no one job runs at once (``(Flink < 1.9)`` beside ``Flink 1.19+``), and no step its own what-if
shows useless comes before one that helps."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from correlator.core.explain.knowledge import remediation
from correlator.core.explain.verdict import verdict_to_dict
from correlator.core.explain.whatif import NOT_ENOUGH
from tests.support.analyzed import verdicts_of

ROOT = Path(__file__).resolve().parents[3]
INPUTS = sorted(p for p in [*(ROOT / "tests/golden/scenarios").iterdir(), *(ROOT / "tests/data/lab").glob("*/*")]
                if p.is_dir() and any(p.glob("*.log*")))
BEFORE = re.compile(r"\(Flink < (\d+)\.(\d+)\)")
SINCE = re.compile(r"\bFlink (\d+)\.(\d+)\+")


def disagreements(steps: list[str]) -> list[str]:
    """What in one verdict's steps cannot all be true of one job."""
    found = []
    before = [(int(a), int(b)) for s in steps for a, b in BEFORE.findall(s)]
    since = [(int(a), int(b)) for s in steps for a, b in SINCE.findall(s)]
    if before and since and max(since) >= min(before):
        (a, b), (c, d) = min(before), max(since)
        found.append(f"Flink < {a}.{b} beside Flink {c}.{d}+")
    useless = [i for i, s in enumerate(steps) if s.endswith(NOT_ENOUGH)]
    if useless and useless != list(range(len(steps) - len(useless), len(steps))):
        found.append(f"a step its what-if shows useless leads (steps {useless} of {len(steps)})")
    return found


@pytest.mark.parametrize("where", INPUTS, ids=[f"{p.parent.name}/{p.name}" for p in INPUTS])
def test_no_verdict_advises_what_cannot_all_be_true(where: Path) -> None:
    for verdict in verdicts_of(where):
        steps = verdict_to_dict(verdict)["remediation"]
        assert disagreements(steps) == [], (verdict.root_cause.code, steps)


def test_the_check_finds_what_it_looks_for() -> None:
    assert disagreements(["raise setCheckpointTimeout (Flink < 1.9)", "traces (Flink 1.19+, the jar)"])
    assert disagreements(["a" + NOT_ENOUGH, "b"])
    assert not disagreements(["b", "a" + NOT_ENOUGH, "c" + NOT_ENOUGH])


def test_a_step_for_a_newer_flink_is_left_out_when_the_job_runs_an_older_one() -> None:
    old = remediation("UNEXPLAINED", flink_version="1.7.2")
    new = remediation("UNEXPLAINED", flink_version="1.20.1")
    unknown = remediation("UNEXPLAINED")
    assert not any("1.19+" in s.text for s in old)
    assert any("1.19+" in s.text for s in new) and any("1.19+" in s.text for s in unknown)
