"""An exactly-once Kafka sink in the lab: `correlator analyze` on each captured run whose job wrote to the lab's
broker, judged against its truth (the transactions the broker's own log shows it aborted).

The warning must come before the first abort, its time left within one checkpoint interval of the truth's (the
abort's time less the warning's); every abort gets a loss record naming its transactional id; the control (the same
failures, a 10 min timeout) gets neither.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from correlator.cli import cli

DATA = Path(__file__).resolve().parents[1] / "data" / "lab"
RUNS = sorted(p.parent for p in DATA.glob("*/*/truth.json") if "kafka" in json.loads(p.read_text()))


def _ms(iso: str) -> int:
    return round(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)


def _records(run: Path) -> list[dict[str, Any]]:
    result = CliRunner().invoke(cli, ["analyze", "--risks", str(run)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.stdout.splitlines() if line.strip()]


@pytest.fixture(scope="module", params=RUNS, ids=[f"{p.parent.name}/{p.name}" for p in RUNS])
def run(request: pytest.FixtureRequest) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    path: Path = request.param
    return json.loads((path / "truth.json").read_text())["kafka"], _records(path)


def test_the_lab_captured_a_sink_losing_records_and_its_control() -> None:
    truths = [json.loads((r / "truth.json").read_text())["kafka"] for r in RUNS]
    assert any(t["aborted"] for t in truths) and any(not t["aborted"] for t in truths), RUNS


def test_a_warning_comes_before_the_abort_with_the_time_left(run: tuple[dict[str, Any], list[dict[str, Any]]]) -> None:
    truth, records = run
    warnings = [r for r in records if r["schema"] == "correlator.risk/v1" and r["cause"] == "transaction_timeout"
                and r["status"] == "raised"]
    if not truth["aborted"]:
        assert not warnings, [w["headline"] for w in warnings]
        return
    first = _ms(truth["aborted"][0]["at"])
    [warning, *_] = warnings
    assert warning["as_of_ms"] < first, (warning["as_of"], truth["aborted"][0])
    assert warning["timeout_ms"] == truth["transaction_timeout_ms"]
    assert abs(warning["time_left_ms"] - (first - warning["as_of_ms"])) <= truth["checkpoint_interval_ms"], warning


def test_every_abort_has_its_loss_record(run: tuple[dict[str, Any], list[dict[str, Any]]]) -> None:
    truth, records = run
    losses = [r for r in records if r["schema"] == "correlator.loss/v1"]
    aborts = [(a["transactional_id"], _ms(a["at"])) for a in truth["aborted"]]
    found = [(r["transactional_id"], r["as_of_ms"]) for r in losses if r["evidence"] == "broker_abort"]
    assert found == aborts
    for loss in losses:
        assert loss["failed_checkpoints"] and loss["job_id"], loss
        assert loss["checkpoint_id"] == int(loss["transactional_id"].rsplit("-", 1)[1])
        assert "Completed rollback of ongoing transaction" in loss["line"]
        assert loss["checkpoint_id"] in loss["failed_checkpoints"]
    if not truth["aborted"]:
        assert not losses
