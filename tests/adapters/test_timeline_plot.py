"""The drawn timeline, checked on the figure's own data (artists and their coordinates), not on pixels."""

from __future__ import annotations

import dataclasses
import itertools
from pathlib import Path

import pytest
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_hex
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle

from correlator.adapters import timeline_plot
from correlator.adapters.timeline_plot import draw, render, render_all, to_ms
from correlator.adapters.timeline_styles import (
    BLACK,
    BLUE,
    DEFAULT,
    GREEN,
    GREY,
    GREY_DARK,
    GREY_LIGHT,
    ORANGE,
    PURPLE,
    SKY,
    STYLES,
    VERMILLION,
    YELLOW,
    style,
)
from correlator.core.explain.timeline import build_timeline
from correlator.core.explain.verdict import EvidenceItem, Verdict
from correlator.offline.analyze import analyze

SEED = Path(__file__).resolve().parents[1] / "golden" / "scenarios" / "seed"
OKABE_ITO = (BLACK, ORANGE, SKY, GREEN, YELLOW, BLUE, VERMILLION, PURPLE)


@pytest.fixture(scope="module")
def seed() -> Verdict:
    [verdict] = analyze([str(SEED)])
    return verdict


def _lane_of(ax: Axes, y: float) -> str:
    """The lane label whose band contains ``y``."""
    ticks = ax.get_yticks()
    labels = [t.get_text() for t in ax.get_yticklabels()]
    return labels[min(range(len(ticks)), key=lambda i: abs(ticks[i] - y))]


def _rects(ax: Axes, kind: str) -> list[tuple[str, int, int]]:
    out = []
    for p in ax.patches:
        if isinstance(p, Rectangle) and (p.get_gid() or "").startswith("span-") and p.get_gid().endswith("-" + kind):
            out.append((_lane_of(ax, p.get_y() + p.get_height() / 2), to_ms(p.get_x()),
                        to_ms(p.get_x() + p.get_width())))
    return out


def test_seed_figure_shows_the_overlap(seed: Verdict) -> None:
    """37.8 s write on the TaskManager lane, the timeout line 10 s after its start, the scanner's lock span on the
    dn02 lane overlapping both; the named zone on the UTC axis."""
    tl = build_timeline(seed, zone="Asia/Shanghai")
    ax = draw(tl).axes[0]
    [(write_lane, w0, w1)] = _rects(ax, "write")
    assert write_lane == "TaskManager tm01.example.com" and 37_700 <= w1 - w0 <= 37_900
    [timeout] = [line for line in ax.lines if line.get_gid() == "timeout"]
    assert to_ms(timeout.get_xdata()[0]) == w0 + 10_000
    [(lock_lane, l0, l1)] = _rects(ax, "dn_lock_held")
    assert lock_lane == "DataNode dn02.example.com"
    assert l0 < w0 + 10_000 < l1 and min(l1, w1) - max(l0, w0) > 36_000
    lanes = [p.get_gid() for p in ax.patches if (p.get_gid() or "").startswith("lane-")]
    assert len(lanes) == len({(e.host, e.role) for e in seed.evidence}) == 4
    assert "UTC" in ax.get_xlabel() and "Asia/Shanghai, UTC+08:00" in ax.get_xlabel()
    root = [p for p in ax.patches if (p.get_gid() or "").endswith("-dn_lock_held")][0]
    assert root.get_linewidth() > max(p.get_linewidth() for p in ax.patches if p.get_gid() == _gid(ax, "write"))


def _gid(ax: Axes, kind: str) -> str:
    return next(p.get_gid() for p in ax.patches if (p.get_gid() or "").endswith("-" + kind))


