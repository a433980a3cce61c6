"""``correlator analyze`` prints the outlook and the what-if figures in both formats."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from correlator.cli import cli

RECURRING = Path(__file__).resolve().parents[1] / "golden" / "scenarios" / "recurring"


def test_text_and_json_carry_outlook_and_figures() -> None:
    text = CliRunner().invoke(cli, ["analyze", str(RECURRING), "--format", "text"], catch_exceptions=False)
    assert text.exit_code == 0
    last = text.stdout.split("\n\n")[-1]
    assert ("  outlook:\n    The next DirectoryScanner run on dn02.example.com is expected at about "
            "2020-01-02T10:55:54.025Z") in last
    assert "what if: with setCheckpointTimeout = 45 s, 4 of these 4 failures would have completed" in last
    lines = CliRunner().invoke(cli, ["analyze", str(RECURRING)], catch_exceptions=False).stdout.splitlines()
    verdicts = [json.loads(line) for line in lines]
    assert [v["outlook"]["windows"][0]["host"] for v in verdicts] == [
        "dn02.example.com", "dn04.example.com", "dn03.example.com", "dn02.example.com"]
    assert [len(v["whatif"]) for v in verdicts] == [3, 3, 3, 3]
    assert verdicts[-1]["outlook"]["windows"][0]["expected"] == "2020-01-02T10:55:54.025Z"
