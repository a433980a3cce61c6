"""``correlator alerts`` against a real Alertmanager (Debian's ``prometheus-alertmanager``, installed by ``.ci/run``).

Alertmanager routes to a webhook receiver served here (as PagerDuty or Opsgenie receivers would be configured
instead): verdicts become alerts with their labels and words, a verdict delivered twice is one alert, recurring
failures of one cause in one job are one notification group, and a revision that changed the code or the hosts
resolves the earlier revision's alert. The Alertmanager process is started with its own config and storage and stopped by its pid.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import time
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from correlator.adapters.alertmanager import AlertmanagerClient
from correlator.adapters.pagers import AlertmanagerTarget
from correlator.adapters.redis_incidents import RedisIncidentStore
from correlator.core.alert_policy import AlertPolicy
from correlator.notify.alert_forwarder import AlertForwarder
from correlator.notify.pager import Lane, Pager, PagerConfig, Sinks
from correlator.notify.sink import Outcome
from tests.support.services import ROOT, free_port
from tests.support.worker import CLI

pytestmark = [pytest.mark.integration]

BINARY = "prometheus-alertmanager"
NO_AGE_LIMIT_MIN = 100 * 365 * 24 * 60
VERDICTS = ROOT / "tests" / "data" / "verdicts" / "recurring.jsonl"


class Webhook:
    """Alertmanager's webhook receiver: every notification body it was sent."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        received = self.bodies

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                received.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *_: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def alerts(self, status: str) -> list[dict[str, Any]]:
        return [a for body in self.bodies for a in body["alerts"] if a["status"] == status]


@pytest.fixture
def alertmanager(tmp_path: Path) -> Iterator[tuple[str, Webhook]]:
    assert shutil.which(BINARY), f"{BINARY} missing: .ci/run installs it (deploy/local/install-prometheus.sh)"
    hook = Webhook()
    config = tmp_path / "alertmanager.yml"
    config.write_text(
        "route:\n  receiver: hook\n  group_by: [cluster, job_id, code]\n  group_wait: 1s\n  group_interval: 1s\n"
        "  repeat_interval: 1h\nreceivers:\n  - name: hook\n    webhook_configs:\n"
        f"      - url: {hook.url}\n        send_resolved: true\n")
    port = free_port()
    process = subprocess.Popen(
        [BINARY, f"--config.file={config}", f"--storage.path={tmp_path / 'data'}",
         f"--web.listen-address=127.0.0.1:{port}", "--cluster.listen-address="],
        stdout=subprocess.DEVNULL, stderr=(tmp_path / "alertmanager.log").open("wb"))
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"{url}/-/ready", timeout=2):
                    break
            except OSError:
                assert process.poll() is None and time.monotonic() < deadline, (tmp_path / "alertmanager.log").read_text()
                time.sleep(0.2)
        yield url, hook
    finally:
        process.terminate()
        process.wait(15)
        hook.server.shutdown()


def _alerts(url: str, *, active: bool = True) -> list[dict[str, Any]]:
    with urllib.request.urlopen(f"{url}/api/v2/alerts?active={'true' if active else 'false'}", timeout=5) as r:
        found: list[dict[str, Any]] = json.loads(r.read())
    return found


@pytest.fixture
def env(redis_url: str, unique: str) -> dict[str, str]:
    """The incident store the alert sinks keep their incidents in; the recorded verdicts are from 2020, so no age
    limit here (its own test below)."""
    return {**os.environ, "CORRELATOR_REDIS_URL": redis_url, "CORRELATOR_ALERTS_NAMESPACE": unique,
            "CORRELATOR_ALERT_MAX_AGE_MIN": str(NO_AGE_LIMIT_MIN)}


def _forward(url: str, verdicts: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, "alerts", "--alertmanager-url", url, "--verdicts-file", str(verdicts)],
                          capture_output=True, text=True, timeout=120, check=False, env=env)


def _until(check: Any, timeout_s: float = 30) -> Any:
    deadline = time.monotonic() + timeout_s
    while not (found := check()) and time.monotonic() < deadline:
        time.sleep(0.3)
    return found


def test_verdicts_become_alerts_and_notifications(alertmanager: tuple[str, Webhook], tmp_path: Path,
                                                  env: dict[str, str]) -> None:
    url, hook = alertmanager
    verdicts = [json.loads(line) for line in VERDICTS.read_text().splitlines() if line.startswith("{")]
    twice = tmp_path / "twice.jsonl"
    twice.write_text("".join(json.dumps(v) + "\n" for v in verdicts + verdicts[:2]))  # at least once: duplicates
    done = _forward(url, twice, env)
    assert done.returncode == 0, done.stderr
    assert f"sent {len(verdicts) + 2}," in done.stderr  # Alertmanager folds a repeat into its alert
    active = _alerts(url)
    assert {a["labels"]["verdict_id"] for a in active} == {v["verdict_id"] for v in verdicts}
    assert len(active) == len(verdicts), "a verdict delivered twice is one alert"
    first = next(a for a in active if a["labels"]["verdict_id"] == verdicts[0]["verdict_id"])
    assert first["labels"]["code"] == verdicts[0]["root_cause"]["code"]
    assert first["labels"]["cluster"] == verdicts[0]["cluster"] and first["labels"]["job_id"] == verdicts[0]["job_id"]
    assert first["annotations"]["summary"] == verdicts[0]["root_cause"]["title"]
    assert first["annotations"]["remediation"].startswith("1. ")
    firing = _until(lambda: hook.alerts("firing"))
    assert {a["labels"]["verdict_id"] for a in firing} <= {v["verdict_id"] for v in verdicts} and firing
    groups = {tuple(sorted(body["groupLabels"].items())) for body in hook.bodies}
    assert len(groups) == len({(v["cluster"], v["job_id"], v["root_cause"]["code"]) for v in verdicts})