def test_unknown_types_and_hostile_text_are_drawn(seed: Verdict) -> None:
    """A type no style knows gets the default colour under its own name; ``$`` and markup in log text neither break
    matplotlib's math parser nor reach the SVG as markup."""
    t = seed.failure.failed_at_ms
    hostile = "dn$x^{2}$<script>.example.com"
    v = dataclasses.replace(seed, evidence=seed.evidence + (
        EvidenceItem("dn_write_error", t, hostile, "datanode", "DataXceiver error $\\frac{1}{0}$", "f:1", t - 500, t),
        EvidenceItem("never_seen_before", t, hostile, "datanode", "?", "f:2"),
    ))
    assert style("never_seen_before").color == DEFAULT.color and style("never_seen_before").label == "never seen before"
    tl = build_timeline(v)
    ax = draw(tl).axes[0]
    assert f"DataNode {hostile}" in [t.get_text() for t in ax.get_yticklabels()]
    png = render(tl, "png")
    svg = render(tl, "svg").decode()
    assert png.startswith(b"\x89PNG") and "<script" not in svg
    assert svg.count('id="lane-') == len(tl.lanes)


def test_rendering_is_deterministic(seed: Verdict) -> None:
    tl = build_timeline(seed)
    assert render(tl, "svg") == render(tl, "svg")
    assert render(tl, "png") == render(tl, "png")


def test_one_drawing_in_both_formats_is_the_same_as_two(seed: Verdict) -> None:
    tl = build_timeline(seed)
    both = render_all(tl)
    assert both["svg"] == render(tl, "svg")
    assert both["png"][:24] == render(tl, "png")[:24]  # same PNG header: same size in pixels


def test_every_kind_has_a_look_of_its_own() -> None:
    """No two kinds share a (colour, marker) as marks or a (colour, hatch) as bars, every colour is from the
    palette, and the kinds readers must tell apart differ in colour and in shape."""
    looks = {**STYLES, "<unknown>": DEFAULT}
    marks = [(s.color.upper(), s.marker) for s in looks.values()]
    bars = [(s.color.upper(), s.hatch) for s in looks.values()]
    assert len(set(marks)) == len(marks), sorted(marks)
    assert len(set(bars)) == len(bars), sorted(bars)
    assert {s.color for s in looks.values()} <= set(OKABE_ITO) | {GREY_LIGHT, GREY, GREY_DARK}
    for group in (("checkpoint_expired", "checkpoint_failed", "checkpoint_declined"),
                  ("hdfs_client_error", "dn_write_error"), ("checkpoint", "hdfs_client_slow")):
        assert len({STYLES[k].color for k in group}) == len(group), group
        assert len({STYLES[k].marker for k in group}) == len(group), group


def _hex(color: object) -> str:
    return to_hex(color).upper()  # type: ignore[arg-type]


def test_the_legend_shows_exactly_what_is_drawn(seed: Verdict) -> None:
    """One entry per kind drawn, in the look it was drawn with; a kind drawn as a bar and as a mark shows both."""
    t = seed.failure.failed_at_ms
    v = dataclasses.replace(seed, evidence=seed.evidence + (
        EvidenceItem("dn_write_error", t, "dn02.example.com", "datanode", "write error", "f:1", t - 3000, t),
        EvidenceItem("dn_write_error", t, "dn02.example.com", "datanode", "write error", "f:2"),
    ))
    ax = draw(build_timeline(v)).axes[0]
    bars = {p.get_gid().split("-", 2)[2]: (_hex(p.get_facecolor()), p.get_hatch() or "") for p in ax.patches
            if (p.get_gid() or "").startswith("span-")}
    marks = {line.get_gid().split("-", 2)[2]: (_hex(line.get_markerfacecolor()), line.get_marker()) for line in ax.lines
             if (line.get_gid() or "").startswith("mark-")}
    legend = ax.get_legend()
    labels = [t.get_text() for t in legend.get_texts()]
    drawn = set(bars) | set(marks)
    assert labels[:len(drawn)] == [style(k).label for k in dict.fromkeys([*bars, *marks])]
    assert labels[len(drawn):] == ["outlined: the root cause", "ranked lower: HDFS_SLOW_PIPELINE 0.10"]
    legend_bars = {(_hex(r.get_facecolor()), r.get_hatch() or "") for r in legend.findobj(Rectangle)}
    legend_marks = {(_hex(line.get_markerfacecolor()), line.get_marker()) for line in legend.findobj(Line2D)}
    assert set(bars.values()) <= legend_bars and set(marks.values()) <= legend_marks
    assert "dn_write_error" in bars and "dn_write_error" in marks


