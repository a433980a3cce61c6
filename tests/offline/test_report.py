"""``correlator analyze --report DIR``: the HTML report, read as HTML and shown in a real headless Chromium."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from correlator.adapters.report_html import index_page, page_key, verdict_page
from correlator.core.explain.verdict import verdict_from_dict
from correlator.offline.analyze import analyze
from tests.support.browser import artefact, chromium_page

SEED = Path(__file__).resolve().parents[1] / "golden" / "scenarios" / "seed"
INJECTION = Path(__file__).resolve().parents[1] / "data" / "verdicts" / "injection.jsonl"
EVIL = "<script>alert(1)</script>"


@pytest.fixture(scope="module")
def evil_seed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The seed incident whose operator is named ``<script>alert(1)</script>`` in the Flink logs."""
    root = tmp_path_factory.mktemp("evil") / "seed"
    shutil.copytree(SEED, root)
    for log in root.glob("flink-*"):
        log.write_text(log.read_text(encoding="utf-8").replace(
            "Source: analytics_standarddata_weapp_share-druid -> Map", EVIL), encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def report(evil_seed: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report") / "out"
    result = subprocess.run([sys.executable, "-m", "correlator.cli", "analyze", "--report", str(out), str(evil_seed)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("\n") == 1  # the verdict JSON still goes to stdout
    # where the report went is said once, on stderr with the run's other words
    assert result.stderr.count(f"correlator: analyze: report written to {out / 'index.html'} (1 verdict page)") == 1
    return out


def test_report_has_an_index_and_a_page_per_verdict(report: Path, evil_seed: Path) -> None:
    [verdict] = analyze([str(evil_seed)])
    key = page_key(verdict.verdict_id)
    assert sorted(p.name for p in report.iterdir()) == sorted(
        ["index.html", f"{key}.html", f"{key}.png", f"{key}.svg"])
    page = (report / f"{key}.html").read_text(encoding="utf-8")
    assert EVIL not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<script" not in page.lower() and "stylesheet" not in page and "@import" not in page
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", page)  # nothing fetched from elsewhere
    assert verdict.root_cause.known_issue in page and all(e.ref in page for e in verdict.evidence)
    assert page.count("<details") == len(verdict.evidence)  # the raw lines, where the hostile name is escaped too


def test_every_field_of_a_hostile_verdict_is_escaped() -> None:
    """Markup in any log-derived field (hosts, summaries, refs, remediation, ids) comes out as text."""
    for line in INJECTION.read_text(encoding="utf-8").splitlines():
        if not line.startswith("{"):
            continue
        raw = json.loads(line)
        raw["root_cause"]["title"] = EVIL
        raw["evidence"][0]["ref"] = '"><img src=x onerror=alert(1)>'
        raw["verdict_id"] = "../../etc/<b>"
        v = verdict_from_dict(raw)
        for html in (verdict_page(v, None), index_page([v])):
            assert "<script" not in html and "<img" not in html and "<b>" not in html
        assert "/" not in page_key(v.verdict_id) and page_key(v.verdict_id) == page_key(v.verdict_id)


@pytest.mark.browser
def test_chromium_shows_the_report(report: Path, evil_seed: Path) -> None:
    """Index → verdict page in headless Chromium: no console error, the timeline drawn with one lane per evidence
    host, the hostile operator name shown as text (no dialog, no script element); a screenshot for people."""
    [verdict] = analyze([str(evil_seed)])
    lanes = {(e.host, e.role) for e in verdict.evidence}
    with chromium_page() as p:
        p.page.goto((report / "index.html").as_uri())
        assert p.page.locator("#verdicts tbody tr").count() == 1
        p.page.locator("#verdicts a").first.click()
        p.page.wait_for_load_state("load")
        assert p.page.url.endswith(f"{page_key(verdict.verdict_id)}.html")
        svg = p.page.locator("#timeline svg")
        box = svg.bounding_box()
        assert svg.is_visible() and box is not None and box["width"] > 600 and box["height"] > 150
        assert p.page.locator("#timeline svg g[id^='lane-']").count() == len(lanes) == 4
        assert p.page.locator("#timeline svg g[id$='-dn_lock_held']").count() == 1
        assert EVIL in p.page.locator("#failure").inner_text()
        assert p.page.locator("script").count() == 0 and p.dialogs == []
        assert p.page.evaluate("document.images.length") == 0  # the picture is inline, nothing to fetch
        p.page.screenshot(path=artefact("report-seed.png"), full_page=True)
        p.page.locator("nav a", has_text="timeline PNG").click()
        p.page.wait_for_load_state("load")
        assert p.page.evaluate("document.images.length && document.images[0].naturalWidth") == 1200
        assert p.errors() == []
    assert Path(artefact("report-seed.png")).stat().st_size > 50_000


def test_the_page_leads_with_the_fix(tmp_path: Path) -> None:
    """Title, what to do, then why, before the timeline and the evidence table."""
    from click.testing import CliRunner

    from correlator.cli import cli

    result = CliRunner().invoke(cli, ["analyze", str(SEED), "--report", str(tmp_path / "r")])
    assert result.exit_code == 0, result.output
    [page] = [p for p in (tmp_path / "r").glob("*.html") if p.name != "index.html"]
    html = page.read_text(encoding="utf-8")
    order = [html.index(marker) for marker in ("<h1", "id=\"remediation\"", "id=\"explanation\"", "<svg",
                                               "id=\"evidence\"")]
    assert order == sorted(order), order
