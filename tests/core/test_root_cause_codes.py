"""The cause registry is the one list of root-cause codes: the schema, the README, the ranking, the detectors, the
timeline and the remediation all agree with it (docs/architecture.md walks through adding one).

A code added to the registry without a title, steps, timeline types, a schema entry, a README row, or a way to be
found (ranked evidence, a detector, coverage) fails here.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from correlator.core.correlate.detectors import DETECTED, DETECTORS
from correlator.core.correlate.explanation import title
from correlator.core.correlate.silent import COVERAGE_CODES
from correlator.core.explain.causes import Code
from correlator.core.explain.registry import BASE, CAUSES, CODE_OF_KIND, ROOT_CODES
from correlator.core.explain.knowledge import remediation
from correlator.core.explain.timeline import CAUSE_TYPES
from correlator.core.explain.verdict import CODES

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "src" / "correlator" / "schemas" / "verdict-v1.schema.json"
GENERIC = "UNEXPLAINED"
"""The one code whose remediation is the general advice (see more, log more)."""


def readme_rows() -> list[tuple[str, str]]:
    """README's ``| code | meaning |`` table."""
    lines = (ROOT / "README.md").read_text(encoding="utf-8").split("\n")
    start = lines.index("| code | meaning |") + 2
    rows: list[tuple[str, str]] = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        m = re.match(r"\| `([A-Z_]+)` \| (.*) \|$", line)
        assert m, f"README code row not understood: {line[:80]!r}"
        rows.append((m[1], m[2]))
    return rows


def test_readme_table_is_the_registry() -> None:
    """Row for row, in registry order: the README says what the registry says."""
    assert readme_rows() == [(c.code.value, c.meaning) for c in CAUSES.values()]


def test_every_code_is_in_the_registry() -> None:
    assert tuple(CAUSES) == tuple(Code) and CODES == tuple(Code)
    assert all(entry.code is code for code, entry in CAUSES.items())


def test_schema_enum_names_the_cores_codes() -> None:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    assert set(schema["$defs"]["code"]["enum"]) == set(CODES)


def test_every_ranked_code_is_a_code() -> None:
    assert set(CODE_OF_KIND.values()) <= set(CODES)
    assert set(ROOT_CODES) <= set(CODE_OF_KIND.values())
    assert set(BASE) == set(CODE_OF_KIND)
    kinds = [k for c in CAUSES.values() for k in c.evidence]
    assert len(kinds) == len(set(kinds)), "an evidence kind speaks for one cause only"


@pytest.mark.parametrize("code", CODES)
def test_every_code_is_found_one_way(code: str) -> None:
    """Ranked from its evidence kinds, found by its detector, or judged from coverage: one of the three."""
    ways = [bool(CAUSES[Code(code)].evidence), code in DETECTED, code in COVERAGE_CODES]
    assert ways.count(True) == 1, f"{code}: ranked, detected, judged from coverage = {ways}"


def test_every_detector_is_registered_once_beside_its_cause() -> None:
    assert len(DETECTED) == len(DETECTORS), "one detector per code"
    for code, detector in DETECTED.items():
        assert code in CAUSES and not CAUSES[code].evidence, code
        for method in ("find", "candidate", "reading"):
            assert callable(getattr(detector, method, None)), (code, method)
        assert detector.write_link in ("always", "when_known", "never"), code


@pytest.mark.parametrize("code", CODES)
def test_every_code_has_its_timeline_types(code: str) -> None:
    """Listed for every code (an empty set: the code has no evidence of its own to draw)."""
    assert code in CAUSE_TYPES
    assert CAUSES[Code(code)].evidence == {} or CAUSE_TYPES[code], code


@pytest.mark.parametrize("code", CODES)
def test_every_step_template_fills(code: str) -> None:
    """Every step of every code, with and without a known issue, renders without a placeholder left."""
    from correlator.core.explain.knowledge import HDFS_15415
    for issue in (None, HDFS_15415):
        for step in remediation(code, hosts=("dn1",), datanode_version="3.2.1", issue=issue):
            assert step.text and "{" not in step.text and "}" not in step.text, step


@pytest.mark.parametrize("code", CODES)
def test_every_code_has_a_title(code: str) -> None:
    text = title(code, ("dn1",), 7, None)
    assert "checkpoint 7" in text or "Checkpoint 7" in text


@pytest.mark.parametrize("code", [c for c in CODES if c != GENERIC])
def test_every_code_has_its_own_remediation(code: str) -> None:
    assert remediation(code, hosts=("dn1",)) != remediation(GENERIC, hosts=("dn1",))
