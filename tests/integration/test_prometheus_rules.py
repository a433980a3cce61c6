"""The worker's alerting rules (deploy/monitoring/) with Debian's Prometheus: ``promtool`` checks them and runs their
unit tests (series in, alerts out, a healthy worker raising none), and a real Prometheus scraping a real worker
raises ``CorrelatorWorkerDown`` once the worker has stopped. Prometheus is started with its own config and storage
and stopped by its pid."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.support.services import ROOT, free_port
from tests.support.worker import Stack, WorkerProcess

pytestmark = [pytest.mark.integration]

RULES = ROOT / "deploy" / "monitoring"


@pytest.mark.parametrize("args", [["check", "rules", "correlator-rules.yml"],
                                  ["test", "rules", "correlator-rules.test.yml"]], ids=["check", "test"])
def test_promtool_accepts_the_rules(args: list[str]) -> None:
    assert shutil.which("promtool"), "promtool missing: .ci/run installs it (deploy/local/install-prometheus.sh)"
    done = subprocess.run(["promtool", *args], cwd=RULES, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS" in done.stdout


def test_every_dashboard_query_is_promql(tmp_path: Path) -> None:
    """The Grafana dashboard's queries, each as a recording rule, pass ``promtool check rules`` (its PromQL parser)."""
    dashboard = json.loads((RULES / "correlator-dashboard.json").read_text())
    exprs = [t["expr"] for panel in dashboard["panels"] for t in panel["targets"]]
    rules = tmp_path / "dashboard-rules.yml"
    rules.write_text("groups:\n  - name: dashboard\n    rules:\n" + "".join(
        f"      - record: dashboard:q{i}\n        expr: {json.dumps(e)}\n" for i, e in enumerate(exprs)))
    done = subprocess.run(["promtool", "check", "rules", str(rules)], capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 0 and f"{len(exprs)} rules found" in done.stdout, done.stdout + done.stderr


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=5) as response:
        return json.loads(response.read())["data"]


def _until(check: Any, timeout_s: float, what: str) -> Any:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            found = check()
        except OSError:
            found = None
        if found or time.monotonic() > deadline:
            assert found, f"{what} within {timeout_s:.0f} s"
            return found
        time.sleep(0.5)


def test_a_stopped_worker_raises_worker_down(stack: Stack, workers: list[WorkerProcess], tmp_path: Path) -> None:
    assert shutil.which("prometheus"), "prometheus missing: .ci/run installs it (deploy/local/install-prometheus.sh)"
    worker = WorkerProcess(stack).start()
    workers.append(worker)
    config = tmp_path / "prometheus.yml"
    config.write_text(
        "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
        f"rule_files: ['{RULES / 'correlator-rules.yml'}']\n"
        "scrape_configs:\n  - job_name: correlator\n"
        f"    static_configs: [{{targets: ['127.0.0.1:{worker.port}']}}]\n")
    port = free_port()
    log = (tmp_path / "prometheus.log").open("wb")
    process = subprocess.Popen(["prometheus", f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                                f"--web.listen-address=127.0.0.1:{port}"], stdout=log, stderr=log)
    api = f"http://127.0.0.1:{port}/api/v1"
    query = f"{api}/query?" + urllib.parse.urlencode({"query": 'up{job="correlator"}'})

    def alerts() -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = _get(f"{api}/alerts")["alerts"]
        return [a for a in found if a["labels"]["alertname"] == "CorrelatorWorkerDown"]

    try:
        _until(lambda: [r for r in _get(query)["result"] if r["value"][1] == "1"], 60, "the worker scraped")
        assert not alerts()
        assert worker.stop() == 0
        stopped = time.monotonic()
        firing = _until(lambda: [a for a in alerts() if a["state"] == "firing"], 90, "CorrelatorWorkerDown firing")
        assert time.monotonic() - stopped >= 25, "fired well before its 30 s"  # /metrics went quiet before the exit
        assert firing[0]["labels"]["severity"] == "critical"
        assert firing[0]["annotations"]["summary"] == f"correlator worker 127.0.0.1:{worker.port} does not answer"
    finally:
        process.terminate()
        process.wait(30)
