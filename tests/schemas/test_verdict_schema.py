"""The published verdict schema: a valid draft 2020-12 schema that every verdict we produce satisfies."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from jsonschema import Draft202012Validator, FormatChecker

from correlator.cli import cli
from correlator.core.events import ROLES
from correlator.core.explain.verdict import CODES, FAILURE_KINDS, SCHEMA, verdict_to_dict
from correlator.offline.analyze import analyze
from tests.support.analyzed import verdicts_of
from correlator.schemas import verdict_schema

TESTS = Path(__file__).resolve().parents[1]
GOLDEN = TESTS / "golden" / "scenarios"
LAB = TESTS / "data" / "lab"
RUNS = sorted(p for p in GOLDEN.iterdir() if p.is_dir()) + sorted(p.parent for p in LAB.glob("*/*/truth.json"))
"""Every golden scenario and every captured lab run (real daemons' logs, ``<hadoop>-<flink>/<scenario>/``)."""
FIXTURES = sorted((TESTS / "data").rglob("*verdict*/*.jsonl")) + sorted((TESTS / "data").rglob("*verdicts.jsonl"))
"""Verdict files kept as test data (hand-made ones, and those recorded from real clusters in the lab)."""


@pytest.fixture(scope="module")
def validator() -> Draft202012Validator:
    schema = verdict_schema()
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema, format_checker=FormatChecker())


def _errors(validator: Draft202012Validator, verdict: dict[str, Any]) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(verdict)]


def test_cli_prints_the_shipped_schema() -> None:
    """``correlator schema verdict`` prints the draft 2020-12 schema of correlator.verdict/v1."""
    result = CliRunner().invoke(cli, ["schema", "verdict"])
    assert result.exit_code == 0
    printed = json.loads(result.output)
    assert printed == verdict_schema()
    assert printed["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert printed["properties"]["schema"] == {"const": SCHEMA}


def test_enums_cover_what_the_core_emits() -> None:
    """Every code, failure kind and role the core knows is allowed by the schema."""
    defs = verdict_schema()["$defs"]
    assert set(CODES) <= set(defs["code"]["enum"])
    assert set(FAILURE_KINDS) == set(verdict_schema()["properties"]["failure"]["properties"]["kind"]["enum"])
    assert set(ROLES) == set(defs["role"]["enum"])


@pytest.mark.parametrize("run", RUNS, ids=[p.relative_to(TESTS).as_posix() for p in RUNS])
def test_every_golden_and_lab_verdict_validates(run: Path, validator: Draft202012Validator) -> None:
    for verdict in verdicts_of(run):
        wire = verdict_to_dict(verdict)
        assert _errors(validator, json.loads(json.dumps(wire))) == [], wire["verdict_id"]


def test_every_verdict_fixture_validates(validator: Draft202012Validator) -> None:
    assert FIXTURES, "no verdict fixtures found"
    count = 0
    for path in FIXTURES:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip() and not line.startswith("#"):
                assert _errors(validator, json.loads(line)) == [], f"{path.name}:{n}"
                count += 1
    assert count >= len(FIXTURES)


@pytest.mark.parametrize(
    ("change", "where"),
    [
        (lambda v: v.pop("verdict_id"), ""),
        (lambda v: v["root_cause"].update(code="DISK_ON_FIRE"), "root_cause/code"),
        (lambda v: v["root_cause"].update(confidence=1.5), "root_cause/confidence"),
        (lambda v: v["failure"].update(failed_at="2020-01-02 09:05:40"), "failure/failed_at"),
        (lambda v: v["evidence"][0].update(role="kubelet"), "evidence/0/role"),
        (lambda v: v["evidence"][0].update(start="yesterday"), "evidence/0/start"),
        (lambda v: v.update(schema="correlator.verdict/v2"), "schema"),
    ],
)
def test_broken_verdicts_are_rejected(change: Any, where: str, validator: Draft202012Validator) -> None:
    """The schema is strict enough to catch a consumer's wrong assumptions, not just ``type: object``."""
    [verdict] = analyze([str(GOLDEN / "seed")])
    broken = copy.deepcopy(verdict_to_dict(verdict))
    change(broken)
    errors = _errors(validator, broken)
    assert errors and any(e.startswith(where + ":") for e in errors), errors


@pytest.mark.parametrize(
    ("change", "where"),
    [
        (lambda v: v["outlook"].update(kind="weather"), "outlook"),
        (lambda v: v["outlook"]["windows"][0].update(expected="soon"), "outlook"),
        (lambda v: v["whatif"][0].update(result=-1), "whatif/0/result"),
        (lambda v: v["whatif"][0].pop("assumes"), "whatif/0"),
    ],
)
def test_broken_outlooks_and_figures_are_rejected(change: Any, where: str, validator: Draft202012Validator) -> None:
    """The optional ``outlook`` and ``whatif`` are checked as strictly as the rest once present."""
    verdict = analyze([str(GOLDEN / "recurring")])[-1]
    wire = json.loads(json.dumps(verdict_to_dict(verdict)))
    assert wire["outlook"] and wire["whatif"] and _errors(validator, wire) == []
    change(wire)
    errors = _errors(validator, wire)
    assert errors and any(e.startswith(where) for e in errors), errors
