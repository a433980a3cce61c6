"""The worker's alerting rules (deploy/prometheus/) are valid for Prometheus and fire when they should: Debian's
``promtool`` checks them and runs their unit tests (series in, alerts out, a healthy worker raising none)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.support.services import ROOT

pytestmark = [pytest.mark.integration]

RULES = ROOT / "deploy" / "prometheus"


@pytest.mark.parametrize("args", [["check", "rules", "correlator-rules.yml"],
                                  ["test", "rules", "correlator-rules.test.yml"]], ids=["check", "test"])
def test_promtool_accepts_the_rules(args: list[str]) -> None:
    assert shutil.which("promtool"), "promtool missing: .ci/run installs it (deploy/local/install-prometheus.sh)"
    done = subprocess.run(["promtool", *args], cwd=RULES, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS" in done.stdout
