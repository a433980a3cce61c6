"""Drawing a :class:`~correlator.core.explain.timeline.Timeline` with matplotlib (Agg, no display): PNG for Slack,
SVG for pages.

Every drawn element carries an id (``lane-N``, ``span-N-<kind>``, ``label-N``, ``mark-N-<kind>``, ``timeout``,
``timeout-label``, ``failed``, ``note-N``, ``title``, ``legend``) that survives into the SVG, so tests and people can
find what is where. How each evidence kind looks is ``timeline_styles``' table.
Log-derived text is drawn literally: matplotlib's math parsing is switched off for it, so a ``$`` in a host name
cannot break or alter the picture.

No word is cut: a bar's label, the timeout's and a lane's note are measured with the renderer once the layout is
known, and each is shortened, moved, wrapped or left out rather than run past its bar or the plot. The PNG stands
alone (Slack, the report's link), so it carries the verdict's title; the SVG sits in a page under that same title as
its heading, so it has none.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal
from zoneinfo import ZoneInfo

from matplotlib import dates as mdates
from matplotlib import rc_context
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.legend_handler import HandlerTuple
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Rectangle
from matplotlib.text import Text
from matplotlib.textpath import TextToPath
from matplotlib.ticker import FuncFormatter

from correlator.adapters.timeline_styles import CAUSE_EDGE, TIMEOUT, Style, ink, style
from correlator.core.explain.timeline import Span, Timeline


def _num(ms: int) -> float:
    # matplotlib leaves this call unannotated
    return float(mdates.date2num(datetime.fromtimestamp(ms / 1000, tz=UTC)))  # type: ignore[no-untyped-call]


def to_ms(num: float) -> int:
    """Inverse of the x conversion: a drawn x coordinate back to epoch ms."""
    when: datetime = mdates.num2date(num)  # type: ignore[no-untyped-call]  # matplotlib leaves this unannotated
    return round(when.timestamp() * 1000)


def _slots(spans: list[Span]) -> dict[int, tuple[int, int]]:
    """Overlapping spans of one lane go side by side in sub-rows: span index → (row, rows in that lane)."""
    rows: dict[int, list[list[Span]]] = {}
    placed: dict[int, int] = {}
    for i, s in sorted(enumerate(spans), key=lambda p: (p[1].start_ms, -p[1].duration_ms)):
        lane_rows = rows.setdefault(s.lane, [])
        for r, row in enumerate(lane_rows):
            if row[-1].end_ms <= s.start_ms:
                row.append(s)
                placed[i] = r
                break
        else:
            lane_rows.append([s])
            placed[i] = len(lane_rows) - 1
    return {i: (r, len(rows[spans[i].lane])) for i, r in placed.items()}


def axis_label(zone: str, at_ms: int) -> str:
    """The axis is UTC; the zone the logs were written in is named with its offset at that time."""
    if zone in ("UTC", "Z", "Etc/UTC"):
        return "time (UTC; the logs are in UTC)"
    try:
        offset = datetime.fromtimestamp(at_ms / 1000, ZoneInfo(zone)).strftime("%z")
        named = f"{zone}, UTC{offset[:3]}:{offset[3:]}"
    except (KeyError, ValueError):
        named = zone
    return f"time (UTC; the logs are written in {named})"


def draw(tl: Timeline) -> Figure:
    n = len(tl.lanes)
    fig = Figure(figsize=(12, 1.6 + 0.62 * n), dpi=100, layout="constrained")
    ax = fig.add_subplot()
    y_of = {lane.index: n - 1 - lane.index for lane in tl.lanes}
    for lane in tl.lanes:
        ax.axhspan(y_of[lane.index] - 0.5, y_of[lane.index] + 0.5, color="#f4f6f7" if lane.index % 2 else "#ffffff",
                   zorder=0, gid=f"lane-{lane.index}")
    spans = list(tl.spans)
    slots = _slots(spans)
    view = _num(tl.view_end_ms) - _num(tl.view_start_ms)
    bars: list[tuple[Rectangle, tuple[str, ...], dict[str, Any]]] = []
    for i, s in enumerate(spans):
        row, rows = slots[i]
        height = 0.8 / rows
        bottom = y_of[s.lane] - 0.4 + (rows - 1 - row) * height
        st = style(s.kind)
        cause = s.emphasis == "cause"
        width = max(_num(s.end_ms) - _num(s.start_ms), view * 0.004)  # a 100 ms burst stays visible next to 40 s
        rect = Rectangle((_num(s.start_ms), bottom + 0.05 * height), width, height * 0.9, **_bar(st, s.emphasis),
                         zorder=3 if cause else 2, gid=f"span-{i}-{s.kind}")
        ax.add_patch(rect)
        bars.append((rect, _span_labels(s.duration_ms, st.label, cause),
                     {"fontsize": 7.5 if rows == 1 else 6.5, "weight": "bold" if cause else "normal",
                      "color": ink(st.color), "gid": f"label-{i}"}))
    for j, m in enumerate(tl.marks):
        ax.add_line(Line2D([_num(m.at_ms)], [y_of[m.lane]], **_mark(style(m.kind), m.emphasis), linestyle="none",
                           zorder=5, gid=f"mark-{j}-{m.kind}"))
    if tl.timeout_at_ms is not None:
        ax.axvline(_num(tl.timeout_at_ms), color=TIMEOUT, linestyle="--", linewidth=1.5, zorder=6, gid="timeout")
    ax.axvline(_num(tl.failed_at_ms), color="black", linestyle=":", linewidth=1.2, zorder=6, gid="failed")
    ax.set_xlim(_num(tl.view_start_ms), _num(tl.view_end_ms))
    ax.set_ylim(-0.5, n - 0.5 + 0.35)
    ax.set_yticks([y_of[lane.index] for lane in tl.lanes], [lane.label for lane in tl.lanes])
    for label in ax.get_yticklabels():
        label.set_parse_math(False)
    # matplotlib leaves this call unannotated
    locator = mdates.AutoDateLocator(tz=UTC, minticks=4, maxticks=10)  # type: ignore[no-untyped-call]
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(_clock(tl.view_end_ms - tl.view_start_ms))
    day = datetime.fromtimestamp(tl.view_start_ms / 1000, tz=UTC).strftime("%Y-%m-%d")
    ax.set_xlabel(f"{day}  {axis_label(tl.zone, tl.failed_at_ms)}")
    ax.grid(axis="x", color="#d5d8dc", linewidth=0.6, zorder=1)
    _legend(ax, tl)
    _title(fig, f"{tl.code}: {tl.title}")
    # the words inside the plot are fitted to where the layout put it (the texts below never move it)
    layout = fig.get_layout_engine()
    if layout is not None:
        layout.execute(fig)
    # matplotlib leaves this call unannotated
    renderer = FigureCanvasAgg(fig).get_renderer()  # type: ignore[no-untyped-call]
    for rect, texts, kwargs in bars:
        _bar_label(ax, renderer, rect, texts, view, **kwargs)
    if tl.timeout_at_ms is not None:
        _timeout_label(ax, renderer, _num(tl.timeout_at_ms), n - 0.5, f"timeout {(tl.timeout_ms or 0) / 1000:.1f} s")
    for lane in tl.lanes:
        if lane.note is not None:
            _note(ax, renderer, _num(tl.view_start_ms) + view / 2, y_of[lane.index], lane.note,
                  color="#7b241c" if lane.missing else "#566573", gid=f"note-{lane.index}")
    return fig


def _span_labels(duration_ms: int, label: str, cause: bool) -> tuple[str, ...]:
    """A bar's label, longest first: the first that fits inside its bar is drawn (the legend names every kind)."""
    took = f"{duration_ms / 1000:.1f} s"
    if cause:
        return f"{took}  {label}  ◀ root cause", f"{took}  ◀ root cause", f"{took} ◀", took
    return f"{took}  {label}", took


