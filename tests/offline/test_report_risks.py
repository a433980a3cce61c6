"""The report's early warnings: each warning once in its last state, its words escaped, a chart of its checkpoints."""

from __future__ import annotations

import re
from dataclasses import replace
from html import escape
from pathlib import Path

import pytest
from click.testing import CliRunner

from correlator.adapters.report_html import page_key
from correlator.adapters.report_risks import chart, latest, losses_section, risks_section
from correlator.cli import cli
from correlator.core.explain.transactions import TransactionLoss
from correlator.offline.analyze import ordered_events, run_analysis
from tests.support.browser import artefact, chromium_page

GROWTH = Path(__file__).resolve().parents[1] / "data" / "lab" / "3.3.6-1.20.1" / "state-growth"


def test_the_report_of_a_real_growing_state_shows_its_warning_and_chart(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["analyze", "--report", str(tmp_path), str(GROWTH)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    index = (tmp_path / "index.html").read_text(encoding="utf-8")
    _, risks = run_analysis(ordered_events([str(GROWTH)]))
    [last] = latest(risks)
    assert last.status == "superseded"
    assert index.count("<h2>Early warnings</h2>") == 1 and index.count('class="risk"') == 1
    assert index.count('class="duration"') == len(last.series), "one dot per completed checkpoint of the window"
    assert 'class="timeout"' in index and 'class="expiry"' in index and 'class="size"' in index
    assert "<script" not in index
    # the verdict the warning led to shows it too, with the same chart
    [page] = [p for p in tmp_path.glob("*.html") if p.name != "index.html"]
    html = page.read_text(encoding="utf-8")
    assert html.count('class="risk"') == 1 and html.count('class="duration"') == len(last.series)
    assert html.index('id="explanation"') < html.index('class="risk"') < html.index('id="timeline"')


def test_log_words_in_a_warning_are_escaped() -> None:
    _, risks = run_analysis(ordered_events([str(GROWTH)]))
    hostile = replace(risks[0], job_id="<img src=x onerror=alert(1)>", headline="<script>alert(1)</script>",
                      advice=("<b>bold</b>",))
    html = risks_section([hostile])
    assert "<script>" not in html and "<img" not in html and "<b>" not in html
    assert "&lt;script&gt;" in html


def test_the_chart_draws_only_numbers_it_was_given() -> None:
    _, risks = run_analysis(ordered_events([str(GROWTH)]))
    svg = chart(risks[0])
    assert svg.startswith("<svg") and svg.endswith("</svg>")
    ys = [float(v) for v in re.findall(r'class="duration" cx="[\d.]+" cy="([\d.]+)"', svg)]
    assert ys[-1] < ys[0]


@pytest.mark.browser
def test_chromium_draws_the_warning_chart(tmp_path: Path) -> None:
    """In headless Chromium the chart is drawn at a readable size, the page has no horizontal scroll at 1280 px and
    no console error; a screenshot for people."""
    result = CliRunner().invoke(cli, ["analyze", "--report", str(tmp_path), str(GROWTH)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    with chromium_page() as p:
        p.page.goto((tmp_path / "index.html").as_uri())
        svg = p.page.locator("section.risk svg")
        box = svg.bounding_box()
        assert svg.is_visible() and box is not None and box["width"] >= 400 and box["height"] >= 120
        assert p.page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        assert p.page.locator("section.risk svg circle.duration").count() > 8
        p.page.screenshot(path=artefact("report-risk.png"), full_page=True)
        assert p.errors() == []


LOSS = Path(__file__).resolve().parents[1] / "data" / "lab" / "3.3.6-1.20.1" / "kafka-sink-loss"


def test_the_report_of_a_real_loss_names_it_on_the_index_and_on_the_pages_of_its_failures(tmp_path: Path) -> None:
    """The lab's exactly-once sink lost a transaction: the index lists the loss before the warnings, with its
    transactional id, its failed checkpoints and the broker's line; each page of one of those failures shows it."""
    result = CliRunner().invoke(cli, ["analyze", "--report", str(tmp_path), str(LOSS)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    losses: list[TransactionLoss] = []
    verdicts, _ = run_analysis(ordered_events([str(LOSS)]), losses=losses)
    assert losses, "the fixture's abort is read as a loss"
    index = (tmp_path / "index.html").read_text(encoding="utf-8")
    assert index.count("<h2>Records lost</h2>") == 1 and index.count('class="loss"') == len(losses)
    assert index.index("<h2>Records lost</h2>") < index.index("<h2>Early warnings</h2>")
    for loss in losses:
        assert loss.transactional_id and escape(loss.transactional_id) in index
        assert escape(loss.line) in index
    failed = {c for loss in losses for c in loss.failed_checkpoints}
    pages = {v.checkpoint_id: (tmp_path / f"{page_key(v.verdict_id)}.html").read_text(encoding="utf-8")
             for v in verdicts}
    assert failed & set(pages), "a verdict of a failure behind the loss"
    for checkpoint, html in pages.items():
        assert ('class="loss"' in html) == (checkpoint in failed), checkpoint


def test_log_words_in_a_loss_are_escaped() -> None:
    losses: list[TransactionLoss] = []
    run_analysis(ordered_events([str(LOSS)]), losses=losses)
    hostile = replace(losses[0], transactional_id="<img src=x onerror=alert(1)>", line="<script>alert(1)</script>",
                      headline="<b>lost</b>", advice=("<i>x</i>",))
    html = losses_section([hostile])
    assert "<script>" not in html and "<img" not in html and "<b>" not in html and "<i>" not in html
    assert "&lt;script&gt;" in html
    assert losses_section([]) == ""
