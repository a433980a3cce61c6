"""A stage that keeps failing stops the worker: not ready with the reason, counted, exit 1 — and nothing skipped."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from correlator.offline.analyze import analyze
from correlator.simulate import generate
from tests.support.worker import Stack, WorkerProcess, latest

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.mark.parametrize(("fault_stage", "stage", "reason"), [
    ("correlate", "correlate", "correlate stage failed"),
    ("ingest", "raw_ingest", "raw ingest stage failed"),
])
def test_a_failing_stage_stops_the_worker_and_a_restart_skips_nothing(
    kafka_bootstrap: str, unique: str, tmp_path: Path, fault_stage: str, stage: str, reason: str
) -> None:
    logs = tmp_path / "logs"
    generate("seed", logs)
    expected = {(v.verdict_id, v.root_cause.code) for v in analyze([str(logs)], cluster="default")}
    stack = Stack(kafka_bootstrap, unique, tmp_path)
    stack.apply_topics()
    fault = tmp_path / "fault"
    fault.touch()
    faulty = WorkerProcess(stack, "faulty", command=[sys.executable, "-m", "tests.support.faulty_worker"],
                           env={"FAULT_FILE": str(fault), "FAULT_STAGE": fault_stage})
    faulty.start()
    try:
        stack.replay(logs, cluster="default")
        deadline, health, metrics = time.monotonic() + 90, {}, ""
        while time.monotonic() < deadline and faulty.process.poll() is None:
            health = faulty.health() or health
            if "reason" in health:
                metrics = faulty.metrics()
                break
            time.sleep(0.2)
        assert health.get("ready") is False and reason in health.get("reason", ""), faulty.tail()
        assert f'correlator_stage_crashes_total{{stage="{stage}"}} 1.0' in metrics
        assert f'correlator_stage_errors_total{{stage="{stage}"}} 4.0' in metrics
        assert faulty.process.wait(40) == 1
        assert f"{reason}: RuntimeError: injected snapshot fault" in faulty.tail(5)
    finally:
        faulty.stop()
    fault.unlink()
    healthy = WorkerProcess(stack, "healthy").start()
    try:
        got = [(r["verdict_id"], r["root_cause"]["code"])
               for r in latest(stack.read("verdicts", until=len(expected)))]
        assert set(got) == expected
    finally:
        assert healthy.stop() == 0