LABEL_PAD = 4.0
"""Pixels kept clear between a label and the edge of its bar or of the plot."""
TEXT_PATH = TextToPath()


def _size(label: Text, renderer: Any) -> tuple[float, float]:
    """Width and height of the label in pixels, the larger of the PNG's measure (hinted glyphs) and the SVG's (glyph
    outlines): they differ by a few per cent either way, and a label must fit in both pictures."""
    extent = label.get_window_extent(renderer)
    prop, scale = label.get_fontproperties(), float(renderer.points_to_pixels(1.0))
    lines = [TEXT_PATH.get_text_width_height_descent(line, prop, ismath=False) for line in label.get_text().split("\n")]
    width = max(w for w, _, _ in lines) * scale
    height = sum(h for _, h, _ in lines) * scale
    return max(extent.width, width), max(extent.height, height)


def _bar_label(ax: Axes, renderer: Any, rect: Rectangle, texts: tuple[str, ...], view: float,
               **kwargs: Any) -> Text | None:
    """The longest of ``texts`` that lies whole inside the bar, or none when even the shortest does not."""
    box = rect.get_window_extent(renderer)
    if box.width < 2 * LABEL_PAD + 8:
        return None
    x, y = rect.get_x() + view * 0.008, rect.get_y() + rect.get_height() / 2
    offset = ax.transData.transform((x, y))[0] - box.x0
    label = _text(ax, x, y, texts[0], va="center", ha="left", zorder=4, **kwargs)
    label.set_in_layout(False)
    label.set_clip_path(rect)  # a label never runs over its neighbour, even should a measure be off
    for text in texts:
        label.set_text(text)
        width, height = _size(label, renderer)
        if offset + width + LABEL_PAD <= box.width and height <= box.height:
            return label
    label.remove()
    return None


