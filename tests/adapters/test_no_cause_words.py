"""A verdict that names no cause names no culprit: ``UNEXPLAINED`` and ``INSUFFICIENT_DATA`` introduce their hosts as
looked at or missing logs of, never "cause on", in every rendering a person reads (text, report page, Slack,
Alertmanager); a verdict with a cause never uses those words."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from correlator.adapters.alertmanager import alert_of
from correlator.adapters.report_html import verdict_page
from correlator.adapters.slack_blocks import parent_message, reply_message
from correlator.core.explain.causes import Code
from correlator.core.explain.registry import hosts_are
from correlator.core.explain.verdict import Verdict, verdict_to_dict
from correlator.core.explain.verdict_text import verdict_text
from correlator.core.incidents import observe, occurrence
from tests.support.analyzed import verdicts_of

SCENARIOS = Path(__file__).resolve().parents[1] / "golden" / "scenarios"
NO_CAUSE = {Code.UNEXPLAINED: "unexplained", Code.INSUFFICIENT_DATA: "insufficient-data"}


def _renderings(v: Verdict) -> dict[str, str]:
    """Each rendering's text, lower-cased (Slack capitalises a field's name)."""
    d = verdict_to_dict(v)
    incident = observe(None, occurrence(d), 3_600_000).incident
    slack = [parent_message(d, incident), reply_message(d, incident)]
    texts = {
        "text": verdict_text(v, 100),
        "report": verdict_page(v, None),
        "slack": json.dumps([[m.text, m.blocks] for m in slack]),
        "alert": json.dumps(alert_of(d, now_s=0, hold_s=60)),
    }
    return {where: text.lower() for where, text in texts.items()}


@pytest.mark.parametrize("code", list(NO_CAUSE), ids=str)
def test_a_verdict_without_a_cause_never_says_cause_on(code: Code) -> None:
    verdicts = [v for v in verdicts_of(SCENARIOS / NO_CAUSE[code]) if v.root_cause.code == code]
    assert verdicts and all(v.root_cause.hosts for v in verdicts), "the scenario's verdicts name the hosts they concern"
    for v in verdicts:
        for where, text in _renderings(v).items():
            assert "cause on" not in text, (where, v.verdict_id)
            assert hosts_are(code) in text, (where, v.verdict_id)


def test_a_verdict_with_a_cause_never_says_looked_at_or_missing() -> None:
    [v, *_] = verdicts_of(SCENARIOS / "seed")
    assert v.root_cause.code not in NO_CAUSE and v.root_cause.hosts
    for where, text in _renderings(v).items():
        assert not any(hosts_are(code) in text for code in NO_CAUSE), where
