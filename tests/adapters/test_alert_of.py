"""The alert a verdict becomes: its identity labels, its words as bounded plain-text annotations; a record that is
no verdict is skipped with a warning, never silently."""

from __future__ import annotations

import json
import threading

import pytest

from correlator.adapters.alertmanager import ALERTNAME, ANNOTATION_CHARS, AlertmanagerClient, alert_of, labels_of
from correlator.adapters.report_html import page_key
from correlator.notify.alert_forwarder import AlertForwarder
from correlator.notify.sink import Outcome
from tests.support.services import ROOT

VERDICT = json.loads(next(line for line in (ROOT / "tests/data/verdicts/recurring.jsonl").read_text().splitlines()
                          if line.startswith("{")))


def test_labels_name_the_verdict_and_its_cause() -> None:
    alert = alert_of(VERDICT, now_s=1_800_000_000.0, hold_s=3600)
    assert alert["labels"] == {"alertname": ALERTNAME, "cluster": "default", "job_id": VERDICT["job_id"],
                               "code": "HDFS_DIRECTORY_SCAN", "hosts": "dn-2.example.com", "severity": "warning",
                               "verdict_id": VERDICT["verdict_id"]}
    assert alert["startsAt"] == "2027-01-15T08:00:00.000Z" and alert["endsAt"] == "2027-01-15T09:00:00.000Z"
    assert alert["annotations"]["summary"] == VERDICT["root_cause"]["title"]
    assert alert["annotations"]["remediation"].splitlines()[0] == f"1. {VERDICT['remediation'][0]}"
    assert "revision" not in alert["annotations"] and "generatorURL" not in alert
    assert labels_of(VERDICT) == alert["labels"]


def test_log_text_is_cut_and_stripped_of_control_characters() -> None:
    hostile = {**VERDICT, "root_cause": {**VERDICT["root_cause"],
                                         "explanation": "a\x1b[31mred\x00\r" + "x" * (3 * ANNOTATION_CHARS)}}
    description = alert_of(hostile, now_s=0.0, hold_s=60)["annotations"]["description"]
    assert len(description) == ANNOTATION_CHARS and description.endswith("…")
    assert description.startswith("a [31mred  x") and description.isprintable()


def test_a_revision_says_so_and_a_report_url_links_the_verdict() -> None:
    revised = {**VERDICT, "revision": 2, "revision_reason": "HDFS logs arrived late"}
    alert = alert_of(revised, now_s=0.0, hold_s=60, report_base_url="https://correlator.example.com/")
    assert alert["annotations"]["revision"] == "revision 2: HDFS logs arrived late"
    assert alert["generatorURL"] == f"https://correlator.example.com/verdicts/{page_key(VERDICT['verdict_id'])}"


def test_a_record_that_is_no_verdict_is_skipped_and_said(caplog: pytest.LogCaptureFixture) -> None:
    forwarder = AlertForwarder(AlertmanagerClient("http://127.0.0.1:9"))
    assert forwarder.deliver({"verdict_id": "x"}, threading.Event()) is Outcome.SKIPPED
    assert forwarder.stats.skipped == 1 and "skipping a record" in caplog.text