def _timeout_label(ax: Axes, renderer: Any, x: float, y: float, text: str) -> Text | None:
    """The timeout's words beside its line, on the side with room for them inside the plot."""
    plot = ax.get_window_extent(renderer)
    at = ax.transData.transform((x, y))[0]
    label = _text(ax, x, y, f" {text}", color=TIMEOUT, fontsize=8, va="bottom", ha="left", gid="timeout-label")
    label.set_in_layout(False)
    sides: tuple[tuple[Literal["left", "right"], str], ...] = (("left", f" {text}"), ("right", f"{text} "))
    for ha, words in sides:
        label.set_horizontalalignment(ha)
        label.set_text(words)
        width, _ = _size(label, renderer)
        x0, x1 = (at, at + width) if ha == "left" else (at - width, at)
        if plot.x0 <= x0 and x1 <= plot.x1:  # the space on the line's side keeps the words off it
            return label
    label.remove()
    return None


NOTE_LINES = 2


def _note(ax: Axes, renderer: Any, x: float, y: float, note: str, **kwargs: Any) -> Text:
    """A lane's note centred in the plot, wrapped onto two lines when it is wider than the plot (a third would
    leave its lane), and ending in "…" when even two lines cannot hold it."""
    limit = ax.get_window_extent(renderer).width - 2 * LABEL_PAD
    label = _text(ax, x, y, note, ha="center", va="center", fontsize=8, style="italic", linespacing=1.1, **kwargs)
    label.set_in_layout(False)

    def fits(text: str) -> bool:
        label.set_text(text)
        return _size(label, renderer)[0] <= limit

    if fits(note):
        return label
    lines, overflow = _wrap(note[:TITLE_CHARS], fits, NOTE_LINES)
    if overflow or len(note) > TITLE_CHARS:
        last = lines[-1]
        lines[-1] = last[:_most(len(last), lambda k: fits(last[:k] + " …"))].rstrip() + " …"
    label.set_text("\n".join(lines))
    return label


def _bar(st: Style, emphasis: str) -> dict[str, Any]:
    """A bar's look, shared by the drawing and its legend entry: the cause outlined in black, a lower-ranked cause's
    evidence dashed."""
    cause = emphasis == "cause"
    return {"facecolor": st.color, "hatch": st.hatch or None, "hatchcolor": "white" if ink(st.color) == "white"
            else "#333333", "edgecolor": CAUSE_EDGE if cause else st.color, "linewidth": 2.2 if cause else 0.8,
            "linestyle": "--" if emphasis == "alternative" else "-"}


def _mark(st: Style, emphasis: str) -> dict[str, Any]:
    """A mark's look, shared by the drawing and its legend entry."""
    return {"marker": st.marker, "markersize": 9 if emphasis == "cause" else 7, "color": st.color,
            "markerfacecolor": st.color, "markeredgecolor": "black", "markeredgewidth": 0.8}


TITLE_SIZES = (10.0, 9.0, 8.0)
TITLE_LINES = 3
TITLE_WIDTH = 0.98
TITLE_CHARS = 800
"""The title wraps onto up to three lines, shrinking a step at a time, within this share of the figure's width;
three lines hold fewer characters than ``TITLE_CHARS`` at any size, so no more of a title is measured."""


def _title(fig: Figure, head: str) -> Text:
    """The figure's title, wrapped (and if need be shrunk) to lie within the figure: a cut title hides the cause.

    Widths are measured with the renderer, not guessed from a character count, so wide glyphs and long host names
    wrap in time. A title too long even for three lines at the smallest size ends in "…" inside the figure."""
    title = fig.suptitle(head, fontsize=TITLE_SIZES[0], ha="left", x=(1 - TITLE_WIDTH) / 2, parse_math=False,
                         gid="title")
    # matplotlib leaves this call unannotated
    renderer = FigureCanvasAgg(fig).get_renderer()  # type: ignore[no-untyped-call]
    limit = fig.bbox.width * TITLE_WIDTH

    def fits(text: str) -> bool:
        title.set_text(text)
        return bool(title.get_window_extent(renderer).width <= limit)

    if fits(head):
        return title
    lines: list[str] = []
    overflow = True
    for size in TITLE_SIZES:
        title.set_fontsize(size)
        lines, overflow = _wrap(head[:TITLE_CHARS], fits, TITLE_LINES)
        overflow = overflow or len(head) > TITLE_CHARS
        if not overflow:
            break
    if overflow:
        last = lines[-1]
        lines[-1] = last[:_most(len(last), lambda n: fits(last[:n] + " …"))].rstrip() + " …"
    title.set_text("\n".join(lines))
    return title


