"""A tiny run of ``correlator bench soak`` on the real broker: it feeds a worker and samples its memory (never a
full ten-minute run here; that is ``make soak``)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from correlator.cli import cli
from tests.support.services import ROOT

pytestmark = pytest.mark.integration


def test_a_soak_too_short_to_judge_says_so_and_fails(kafka_bootstrap: str) -> None:
    result = CliRunner().invoke(cli, ["bench", "soak", "--bootstrap-servers", kafka_bootstrap, "--minutes", "0.25",
                                      "--rate", "500", "--topics-dir", str(ROOT / "topics")])
    assert result.exit_code == 1, result.output
    samples = [line for line in result.output.splitlines() if "produced" in line and "RSS" in line]
    assert samples and all(int(line.split("RSS")[1].split()[0]) > 0 for line in samples), result.output
    assert "too short to judge" in result.output
