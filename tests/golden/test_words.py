"""What an SRE reads, pinned: every verdict's text (``analyze --format text``) on each golden scenario and each real
lab fixture is checked in under ``tests/data/words/``, so a change of wording shows in review as a diff of the text
people read, not only of codes. ``CORRELATOR_UPDATE_WORDS=1`` rewrites the files after an intended change.

The same verdicts' titles, explanations, remediation steps and outlooks may not carry internal identifiers
(``snake_case`` names of evidence kinds, event types or fields); a block id as logged is the one exception.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from correlator.core.explain.verdict import Verdict
from correlator.core.explain.verdict_text import verdict_text
from correlator.offline.analyze import analyze

ROOT = Path(__file__).resolve().parents[1]
WORDS = ROOT / "data" / "words"
RUNS = sorted(p for p in (ROOT / "golden" / "scenarios").iterdir() if p.is_dir()) + sorted(
    p for p in (ROOT / "data" / "lab").glob("*/*") if (p / "truth.json").is_file())
UPDATE = os.environ.get("CORRELATOR_UPDATE_WORDS") == "1"
IDENTIFIER = re.compile(r"(?<![\w./-])[a-z]+(?:_[a-z0-9]+)+(?![\w./-])")


def _name(run: Path) -> str:
    return f"{run.parent.name}--{run.name}" if run.parent.name != "scenarios" else f"golden--{run.name}"


def _verdicts(run: Path) -> list[Verdict]:
    return analyze([str(run)])


@pytest.mark.parametrize("run", RUNS, ids=_name)
def test_the_words_are_the_ones_checked_in(run: Path) -> None:
    text = "\n".join(verdict_text(v) + "\n" for v in _verdicts(run))
    path = WORDS / f"{_name(run)}.txt"
    if UPDATE:
        path.write_text(text, encoding="utf-8")
    assert path.is_file(), f"no words for {run.name}: run with CORRELATOR_UPDATE_WORDS=1 and review the file"
    assert text == path.read_text(encoding="utf-8"), f"the words of {path.name} changed (see the diff)"


def test_every_run_has_its_words_and_no_stale_file_is_left() -> None:
    assert {p.stem for p in WORDS.glob("*.txt")} == {_name(r) for r in RUNS}


@pytest.mark.parametrize("run", RUNS, ids=_name)
def test_no_internal_identifier_reaches_a_reader(run: Path) -> None:
    found = []
    for v in _verdicts(run):
        texts = [v.root_cause.title, v.root_cause.explanation, *(s.text for s in v.remediation)]
        if v.outlook is not None:
            texts += [w.basis for w in v.outlook.windows]
        for text in texts:
            found += [t for t in IDENTIFIER.findall(text or "") if not t.startswith("blk_")]
    assert not found, found