def test_a_revision_with_another_code_or_host_resolves_the_earlier_alert(alertmanager: tuple[str, Webhook],
                                                                   tmp_path: Path, env: dict[str, str]) -> None:
    url, hook = alertmanager
    first = json.loads(next(line for line in VERDICTS.read_text().splitlines() if line.startswith("{")))
    early = {**first, "root_cause": {**first["root_cause"], "code": "INSUFFICIENT_DATA", "title": "Too little"}}
    revised = {**first, "revision": 1, "revision_reason": "HDFS logs arrived late"}
    path = tmp_path / "revised.jsonl"
    path.write_text(json.dumps(early) + "\n")
    env = {**env, "CORRELATOR_ALERT_CODES": "all"}  # INSUFFICIENT_DATA alerts only when asked to
    assert _forward(url, path, env).returncode == 0
    assert _until(lambda: hook.alerts("firing"))
    path.write_text(json.dumps(revised) + "\n")
    assert _forward(url, path, env).returncode == 0
    active = _until(lambda: [a for a in _alerts(url) if a["labels"]["code"] == first["root_cause"]["code"]])
    assert [a["labels"]["code"] for a in _alerts(url)] == [first["root_cause"]["code"]]
    assert active[0]["annotations"]["revision"] == "revision 1: HDFS logs arrived late"
    resolved = _until(lambda: hook.alerts("resolved"))
    assert [a["labels"]["code"] for a in resolved] == ["INSUFFICIENT_DATA"]
    moved = {**revised, "revision": 2, "root_cause": {**first["root_cause"], "hosts": ["dn-3.example.com"]}}
    path.write_text(json.dumps(moved) + "\n")  # the same code on another host: the revision-1 alert ends too
    assert _forward(url, path, env).returncode == 0
    assert _until(lambda: [a["labels"]["hosts"] for a in _alerts(url)] == ["dn-3.example.com"])


def test_an_alertmanager_that_is_down_is_waited_for_not_skipped(tmp_path: Path, env: dict[str, str]) -> None:
    """Nothing listens: the forwarder retries (it would commit nothing on the topic) until it is stopped."""
    port = free_port()
    path = tmp_path / "one.jsonl"
    path.write_text(next(line for line in VERDICTS.read_text().splitlines() if line.startswith("{")) + "\n")
    process = subprocess.Popen([*CLI, "alerts", "--alertmanager-url",
                                f"http://127.0.0.1:{port}", "--verdicts-file", str(path)],
                               stderr=subprocess.PIPE, text=True, env=env)
    try:
        time.sleep(4)
        assert process.poll() is None, "gave up on a verdict while Alertmanager was down"
    finally:
        process.terminate()
        _, err = process.communicate(timeout=30)
    assert "sent 0," in err and "retries" in err


def test_an_incident_that_goes_quiet_ends_its_alerts(alertmanager: tuple[str, Webhook], redis_url: str,
                                                     unique: str) -> None:
    """Alerts fire out their hold unless their incident ends first: the sweep ends them all, and Alertmanager
    notifies the receiver that they resolved."""
    url, hook = alertmanager
    verdicts = [json.loads(line) for line in VERDICTS.read_text().splitlines() if line.startswith("{")][:3]
    client = AlertmanagerClient(url)
    now = [1_700_000_000_000]
    pager = Pager([Lane(AlertmanagerTarget(client), RedisIncidentStore(redis_url, f"{unique}:alertmanager"))],
                  PagerConfig(quiet_ms=3_600_000), clock_ms=lambda: now[0])
    old_ones = AlertPolicy(max_age_ms=NO_AGE_LIMIT_MIN * 60_000)
    sinks = Sinks([AlertForwarder(client), pager], policy=old_ones)
    stop = threading.Event()
    assert [sinks.deliver(v, stop) for v in verdicts] == [Outcome.POSTED] * 3
    assert len(_alerts(url)) == 3 and _until(lambda: hook.alerts("firing"))
    assert sinks.sweep() == 0
    now[0] += 3_600_001
    assert sinks.sweep() == 1
    assert _until(lambda: not _alerts(url)), "the incident's alerts still fire"
    ended = _until(lambda: {a["labels"]["verdict_id"] for a in hook.alerts("resolved")} == {
        v["verdict_id"] for v in verdicts})
    assert ended, hook.alerts("resolved")


