"""Every golden scenario's report (and the lab's growing state, the one run with an early warning) in one headless
Chromium, measured rather than looked at: no text box overflows its container at 1280 and 800 px, no glyph of a
picture lies outside its picture or its clip, the fix comes before the why, the rows that decided a verdict are
open, and nothing the page already says is said again in its pictures.

The reports are written once for the module, their timelines drawn as SVG only (the PNG beside each page is not
shown in it, and drawing it too would double the time); each page is loaded once and measured at both widths.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from correlator.adapters import timeline_plot
from correlator.adapters.report_html import page_key
from correlator.core.explain.labels import event_label
from correlator.core.explain.timeline import CAUSE_TYPES, Timeline
from correlator.core.explain.verdict import Verdict
from correlator.offline import report
from correlator.offline.analyze import ordered_events, run_analysis
from tests.support.browser import chromium_page

pytestmark = pytest.mark.browser

TESTS = Path(__file__).resolve().parents[1]
GOLDEN = TESTS / "golden" / "scenarios"
GROWTH = TESTS / "data" / "lab" / "3.3.6-1.20.1" / "state-growth"
WIDTHS = (1280, 800)
SLACK_PX = 0.75
"""Sub-pixel rounding of a measured box."""

MEASURE = """(slack) => {
  const bad = [];
  const name = el => {
    const owner = el.closest('[id]');
    return (owner ? '#' + owner.id + ' ' : '') + el.tagName.toLowerCase()
      + (typeof el.className === 'string' && el.className ? '.' + el.className.split(' ').join('.') : '');
  };
  // HTML: a box whose content is wider than the box (cut, hidden or spilling over) overflows
  for (const el of [document.documentElement, ...document.body.querySelectorAll('*')]) {
    if (!(el instanceof HTMLElement) || el.clientWidth === 0) continue;
    if (el.scrollWidth > el.clientWidth + 1) {
      bad.push(`${name(el)} is ${el.scrollWidth} px wide in ${el.clientWidth} px: `
               + JSON.stringify((el.innerText || '').trim().slice(0, 80)));
    }
  }
  const within = (r, box) => r.left >= box.left - slack && r.right <= box.right + slack
    && r.top >= box.top - slack && r.bottom <= box.bottom + slack;
  const onScreen = (el, b) => {  // a box in el's user space to the screen's
    const m = el.getScreenCTM();
    const pts = [[b.x, b.y], [b.x + b.width, b.y], [b.x, b.y + b.height], [b.x + b.width, b.y + b.height]]
      .map(([x, y]) => new DOMPoint(x, y).matrixTransform(m));
    const xs = pts.map(p => p.x), ys = pts.map(p => p.y);
    return {left: Math.min(...xs), right: Math.max(...xs), top: Math.min(...ys), bottom: Math.max(...ys)};
  };
  let glyphs = 0;
  const svgWords = [];
  for (const svg of document.querySelectorAll('svg')) {
    if (svg.parentElement.closest('svg')) continue;
    const frame = svg.getBoundingClientRect();
    const vb = svg.viewBox.baseVal;
    const view = vb && vb.width ? onScreen(svg, vb) : frame;
    // matplotlib draws a text as glyph outlines in a group that opens with a comment holding its words;
    // the early-warning chart uses <text>
    const texts = [];
    for (const g of svg.querySelectorAll('g')) {
      const first = [...g.childNodes].find(n => n.nodeType !== Node.TEXT_NODE || n.textContent.trim());
      if (first && first.nodeType === Node.COMMENT_NODE) {
        texts.push([first.textContent.trim(), [...g.querySelectorAll('use')]]);
      }
    }
    for (const t of svg.querySelectorAll('text')) texts.push([t.textContent, [t]]);
    for (const [words, parts] of texts) {
      svgWords.push(words);
      for (const part of parts) {
        const r = part.getBoundingClientRect();
        if (!r.width && !r.height) continue;  // a space
        glyphs++;
        if (!within(r, frame) || !within(r, view)) {
          bad.push(`svg text ${JSON.stringify(words)} leaves its picture`);
          break;
        }
        const clipped = part.closest('[clip-path]');
        if (clipped && svg.contains(clipped)) {
          const id = clipped.getAttribute('clip-path').match(/url\\(#([^)]+)\\)/)[1];
          const shape = svg.querySelector(`clipPath[id="${id}"] > *`);
          if (!within(r, onScreen(clipped, shape.getBBox()))) {
            bad.push(`svg text ${JSON.stringify(words)} is clipped`);
            break;
          }
        }
      }
    }
  }
  return {bad, glyphs, svgWords};
}"""

FIRST_LOOK = """() => {
  const heads = [...document.querySelectorAll('h2')].map(h => h.textContent);
  const rows = [...document.querySelectorAll('#evidence tbody tr')].map(tr => ({
    type: tr.children[2].textContent, open: !!tr.querySelector('details[open]')}));
  document.querySelectorAll('details').forEach(d => { d.open = true; });  // measure the raw lines too
  return {heads, rows, text: document.body.innerText};
}"""


@dataclass(frozen=True)
class Shown:
    """One page as Chromium showed it: what was open at first, its headings, and what each width measured."""

    scenario: str
    page: Path
    verdict: Verdict | None
    heads: list[str]
    rows: list[dict[str, Any]]
    text: str
    measured: dict[int, dict[str, Any]]


@pytest.fixture(scope="module")
def shown(tmp_path_factory: pytest.TempPathFactory) -> list[Shown]:
    root = tmp_path_factory.mktemp("fit")
    runs: list[tuple[str, Path, Verdict | None]] = []

    def svg_only(tl: Timeline, formats: tuple[str, ...] = ()) -> dict[str, bytes]:
        return {**dict.fromkeys(formats, b""), **timeline_plot.render_all(tl, ("svg",))}

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(report, "render_all", svg_only)
        for source in [*sorted(p for p in GOLDEN.iterdir() if p.is_dir()), GROWTH]:
            verdicts, risks = run_analysis(ordered_events([str(source)]))
            out = root / source.name
            report.write_report(verdicts, out, risks=risks)
            runs.append((source.name, out / "index.html", None))
            runs += [(source.name, out / f"{page_key(v.verdict_id)}.html", v) for v in verdicts]
    pages: list[Shown] = []
    with chromium_page() as p:
        for scenario, path, verdict in runs:
            p.page.set_viewport_size({"width": WIDTHS[0], "height": 900})
            p.page.goto(path.as_uri())
            first = p.page.evaluate(FIRST_LOOK)
            measured = {}
            for width in WIDTHS:
                p.page.set_viewport_size({"width": width, "height": 900})
                measured[width] = p.page.evaluate(MEASURE, SLACK_PX)
            pages.append(Shown(scenario, path, verdict, first["heads"], first["rows"], first["text"], measured))
        assert p.errors() == [] and p.dialogs == []
    return pages


def test_every_scenario_is_shown(shown: list[Shown]) -> None:
    """Each golden scenario gives an index and one page per verdict; every verdict page has its timeline's words
    measured (a page whose glyphs could not be found would pass the other tests for nothing)."""
    scenarios = {p.name for p in GOLDEN.iterdir() if p.is_dir()} | {GROWTH.name}
    assert {s.scenario for s in shown} == scenarios
    assert sum(s.verdict is not None for s in shown) >= len(scenarios) - 1  # no-failures has none
    for s in shown:
        if s.verdict is not None:
            assert all(m["glyphs"] > 200 for m in s.measured.values()), s.page.name


def test_no_text_box_overflows(shown: list[Shown]) -> None:
    """At 1280 and 800 px, with every evidence row opened: no element's content is wider than its box (nothing cut
    with an ellipsis, hidden or spilling out), and no glyph of a picture lies outside the picture or its clip (a
    label cut by its bar, the timeout's words by the plot)."""
    problems = [f"{s.scenario}/{s.page.name} at {width} px: {bad}"
                for s in shown for width, m in s.measured.items() for bad in m["bad"]]
    assert problems == [], "\n".join(problems)


def test_the_fix_comes_before_the_why(shown: list[Shown]) -> None:
    """On every verdict page the first section is what to do, then why, then the pictures and the evidence."""
    for s in shown:
        if s.verdict is None:
            continue
        heads = s.heads
        assert heads[:2] == ["What to do", "Why"], (s.page.name, heads)
        assert heads.index("Why") < heads.index("Timeline") < heads.index("Evidence"), (s.page.name, heads)


def test_the_deciding_rows_are_open(shown: list[Shown]) -> None:
    """A verdict whose evidence holds rows of the kinds its cause is read from opens their raw lines, and only
    theirs; one that names no cause (unexplained, too little data) opens none."""
    for s in shown:
        if s.verdict is None:
            continue
        types = CAUSE_TYPES.get(s.verdict.root_cause.code, frozenset())
        opened = [row["type"] for row in s.rows if row["open"]]
        assert set(opened) <= {event_label(t) for t in types}, (s.page.name, opened, types)
        assert bool(opened) == any(e.type in types for e in s.verdict.evidence), (s.page.name, s.rows)


def test_nothing_is_said_twice_or_in_internal_words(shown: list[Shown]) -> None:
    """The page's heading is not repeated as the timeline's title, the zone of the times is said once (on the
    axis), and the evidence names kinds in words, never by their internal type names."""
    for s in shown:
        if s.verdict is None:
            continue
        words = s.measured[WIDTHS[0]]["svgWords"]
        title = s.verdict.root_cause.title
        assert not any(title in w for w in words), s.page.name
        assert sum("the logs are" in w for w in words) == 1 and "the logs are" not in s.text, s.page.name
        assert [row["type"] for row in s.rows] == [event_label(e.type) for e in s.verdict.evidence]
        assert not any("_" in row["type"] for row in s.rows), s.page.name


def test_a_verdict_page_shows_the_warning_before_it(shown: list[Shown]) -> None:
    """The growing state's verdict page carries the early warning with its chart, as the index does; the golden
    scenarios, which raise none, show none."""
    for s in shown:
        charts = "Early warning" in s.heads or "Early warnings" in s.heads
        assert charts == (s.scenario == GROWTH.name), (s.scenario, s.page.name, s.heads)
        if charts:
            assert any(w.startswith("checkpoint duration") for w in s.measured[WIDTHS[0]]["svgWords"])
