"""One lab scenario live, end to end: real HDFS + Flink from Maven jars, a real fault, every daemon's log shipped as it
is written by Debian's rsyslog (imfile + omkafka) into the real Kafka, the `correlator worker` deciding.

The faulted DataNode's shipper is stopped while its fault lasts and started again once the first verdicts are out
(``LAB_LIVE_SILENT=0``: every shipper runs throughout), as a sick host's shipper is in a real incident: each first
verdict must name that DataNode, never "nothing abnormal", and each revision equal `analyze` on the complete logs and
the run's truth.

Bounded: the lab's own timeouts stop each wait, every process it starts is stopped by pid, and the whole run is
killed (its process group) if it overruns. The first run on a machine also resolves the jars (~2 min).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = os.environ.get("LAB_LIVE_SCENARIO", "datanode-pause")
SILENT = os.environ.get("LAB_LIVE_SILENT", "1") != "0"
BUDGET_S = 900

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(BUDGET_S + 60)]


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], str]:
    out = tmp_path_factory.mktemp("lab") / "rows.json"
    home = tmp_path_factory.mktemp("lab-home")  # its own daemons' dirs: a `make lab` running meanwhile is not touched
    command = [sys.executable, str(ROOT / "deploy" / "lab" / "live.py"), "--scenario", SCENARIO, "--json", str(out),
               *(["--silent-shipper"] if SILENT else [])]
    proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True, env={**os.environ, "LAB_HOME": str(home)})
    try:
        printed, _ = proc.communicate(timeout=BUDGET_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGTERM)  # live.py stops its daemons on SIGTERM
        printed, _ = proc.communicate(timeout=60)
        pytest.fail(f"the live lab overran {BUDGET_S}s:\n{printed[-3000:]}")
    assert out.exists(), printed[-3000:]
    rows = json.loads(out.read_text())
    assert len(rows) == 1, printed[-3000:]
    return rows[0], printed


def test_the_fault_failed_a_checkpoint_and_every_failure_reached_a_verdict_through_kafka(
        live: tuple[dict[str, Any], str]) -> None:
    row, printed = live
    truth = row["truth"]
    assert truth["failed_checkpoints"], f"the fault failed no checkpoint (twice):\n{printed[-3000:]}"
    decided = {(v["job_id"], int(v["checkpoint_id"])) for v in row["verdicts"]}
    wanted = {(f["job_id"], int(f["checkpoint_id"])) for f in truth["failed_checkpoints"]}
    assert wanted <= decided, printed[-3000:]
    assert all(d < 300 for d in row["delays"]), row["delays"]


def test_the_live_verdicts_match_the_truth(live: tuple[dict[str, Any], str]) -> None:
    row, printed = live
    assert row["judged"]["ok"], "\n".join(row["judged"]["problems"]) + "\n" + printed[-2000:]
