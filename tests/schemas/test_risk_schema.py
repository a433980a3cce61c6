"""The published risk schema: a valid draft 2020-12 schema that every risk record we produce satisfies."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any, get_args

import pytest
from click.testing import CliRunner
from jsonschema import Draft202012Validator, FormatChecker

from correlator.cli import cli
from correlator.core.explain.risk import RISK_SCHEMA, Risk, RiskCause, RiskStatus, TimeoutSource, risk_to_dict
from correlator.schemas import risk_schema
from tests.core.explain.test_risk import creeping, run, setting

LAB = Path(__file__).resolve().parents[1] / "data" / "lab"
WARNING_RUNS = sorted(p.parent for p in LAB.glob("*/*/truth.json") if "risk" in json.loads(p.read_text()))
"""Captured lab runs whose truth expects an early warning (real daemons' logs)."""


@pytest.fixture(scope="module")
def validator() -> Draft202012Validator:
    schema = risk_schema()
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema, format_checker=FormatChecker())


def _errors(validator: Draft202012Validator, record: dict[str, Any]) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(record)]


def test_cli_prints_the_shipped_schema() -> None:
    result = CliRunner().invoke(cli, ["schema", "risk"])
    assert result.exit_code == 0
    printed = json.loads(result.output)
    assert printed == risk_schema()
    assert printed["properties"]["schema"] == {"const": RISK_SCHEMA}


def test_the_schema_names_every_field_and_value_the_core_emits() -> None:
    props = risk_schema()["properties"]
    fields = {f.name for f in dataclasses.fields(Risk)}
    assert fields | {"schema", "as_of"} == set(props) == set(risk_schema()["required"])
    assert set(props["status"]["enum"]) == set(get_args(RiskStatus))
    assert set(props["cause"]["enum"]) == set(get_args(RiskCause))
    assert set(props["timeout_source"]["enum"]) == set(get_args(TimeoutSource))


def test_synthetic_records_validate(validator: Draft202012Validator) -> None:
    records = run([setting(10_000), *creeping(80)])
    assert records
    for record in records:
        assert not _errors(validator, risk_to_dict(record))


def test_a_real_runs_records_validate(validator: Draft202012Validator) -> None:
    assert WARNING_RUNS, "no lab run expects an early warning"
    for path in WARNING_RUNS:
        result = CliRunner().invoke(cli, ["analyze", "--risks", str(path)], catch_exceptions=False)
        risks = [r for r in map(json.loads, result.stdout.splitlines()) if r["schema"] == RISK_SCHEMA]
        assert risks, path
        for record in risks:
            assert not _errors(validator, record), (path, record["status"])