def _wrap(text: str, fits: Callable[[str], bool], max_lines: int) -> tuple[list[str], bool]:
    """Up to ``max_lines`` lines, each holding as many words as fit (found by bisection: a few measurements a line),
    a word wider than a line broken where it must be; and whether text was left over."""
    words = text.split()
    lines: list[str] = []
    while words and len(lines) < max_lines:
        n = _most(len(words), lambda k: fits(" ".join(words[:k])))
        if n == 0:
            cut = max(1, _most(len(words[0]), lambda k: fits(words[0][:k])))
            lines.append(words[0][:cut])
            words[0] = words[0][cut:]
            continue
        lines.append(" ".join(words[:n]))
        words = words[n:]
    return lines, bool(words)


def _most(n: int, fits: Callable[[int], bool]) -> int:
    """The largest ``k`` in 0..n with ``fits(k)`` (``fits`` holds up to some k and not beyond)."""
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


def _legend(ax: Axes, tl: Timeline) -> None:
    """One entry per kind drawn, in the look it was drawn with: a bar, a mark, or both when the kind is drawn as
    both; then the outline of the root cause and the lower-ranked causes when there are any."""
    barred = {s.kind for s in tl.spans}
    marked = {m.kind for m in tl.marks}
    handles: list[Artist | tuple[Artist, ...]] = []
    labels: list[str] = []
    for kind in dict.fromkeys([s.kind for s in tl.spans] + [m.kind for m in tl.marks]):
        st = style(kind)
        drawn: list[Artist] = []
        if kind in barred:
            drawn.append(Patch(**_bar(st, "context")))
        if kind in marked:
            drawn.append(Line2D([], [], linestyle="none", **_mark(st, "context")))
        handles.append(drawn[0] if len(drawn) == 1 else tuple(drawn))
        labels.append(st.label)
    if any(s.emphasis == "cause" for s in tl.spans) or any(m.emphasis == "cause" for m in tl.marks):
        handles.append(Patch(facecolor="white", edgecolor=CAUSE_EDGE, linewidth=2.2))
        labels.append("outlined: the root cause")
    if tl.alternatives:
        handles.append(Patch(facecolor="white", edgecolor="grey", linestyle="--"))
        labels.append("ranked lower: " + ", ".join(f"{code} {conf:.2f}" for code, conf in tl.alternatives))
    legend = ax.legend(handles=handles, labels=labels, loc="upper left", bbox_to_anchor=(1.005, 1.0), fontsize=7,
                       frameon=False, handler_map={tuple: HandlerTuple(ndivide=None)})
    legend.set_gid("legend")
    for text in legend.get_texts():
        text.set_parse_math(False)


def _text(ax: Axes, x: float, y: float, s: str, **kwargs: object) -> Text:
    return ax.text(x, y, s, parse_math=False, clip_on=True, **kwargs)  # type: ignore[arg-type]


def _clock(view_ms: int) -> FuncFormatter:
    """HH:MM:SS on the UTC axis, with milliseconds when the whole picture spans only seconds."""
    precise = view_ms < 20_000

    def fmt(x: float, _pos: int | None = None) -> str:
        t: datetime = mdates.num2date(x, tz=UTC)  # type: ignore[no-untyped-call]  # matplotlib leaves this unannotated
        return t.strftime("%H:%M:%S") + (f".{t.microsecond // 1000:03d}" if precise else "")

    return FuncFormatter(fmt)


TITLED = frozenset({"png"})
"""Formats drawn with the verdict's title: the PNG is looked at on its own, the SVG inside a page that is headed by
the same words."""


def render(tl: Timeline, fmt: str) -> bytes:
    """The picture as ``png`` or ``svg`` bytes; deterministic for the same timeline (no dates in the metadata)."""
    return render_all(tl, (fmt,))[fmt]


def render_all(tl: Timeline, formats: tuple[str, ...] = ("svg", "png")) -> dict[str, bytes]:
    """One drawing saved in several formats (drawing is most of the cost), titled in the formats of ``TITLED``."""
    out: dict[str, bytes] = {}
    with rc_context({"svg.hashsalt": tl.verdict_id}):
        fig = draw(tl)
        [title] = [t for t in fig.texts if t.get_gid() == "title"]
        for fmt in formats:
            title.set_visible(fmt in TITLED)
            title.set_in_layout(fmt in TITLED)  # an untitled picture gives the plot the title's room
            buffer = io.BytesIO()
            fig.savefig(buffer, format=fmt, metadata={"Date": None} if fmt == "svg" else {"Software": None})
            out[fmt] = buffer.getvalue()
    return out
