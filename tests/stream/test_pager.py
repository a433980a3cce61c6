"""Incidents reach the webhook, PagerDuty and Opsgenie once when they open and once when they resolve, across
restarts, duplicates and outages (local doubles of the services, a real Redis; ``correlator alerts`` end to end over a
real Kafka topic)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from correlator.adapters.pagers import OpsgenieTarget, PagerDutyTarget, WebhookTarget
from correlator.adapters.redis_incidents import RedisIncidentStore
from correlator.notify.pager import Lane, Pager, PagerConfig
from correlator.notify.sink import Outcome
from tests.support.fake_oncall import GENIE_KEY, ROUTING_KEY, WEBHOOK_SECRET, FakeOnCall
from tests.support.services import ROOT
from tests.support.worker import CLI

pytestmark = [pytest.mark.integration]

VERDICTS = [json.loads(line) for line in (ROOT / "tests" / "data" / "verdicts" / "recurring.jsonl").read_text()
            .splitlines() if line.startswith("{")]
HOUR_MS = 3_600_000


@pytest.fixture
def oncall() -> Iterator[FakeOnCall]:
    fake = FakeOnCall().start()
    yield fake
    fake.stop()


def _pager(fake: FakeOnCall, redis_url: str, namespace: str, clock: Callable[[], int]) -> Pager:
    targets = [WebhookTarget(f"{fake.url}/hook", WEBHOOK_SECRET), PagerDutyTarget(fake.url, ROUTING_KEY),
               OpsgenieTarget(fake.url, GENIE_KEY)]
    lanes = [Lane(t, RedisIncidentStore(redis_url, f"{namespace}:{t.name}")) for t in targets]
    return Pager(lanes, PagerConfig(quiet_ms=2 * HOUR_MS, backoff_initial_s=0.05), clock_ms=clock)


def _counts(fake: FakeOnCall) -> dict[str, tuple[int, int]]:
    return {"webhook": (len(fake.webhook("trigger")), len(fake.webhook("resolve"))),
            "pagerduty": (len(fake.pagerduty("trigger")), len(fake.pagerduty("resolve"))),
            "opsgenie": (len(fake.opsgenie("create")), len(fake.opsgenie("close")))}


def test_one_alert_per_incident_and_one_resolve_across_a_restart(oncall: FakeOnCall, redis_url: str,
                                                                 unique: str) -> None:
    now = [1_700_000_000_000]
    stop = threading.Event()
    first = _pager(oncall, redis_url, unique, lambda: now[0])
    for verdict in VERDICTS[:3] + VERDICTS[:1]:  # at least once: a duplicate
        assert first.deliver(verdict, stop) is not None
    assert _counts(oncall) == {"webhook": (1, 0), "pagerduty": (1, 0), "opsgenie": (1, 0)}
    assert first.stats.duplicates == 1

    restarted = _pager(oncall, redis_url, unique, lambda: now[0])  # another process: only Redis is shared
    outcomes = [restarted.deliver(v, stop) for v in VERDICTS]
    assert outcomes[:3] == [Outcome.DUPLICATE] * 3 and set(outcomes[3:]) == {Outcome.POSTED}
    assert restarted.sweep() == 0, "not quiet yet"
    now[0] += 2 * HOUR_MS + 1
    assert restarted.sweep() == 3  # one incident, resolved in each of the three targets
    assert first.sweep() == 0 and restarted.sweep() == 0
    assert _counts(oncall) == {"webhook": (1, 1), "pagerduty": (1, 1), "opsgenie": (1, 1)}
    assert not oncall.received.refused

    trigger = oncall.pagerduty("trigger")[0]
    assert oncall.pagerduty("resolve")[0]["dedup_key"] == trigger["dedup_key"]
    assert trigger["payload"]["class"] == "HDFS_DIRECTORY_SCAN" and trigger["payload"]["severity"] == "warning"
    assert trigger["payload"]["custom_details"]["failures"] == "1"
    alert = oncall.opsgenie("create")[0]
    assert len(alert["message"]) <= 130 and alert["alias"] == trigger["dedup_key"]
    assert oncall.received.opsgenie[-1][0] == f"close:{alert['alias']}"
    headers, resolved = oncall.received.webhook[-1]
    assert resolved["event"] == "resolve" and resolved["details"]["failures"] == str(len(VERDICTS))
    assert headers["Idempotency-Key"] == f"{trigger['dedup_key']}:resolve"
    assert resolved["verdict_id"] == VERDICTS[-1]["verdict_id"], "the resolve speaks for the latest verdict"

    again = {**VERDICTS[-1], "verdict_id": "v-after-quiet", "failure": {
        **VERDICTS[-1]["failure"], "failed_at": "2020-01-03T17:00:00.000Z"}}
    assert restarted.deliver(again, stop) is Outcome.POSTED  # a day later: the incident opens afresh
    assert _counts(oncall)["pagerduty"] == (2, 1)
    assert oncall.pagerduty("trigger")[1]["dedup_key"] != trigger["dedup_key"]


def test_a_service_that_is_down_is_retried_and_still_gets_one_alert(oncall: FakeOnCall, redis_url: str,
                                                                    unique: str) -> None:
    oncall.fail_next = 4
    pager = _pager(oncall, redis_url, unique, lambda: 1_700_000_000_000)
    assert pager.deliver(VERDICTS[0], threading.Event()) is Outcome.POSTED
    assert _counts(oncall) == {"webhook": (1, 0), "pagerduty": (1, 0), "opsgenie": (1, 0)}
    assert pager.stats.retries == 4


def test_a_refused_request_is_said_and_passed_over(oncall: FakeOnCall, redis_url: str, unique: str,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    lane = Lane(PagerDutyTarget(oncall.url, "not-the-key"), RedisIncidentStore(redis_url, f"{unique}:pd"))
    pager = Pager([lane], PagerConfig(backoff_initial_s=0.05))
    assert pager.deliver(VERDICTS[0], threading.Event()) is Outcome.SKIPPED
    assert "pagerduty refused" in caplog.text and "Invalid routing key" in caplog.text
    assert ROUTING_KEY not in caplog.text and "not-the-key" not in caplog.text


def _near(verdict: dict[str, Any], n: int, at: datetime) -> dict[str, Any]:
    """The verdict again as the n-th failure of one incident, a second apart."""
    stamp = (at + timedelta(seconds=n)).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return {**verdict, "verdict_id": f"{verdict['verdict_id']}-{n}", "failure": {**verdict["failure"], "failed_at": stamp}}


def test_correlator_alerts_pages_once_across_a_restart_and_resolves(oncall: FakeOnCall, redis_url: str,
                                                                    kafka_bootstrap: str, unique: str,
                                                                    tmp_path: Path) -> None:
    topic = f"correlator.verdicts.{unique}"
    admin = AdminClient({"bootstrap.servers": kafka_bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    producer = Producer({"bootstrap.servers": kafka_bootstrap})
    at = datetime.now(UTC)

    def publish(first: int, last: int) -> None:
        for n in range(first, last):
            producer.produce(topic, json.dumps(_near(VERDICTS[0], n, at)).encode(), key=b"k")
        assert producer.flush(10) == 0

    env = {**os.environ, "CORRELATOR_BOOTSTRAP_SERVERS": kafka_bootstrap, "CORRELATOR_REDIS_URL": redis_url,
           "CORRELATOR_TOPIC_VERDICTS": topic, "CORRELATOR_ALERTS_GROUP": f"alerts-{unique}",
           "CORRELATOR_ALERTS_NAMESPACE": unique, "CORRELATOR_ALERT_RESOLVE_AFTER_MIN": "0.05",
           "CORRELATOR_WEBHOOK_URL": f"{oncall.url}/hook", "CORRELATOR_WEBHOOK_SECRET": WEBHOOK_SECRET,
           "CORRELATOR_PAGERDUTY_URL": oncall.url, "CORRELATOR_PAGERDUTY_ROUTING_KEY": ROUTING_KEY,
           "CORRELATOR_OPSGENIE_URL": oncall.url, "CORRELATOR_OPSGENIE_API_KEY": GENIE_KEY}

    def run() -> subprocess.Popen[str]:
        return subprocess.Popen([*CLI, "alerts", "--follow"], env=env, stderr=subprocess.PIPE, text=True)

    def until(check: Callable[[], bool], timeout_s: float = 30) -> bool:
        deadline = time.monotonic() + timeout_s
        while not check() and time.monotonic() < deadline:
            time.sleep(0.2)
        return check()

    def stopped(process: subprocess.Popen[str]) -> str:
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=30)
        assert process.returncode == 0, err
        return err

    publish(0, 2)
    process = run()
    try:
        assert until(lambda: _counts(oncall) == {"webhook": (1, 0), "pagerduty": (1, 0), "opsgenie": (1, 0)})
        time.sleep(1)  # the second verdict of the incident is in: nothing more is sent for it
    finally:
        err = stopped(process)
    assert "sent 2," in err and "webhook trigger: 1 request(s)" in err, err  # two verdicts, one incident
    publish(2, 4)  # the same incident goes on while nothing listens
    process = run()
    try:
        assert until(lambda: _counts(oncall) == {"webhook": (1, 1), "pagerduty": (1, 1), "opsgenie": (1, 1)})
    finally:
        err = stopped(process)
    assert "sent 2," in err and "webhook resolve: 1 request(s)" in err, err
    assert _counts(oncall) == {"webhook": (1, 1), "pagerduty": (1, 1), "opsgenie": (1, 1)}
    assert oncall.webhook("resolve")[0]["details"]["failures"] == "4"
    assert ROUTING_KEY not in err and GENIE_KEY not in err and WEBHOOK_SECRET not in err