def test_a_long_title_wraps_inside_the_figure(seed: Verdict) -> None:
    """A title far wider than the figure (with a word wider than a line) wraps onto at most three lines, every
    glyph inside the figure; one too long for three lines ends in an ellipsis; a short one stays one line."""
    tl = build_timeline(seed)
    for title, ellipsis in (("the DataNode dn02.example.com held its lock " * 6 + "x" * 100, False),
                            ("the DataNode held its lock " * 200, True)):
        fig = draw(dataclasses.replace(tl, title=title))
        renderer = FigureCanvasAgg(fig).get_renderer()
        fig.draw(renderer)
        [head] = [t for t in fig.texts if t.get_gid() == "title"]
        box = head.get_window_extent(renderer)
        assert fig.bbox.x0 <= box.x0 and box.x1 <= fig.bbox.x1 and fig.bbox.y0 <= box.y0 and box.y1 <= fig.bbox.y1
        assert 2 <= head.get_text().count("\n") + 1 <= 3 and head.get_text().endswith("…") == ellipsis
        axes = fig.axes[0].get_window_extent(renderer)
        assert axes.y1 <= box.y0, "the plot starts below the title"
    fig = draw(tl)
    [head] = [t for t in fig.texts if t.get_gid() == "title"]
    assert head.get_text() == f"{tl.code}: {tl.title}"


def test_the_svg_leaves_the_title_to_its_page(seed: Verdict) -> None:
    """The PNG is looked at alone and carries the verdict's title; the SVG sits under the page's heading, which says
    it already, so it has none, and gives the plot the room."""
    tl = build_timeline(seed)
    both = render_all(tl)
    svg = both["svg"].decode()
    assert 'id="title"' not in svg and tl.title not in svg
    assert "time (UTC; the logs are in UTC)" in svg  # the zone is said once, on the axis
    fig = draw(tl)
    assert [t.get_text() for t in fig.texts if t.get_gid() == "title"] == [f"{tl.code}: {tl.title}"]


def test_every_label_lies_inside_its_bar(seed: Verdict) -> None:
    """Bars of many widths: each label is the longest of its forms that fits its bar as the PNG and as the SVG
    measure it, the narrowest bars go without one, and the timeout's words lie inside the plot, on the side with
    room, even when the timeout is at the plot's right edge."""
    ends = list(itertools.accumulate((300, 1200, 2500, 4000, 7000, 12000), initial=seed.failure.started_at_ms or 0))
    extra = tuple(EvidenceItem("dn_write_error", end, "dn03.example.com", "datanode", "slow", f"f:{end}", start, end)
                  for start, end in itertools.pairwise(ends))  # side by side in one row of their lane
    v = dataclasses.replace(seed, evidence=seed.evidence + extra)
    tl = build_timeline(v)
    edge = dataclasses.replace(tl, timeout_at_ms=tl.view_end_ms - 200)
    for drawn in (tl, edge):
        fig = draw(drawn)
        renderer = FigureCanvasAgg(fig).get_renderer()
        fig.draw(renderer)
        ax = fig.axes[0]
        bars = {p.get_gid().split("-")[1]: p for p in ax.patches if (p.get_gid() or "").startswith("span-")}
        labels = {x.get_gid().split("-")[1]: x for x in ax.texts if (x.get_gid() or "").startswith("label-")}
        assert labels and set(labels) < set(bars), "the narrowest bars go without a label"
        for i, label in labels.items():
            box = bars[i].get_window_extent(renderer)
            width, height = timeline_plot._size(label, renderer)
            x0 = label.get_window_extent(renderer).x0
            assert box.x0 <= x0 and x0 + width <= box.x1 and height <= box.height, label.get_text()
        texts = [x.get_text() for x in labels.values()]
        assert any("write error" in x for x in texts) and any(x.endswith(" s") for x in texts), texts
        [timeout] = [x for x in ax.texts if x.get_gid() == "timeout-label"]
        plot, words = ax.get_window_extent(renderer), timeout.get_window_extent(renderer)
        assert plot.x0 <= words.x0 and words.x1 <= plot.x1
        assert timeout.get_horizontalalignment() == ("right" if drawn is edge else "left")
