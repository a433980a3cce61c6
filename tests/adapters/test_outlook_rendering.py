"""The outlook and the what-if figures in the Slack incident message and on the report page, escaped like any log text."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

from correlator.adapters.report_html import verdict_page
from correlator.adapters.slack_blocks import parent_message
from correlator.core.explain.verdict import verdict_from_dict, verdict_to_dict
from correlator.core.incidents import observe, occurrence
from correlator.offline.analyze import analyze

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "scenarios"
EVIL = "<!channel> <http://evil|x> & <b>bold</b>"


def _recurring() -> list[dict[str, Any]]:
    return [json.loads(json.dumps(verdict_to_dict(v))) for v in analyze([str(GOLDEN / "recurring")])]


def _incident(verdicts: list[dict[str, Any]]):  # type: ignore[no-untyped-def]
    incident = None
    for v in verdicts:
        incident = observe(incident, occurrence(v), 3_600_000).incident
    return incident


def _mrkdwn(blocks: list[dict[str, Any]]) -> str:
    return "\n".join(obj["text"] for b in blocks for obj in [b.get("text"), *b.get("fields", []),
                                                            *b.get("elements", [])] if obj and obj["type"] == "mrkdwn")


def _poisoned(verdict: dict[str, Any]) -> dict[str, Any]:
    bad = copy.deepcopy(verdict)
    bad["outlook"]["windows"][0]["host"] = EVIL
    bad["outlook"]["windows"][1]["basis"] = EVIL
    bad["whatif"][0]["text"] = EVIL
    bad["whatif"][0]["assumes"] = EVIL
    return bad


def test_slack_parent_shows_outlook_and_figures_under_their_lines() -> None:
    verdicts = _recurring()
    text = _mrkdwn(parent_message(verdicts[-1], _incident(verdicts)).blocks)
    assert ("*Outlook*\n• The next DirectoryScanner run on dn02.example.com is expected at about "
            "2020-01-02T10:55:54.025Z") in text
    assert "• The next DirectoryScanner run on dn01.example.com is expected at about 2020-01-02T12:51:00.000Z" in text
    remediation = text[text.index("*Remediation*"):text.index("*Outlook*")].splitlines()
    raise_at = next(i for i, line in enumerate(remediation) if "directoryscan.interval (default" in line)
    assert "↳ _what if:_ a scan interval of 24 h would have overlapped 3 of these 4 checkpoints instead of 4" \
        in remediation[raise_at + 1]
    assert "the job would have restarted 0 times instead of 4" in text


def test_slack_escapes_outlook_and_figure_text() -> None:
    verdicts = _recurring()
    text = _mrkdwn(parent_message(_poisoned(verdicts[-1]), _incident(verdicts)).blocks)
    assert "&lt;!channel&gt; &lt;http://evil|x&gt; &amp;" in text
    assert not [t for t in re.findall(r"<[^<>]*>", text) if t.startswith(("<!", "<@")) or "evil" in t]


def test_slack_without_outlook_or_with_a_broken_one_still_posts() -> None:
    verdicts = _recurring()
    old = {k: v for k, v in verdicts[-1].items() if k not in ("outlook", "whatif")}  # a verdict from before the fields
    assert "*Outlook*" not in _mrkdwn(parent_message(old, _incident(verdicts)).blocks)
    broken = {**verdicts[-1], "outlook": {"kind": "directory_scan", "windows": "nope"}}
    text = _mrkdwn(parent_message(broken, _incident(verdicts)).blocks)
    assert "*Outlook*" not in text and "*Remediation*" in text


def test_report_page_shows_outlook_and_figures_escaped() -> None:
    verdict = verdict_from_dict(_recurring()[-1])
    page = verdict_page(verdict, None)
    assert '<h2>Outlook</h2><ul id="outlook"><li>The next DirectoryScanner run on dn02.example.com is expected ' in page
    assert '<p class="whatif">what if: a scan interval of 24 h would have overlapped 3 of these 4' in page
    evil = verdict_page(verdict_from_dict(_poisoned(_recurring()[-1])), None)
    assert "<b>bold</b>" not in evil and "&lt;b&gt;bold&lt;/b&gt;" in evil
    plain = verdict_page(analyze([str(GOLDEN / "slow-disk")])[0], None)
    assert 'id="outlook"' not in plain
