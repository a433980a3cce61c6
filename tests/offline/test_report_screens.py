"""The golden seed's verdict page in a real headless Chromium at 1280 and 800 px: no horizontal scroll, the title said
once (the page's heading, not again above the timeline), every evidence row's raw lines in the page, and screenshots
compared with the checked-in baselines (tests/data/report-screens/README.md says how to regenerate them). Every
golden scenario's report is measured box by box in test_report_fit.py.

One report and one browser serve the whole module.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from correlator.adapters.report_html import file_line, page_key
from correlator.core.explain.verdict import Verdict
from correlator.offline.analyze import analyze
from correlator.offline.report import write_report
from tests.support.browser import MAX_CHANGED, Page, baseline_png, chromium_page, screen_diff

pytestmark = pytest.mark.browser

TESTS = Path(__file__).resolve().parents[1]
SEED = TESTS / "golden" / "scenarios" / "seed"
SCREENS = TESTS / "data" / "report-screens"
WIDTHS = (1280, 800)
UPDATE = os.environ.get("CORRELATOR_UPDATE_SCREENS") == "1"


@pytest.fixture(scope="module")
def seed_page(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Verdict]:
    """The seed's report, analysed from a copy under a relative name so the page holds no path of this machine."""
    root = tmp_path_factory.mktemp("screens")
    shutil.copytree(SEED, root / "seed")
    with contextlib.chdir(root):
        [verdict] = analyze(["seed"])
        write_report([verdict], Path("report"))
    return root, root / "report" / f"{page_key(verdict.verdict_id)}.html", verdict


@pytest.fixture(scope="module")
def browser(seed_page: tuple[Path, Path, Verdict]) -> Iterator[Page]:
    with chromium_page(width=WIDTHS[0]) as p:
        p.page.goto(seed_page[1].as_uri())
        yield p
        assert p.errors() == [] and p.dialogs == []


@pytest.mark.parametrize("width", WIDTHS)
def test_the_page_fits_and_says_its_title_once(browser: Page, seed_page: tuple[Path, Path, Verdict],
                                                width: int) -> None:
    """No horizontal scroll; the title is the page's heading and the timeline does not repeat it; the evidence
    table fits its page."""
    page = browser.page
    page.set_viewport_size({"width": width, "height": 900})
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    title = seed_page[2].root_cause.title
    assert title in page.locator("h1").inner_text()
    assert page.locator("#timeline svg #title").count() == 0 and title not in page.locator("#timeline").inner_html()
    table = page.locator("#evidence").bounding_box()
    assert table is not None and table["x"] + table["width"] <= width


def test_every_row_holds_its_raw_lines(browser: Page, seed_page: tuple[Path, Path, Verdict]) -> None:
    """Each evidence row's ``<details>`` holds the line its ref names, exactly as the file has it, and the short
    source (file name and line) carries the full ref on hover."""
    root, _, verdict = seed_page
    rows = browser.page.evaluate("""[...document.querySelectorAll('#evidence tbody tr')].map(tr => ({
        raw: tr.querySelector('details pre')?.textContent ?? null,
        where: tr.querySelector('details p')?.textContent ?? null,
        title: tr.querySelector('.ref')?.getAttribute('title'),
        short: tr.querySelector('.ref')?.textContent}))""")
    assert len(rows) == len(verdict.evidence)
    for row, e in zip(rows, verdict.evidence):
        where = file_line(e.ref)
        assert where is not None and row["raw"] is not None, e.ref
        path, number = where
        lines = (root / path).read_text(encoding="utf-8").split("\n")
        assert row["raw"].split("\n")[0] == lines[number - 1]
        assert row["where"].startswith(f"{path}, line") and row["title"] == e.ref
        assert row["short"] == f"{Path(path).name}:{number}"


@pytest.mark.parametrize("width", WIDTHS)
def test_the_page_looks_as_it_did(browser: Page, width: int, tmp_path: Path) -> None:
    """A full-page screenshot against its baseline: fails when more than 0.5 % of the pixels changed visibly, with
    the new screenshot and a picture of the changes saved for a person to look at."""
    page = browser.page
    page.set_viewport_size({"width": width, "height": 900})
    page.reload(wait_until="load")  # laid out at this width from the start, whatever the tests before it did
    page.evaluate("document.fonts.ready.then(() => true)")
    png = page.screenshot(full_page=True, animations="disabled", caret="hide")
    baseline = SCREENS / f"seed-{width}.png"
    if UPDATE:
        baseline.write_bytes(baseline_png(png))
        return
    assert baseline.exists(), f"no baseline {baseline.name}: run with CORRELATOR_UPDATE_SCREENS=1 to write it"
    shown, changes = tmp_path / f"seed-{width}.png", tmp_path / f"seed-{width}-changes.png"
    shown.write_bytes(png)
    diff = screen_diff(png, str(baseline), str(changes))
    assert diff.same_size, (f"page is {diff.size} px, its baseline {diff.baseline_size}: see {shown}; if the change "
                            "is meant, regenerate with CORRELATOR_UPDATE_SCREENS=1")
    assert diff.changed <= MAX_CHANGED, (f"{diff.changed:.2%} of the pixels changed: see {changes} and {shown}; if "
                                         "the change is meant, regenerate with CORRELATOR_UPDATE_SCREENS=1")
