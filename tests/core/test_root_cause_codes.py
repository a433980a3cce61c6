"""The root-cause codes are one list across the core, the schema and the README (docs/architecture.md's walkthrough).

Adding a code touches the ranking or the decision, the explanation, the knowledge and the contract; this fails on
whichever of them the change forgot.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from correlator.core.correlate.explanation import title
from correlator.core.correlate.ranking import BASE, CODE_OF_KIND, ROOT_CODES
from correlator.core.explain.knowledge import remediation
from correlator.core.explain.verdict import CODES

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "src" / "correlator" / "schemas" / "verdict-v1.schema.json"
GENERIC = "UNEXPLAINED"
"""The one code whose remediation is the general advice (see more, log more)."""


def readme_codes() -> list[str]:
    """The first column of README's ``| code | meaning |`` table."""
    lines = (ROOT / "README.md").read_text(encoding="utf-8").split("\n")
    start = lines.index("| code | meaning |") + 2
    codes: list[str] = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        m = re.match(r"\| `([A-Z_]+)` \|", line)
        assert m, f"README code row not understood: {line[:80]!r}"
        codes.append(m[1])
    return codes


def test_readme_table_names_the_cores_codes() -> None:
    codes = readme_codes()
    assert len(codes) == len(set(codes))
    assert set(codes) == set(CODES)


def test_schema_enum_names_the_cores_codes() -> None:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    assert set(schema["$defs"]["code"]["enum"]) == set(CODES)


def test_every_ranked_code_is_a_code() -> None:
    assert set(CODE_OF_KIND.values()) <= set(CODES)
    assert set(ROOT_CODES) <= set(CODE_OF_KIND.values())
    assert set(BASE) == set(CODE_OF_KIND)


@pytest.mark.parametrize("code", CODES)
def test_every_code_has_a_title(code: str) -> None:
    text = title(code, ("dn1",), 7, None)
    assert "checkpoint 7" in text or "Checkpoint 7" in text


@pytest.mark.parametrize("code", [c for c in CODES if c != GENERIC])
def test_every_code_has_its_own_remediation(code: str) -> None:
    assert remediation(code, hosts=("dn1",)) != remediation(GENERIC, hosts=("dn1",))
