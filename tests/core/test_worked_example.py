"""docs/architecture.md's worked example of a new root-cause code is true: its hunks, applied as written to a copy of
the repository, add a detector-backed code in at most four files, and the registry and vocabulary checks pass there.

The hunks are read from the document itself, so a change that makes the example stale (a context line it shows that
the code no longer has, a check the new code would fail) fails here.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from correlator.core.correlate.detectors import DETECTED
from correlator.core.correlate.silent import COVERAGE_CODES
from correlator.core.explain.causes import Code

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"
SECTION = "### Worked example: a detector-backed code in four files"
CHECKS = ("tests/core/test_root_cause_codes.py", "tests/core/test_vocabulary.py")
MAX_FILES = 4

Hunk = tuple[str, list[str]]


def worked_example() -> list[Hunk]:
    """``(path, lines)`` of every hunk of the section's diff blocks; a hunk's header (``@@ …``) is a label only: its
    place is found by its context lines."""
    text = DOC.read_text(encoding="utf-8")
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0].split("\n### ", 1)[0]
    hunks: list[Hunk] = []
    path = ""
    for block in re.findall(r"```diff\n(.*?)```", section, re.S):
        for line in block.split("\n")[:-1]:
            if line.startswith("+++ "):
                path = line.removeprefix("+++ ").removeprefix("b/")
            elif line.startswith("--- "):
                continue
            elif line.startswith("@@"):
                hunks.append((path, []))
            else:
                assert line[:1] in (" ", "+", "-", ""), f"not a diff line: {line!r}"
                hunks[-1][1].append(line or " ")
    return hunks


def apply(root: Path, hunks: list[Hunk]) -> None:
    """Each hunk where its context and removed lines stand, which must be exactly one place."""
    for path, lines in hunks:
        file = root / path
        text = file.read_text(encoding="utf-8").split("\n")
        old = [line[1:] for line in lines if line[0] in " -"]
        new = [line[1:] for line in lines if line[0] in " +"]
        at = [i for i in range(len(text) - len(old) + 1) if text[i:i + len(old)] == old]
        assert len(at) == 1, f"{path}: the hunk's context stands in {len(at)} places, not one: {old}"
        text[at[0]:at[0] + len(old)] = new
        file.write_text("\n".join(text), encoding="utf-8")


def test_the_example_touches_at_most_four_files() -> None:
    hunks = worked_example()
    assert hunks and all(lines for _, lines in hunks)
    assert len({path for path, _ in hunks}) <= MAX_FILES


def test_the_example_passes_the_registry_checks_in_a_copy(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "src" / "correlator", tmp_path / "src" / "correlator",
                    ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    shutil.copy(ROOT / "README.md", tmp_path / "README.md")
    for check in CHECKS:
        (tmp_path / check).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / check, tmp_path / check)
    apply(tmp_path, worked_example())
    env = os.environ | {"PYTHONPATH": str(tmp_path / "src")}
    checks = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *CHECKS],
                            cwd=tmp_path, env=env, capture_output=True, text=True)
    assert checks.returncode == 0, checks.stdout[-3000:] + checks.stderr[-2000:]
    found = subprocess.run(
        [sys.executable, "-c", "import correlator; from correlator.core.correlate.detectors import DETECTED;"
         "print(correlator.__file__); print(' '.join(sorted(DETECTED)))"],
        cwd=tmp_path, env=env, capture_output=True, text=True, check=True).stdout.split("\n")
    assert found[0].startswith(str(tmp_path)), "the copy, not this repository, was checked"
    assert len(set(found[1].split()) - set(DETECTED)) == 1, "the example adds one code, found by its detector"


def _codes_of_bullet(start: str) -> set[str]:
    """The codes a bullet of the section "Adding a root-cause code" names (``- **A detector**`` …)."""
    text = DOC.read_text(encoding="utf-8").split("## Adding a root-cause code", 1)[1]
    bullet = text.split(f"- **{start}", 1)[1].split("\n- **", 1)[0].split("\n\n", 1)[0]
    return set(re.findall(r"`([A-Z][A-Z_]+)`", bullet)) - NAMES


NAMES = {"DETECTORS", "COVERAGE_CODES"}
"""Upper-case words of the bullets that name the lists, not codes."""


def test_the_codes_the_docs_call_detected_or_judged_are() -> None:
    """The docs' list of codes no evidence ranks never names a ranked one (it may lag a newly detected code: the
    registry, not the list, is what the tests hold to)."""
    detected = _codes_of_bullet("A detector")
    assert detected and detected <= set(Code) and detected <= set(DETECTED)
    assert _codes_of_bullet("Coverage") == set(COVERAGE_CODES)
