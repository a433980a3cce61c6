"""The published loss schema, and the risk schema for a Kafka sink's warning: valid draft 2020-12 schemas that every
record of an exactly-once sink's transactions satisfies, synthetic and from the lab's real runs."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from jsonschema import Draft202012Validator, FormatChecker

from correlator.cli import cli
from correlator.core.explain.risk import risk_to_dict
from correlator.core.explain.transactions import LOSS_SCHEMA, TransactionLoss, loss_to_dict
from correlator.schemas import loss_schema, risk_schema
from tests.core.explain.test_transactions import T0, aborted, outage, run, setting

LAB = Path(__file__).resolve().parents[1] / "data" / "lab"
KAFKA_RUNS = sorted(p.parent for p in LAB.glob("*/*/truth.json") if "kafka" in json.loads(p.read_text()))


def _validator(schema: dict[str, Any]) -> Draft202012Validator:
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema, format_checker=FormatChecker())


def _errors(validator: Draft202012Validator, record: dict[str, Any]) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(record)]


def test_cli_prints_the_shipped_schema() -> None:
    result = CliRunner().invoke(cli, ["schema", "loss"])
    assert result.exit_code == 0 and json.loads(result.output) == loss_schema()
    assert loss_schema()["properties"]["schema"] == {"const": LOSS_SCHEMA}


def test_the_schema_names_every_field_the_core_emits() -> None:
    props = loss_schema()["properties"]
    fields = {f.name for f in dataclasses.fields(TransactionLoss)}
    assert fields | {"schema", "as_of"} == set(props) == set(loss_schema()["required"])


def test_synthetic_records_validate() -> None:
    risks, losses = run([setting(30_000), *outage(3, 6), aborted("lab-eos-0-4", T0 + 50_000)])
    assert risks and losses
    for risk in risks:
        assert not _errors(_validator(risk_schema()), risk_to_dict(risk))
    for loss in losses:
        assert not _errors(_validator(loss_schema()), loss_to_dict(loss))


@pytest.mark.parametrize("path", KAFKA_RUNS, ids=[p.name for p in KAFKA_RUNS])
def test_a_real_runs_records_validate(path: Path) -> None:
    result = CliRunner().invoke(cli, ["analyze", "--risks", str(path)], catch_exceptions=False)
    records = [json.loads(line) for line in result.stdout.splitlines()]
    for record in records:
        if record["schema"] == LOSS_SCHEMA:
            assert not _errors(_validator(loss_schema()), record)
        elif record["schema"] == "correlator.risk/v1":
            assert not _errors(_validator(risk_schema()), record)