def test_routing_severity_held_back_codes_and_old_verdicts(alertmanager: tuple[str, Webhook], tmp_path: Path,
                                                         redis_url: str, unique: str) -> None:
    """On-call's routing: a severity label from the cause registry (overridden per code), a code that does not
    alert is not sent, a verdict about an old failure is not fired now, and the counts are what Alertmanager got."""
    url, hook = alertmanager
    now = datetime.now(UTC)
    first = json.loads(next(line for line in VERDICTS.read_text().splitlines() if line.startswith("{")))

    def fresh(n: int, code: str, minutes_ago: float) -> dict[str, Any]:
        at = (now - timedelta(minutes=minutes_ago)).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        return {**first, "verdict_id": f"{unique}-{n}", "failure": {**first["failure"], "failed_at": at},
                "root_cause": {**first["root_cause"], "code": code}}

    sent = [fresh(1, "HDFS_DIRECTORY_SCAN", 5), fresh(2, "DATANODE_DISK_FULL", 5), fresh(3, "HDFS_SLOW_DISK", 5)]
    held = [fresh(4, "INSUFFICIENT_DATA", 5), fresh(5, "HDFS_DIRECTORY_SCAN", 600)]
    path = tmp_path / "mixed.jsonl"
    path.write_text("".join(json.dumps(v) + "\n" for v in [*sent, *held]))
    env = {**os.environ, "CORRELATOR_REDIS_URL": redis_url, "CORRELATOR_ALERTS_NAMESPACE": unique,
           "CORRELATOR_ALERT_SEVERITY": "HDFS_SLOW_DISK=critical"}
    done = _forward(url, path, env)
    assert done.returncode == 0, done.stderr
    assert "verdicts read 5: sent 3," in done.stderr and "held back by the alert policy 2" in done.stderr
    assert "alertmanager: 3 alert(s) posted" in done.stderr
    active = {a["labels"]["verdict_id"]: a["labels"] for a in _alerts(url)}
    assert set(active) == {v["verdict_id"] for v in sent}, "a held-back code or an old failure was sent"
    assert {active[v["verdict_id"]]["severity"] for v in sent[:1]} == {"warning"}
    assert active[sent[1]["verdict_id"]]["severity"] == "critical"  # HDFS refuses every write: the registry's
    assert active[sent[2]["verdict_id"]]["severity"] == "critical"  # the override
    notified = _until(lambda: {a["labels"]["verdict_id"] for a in hook.alerts("firing")} == set(active))
    assert notified, hook.bodies


def test_a_lost_transaction_pages_above_every_verdict_and_a_warning_pages_no_one(
        alertmanager: tuple[str, Webhook], tmp_path: Path, env: dict[str, str]) -> None:
    """The real Kafka-sink run's loss records (tests/data/lab/3.3.6-1.20.1/kafka-sink-loss) and a real early warning
    (state-growth) beside a verdict, as the risk and verdict topics carry them: each loss one critical alert naming
    its transaction, the warning none."""
    from correlator.core.explain.risk import risk_to_dict
    from correlator.core.explain.transactions import TransactionLoss, loss_to_dict
    from correlator.offline.analyze import ordered_events, run_analysis

    url, hook = alertmanager
    lab = Path(__file__).resolve().parents[1] / "data" / "lab" / "3.3.6-1.20.1"
    losses: list[TransactionLoss] = []
    run_analysis(ordered_events([str(lab / "kafka-sink-loss")], cluster="lab"), losses=losses)
    _, warnings = run_analysis(ordered_events([str(lab / "state-growth")], cluster="lab"))
    verdict = json.loads(next(line for line in VERDICTS.read_text().splitlines() if line.startswith("{")))
    records = [verdict, risk_to_dict(warnings[0]), *(loss_to_dict(loss) for loss in losses)]
    path = tmp_path / "mixed.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    done = _forward(url, path, env)
    assert done.returncode == 0, done.stderr
    active = _alerts(url)
    lost = [a for a in active if a["labels"]["alertname"] == "CorrelatorRecordsLost"]
    assert {a["labels"]["loss_id"] for a in lost} == {loss.loss_id for loss in losses} and len(losses) == 5
    assert {a["labels"]["severity"] for a in lost} == {"critical"}
    assert {a["labels"]["transactional_id"] for a in lost} == {loss.transactional_id for loss in losses}
    assert all("Completed rollback of ongoing transaction" in a["annotations"]["description"] for a in lost)
    others = [a for a in active if a["labels"]["alertname"] != "CorrelatorRecordsLost"]
    assert [a["labels"]["verdict_id"] for a in others] == [verdict["verdict_id"]], "a warning alerted"
    assert _until(lambda: {a["labels"].get("loss_id") for a in hook.alerts("firing")} >= {l.loss_id for l in losses})
