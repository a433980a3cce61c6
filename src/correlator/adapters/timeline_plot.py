"""Drawing a :class:`~correlator.core.explain.timeline.Timeline` with matplotlib (Agg, no display): PNG for Slack,
SVG for pages.

Every drawn element carries an id (``lane-N``, ``span-N-<kind>``, ``mark-N-<kind>``, ``timeout``, ``failed``) that
survives into the SVG, so tests and people can find what is where. Log-derived text is drawn literally: matplotlib's
math parsing is switched off for it, so a ``$`` in a host name cannot break or alter the picture.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from matplotlib import dates as mdates
from matplotlib import rc_context
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Rectangle
from matplotlib.text import Text
from matplotlib.ticker import FuncFormatter

from correlator.core.explain.timeline import Span, Timeline


@dataclass(frozen=True, slots=True)
class Style:
    color: str
    label: str
    marker: str = "o"


STYLES: dict[str, Style] = {
    "checkpoint": Style("#9aa5b1", "checkpoint (trigger → failure)"),
    "write": Style("#f0a202", "checkpoint write"),
    "dn_lock_held": Style("#c0392b", "DataNode lock held"),
    "dn_lock_wait": Style("#e67e22", "DataNode lock wait"),
    "directory_scan_reconcile": Style("#8e44ad", "scanner reconcile", "D"),
    "directory_scan_stats": Style("#9b59b6", "scanner totals", "s"),
    "slow_io": Style("#d35400", "slow disk/mirror/ack"),
    "block_write": Style("#2980b9", "block write", "^"),
    "block_allocated": Style("#16a085", "block allocated", "^"),
    "jvm_pause": Style("#27ae60", "JVM pause"),
    "nn_lock_held": Style("#b03a2e", "NameNode lock held"),
    "hdfs_client_slow": Style("#5d6d7e", "client slow ack"),
    "hdfs_client_error": Style("#e74c3c", "client error", "X"),
    "dn_write_error": Style("#e74c3c", "DataNode write error", "X"),
    "checkpoint_triggered": Style("#34495e", "checkpoint triggered", ">"),
    "checkpoint_expired": Style("#c0392b", "checkpoint expired", "x"),
    "checkpoint_failed": Style("#c0392b", "checkpoint failed", "x"),
    "checkpoint_declined": Style("#c0392b", "checkpoint declined", "x"),
    "checkpoint_late_ack": Style("#16a085", "late acknowledgement", "o"),
    "task_status": Style("#7f8c8d", "task status", "v"),
}
DEFAULT = Style("#7f8c8d", "other evidence", "o")
"""Evidence types this table does not know yet are drawn, in a neutral style under their own name."""


def style(kind: str) -> Style:
    return STYLES.get(kind) or Style(DEFAULT.color, kind.replace("_", " "), DEFAULT.marker)


def _num(ms: int) -> float:
    return float(mdates.date2num(datetime.fromtimestamp(ms / 1000, tz=UTC)))


def to_ms(num: float) -> int:
    """Inverse of the x conversion: a drawn x coordinate back to epoch ms."""
    return round(mdates.num2date(num).timestamp() * 1000)


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
    for lane in tl.lanes:
        if lane.note is not None:
            _text(ax, _num(tl.view_start_ms) + view / 2, y_of[lane.index], lane.note, ha="center", va="center",
                  fontsize=8, style="italic", color="#7b241c" if lane.missing else "#566573", gid=f"note-{lane.index}")
    for i, s in enumerate(spans):
        row, rows = slots[i]
        height = 0.8 / rows
        bottom = y_of[s.lane] - 0.4 + (rows - 1 - row) * height
        st = style(s.kind)
        cause = s.emphasis == "cause"
        width = max(_num(s.end_ms) - _num(s.start_ms), view * 0.004)  # a 100 ms burst stays visible next to 40 s
        rect = Rectangle((_num(s.start_ms), bottom + 0.05 * height), width,
                         height * 0.9, facecolor=st.color, alpha=1.0 if cause or s.emphasis == "failure" else 0.55,
                         edgecolor="black" if cause else st.color, linewidth=2.2 if cause else 0.8,
                         linestyle="--" if s.emphasis == "alternative" else "-", zorder=3 if cause else 2,
                         gid=f"span-{i}-{s.kind}")
        ax.add_patch(rect)
        if width < view * 0.08:
            continue
        text = f"{s.duration_ms / 1000:.1f} s  {st.label}" + ("  ◀ root cause" if cause else "")
        label = _text(ax, _num(s.start_ms) + view * 0.008, bottom + height / 2, text,
                      fontsize=7.5 if rows == 1 else 6.5, weight="bold" if cause else "normal", va="center",
                      ha="left", zorder=4, color="white" if cause or s.emphasis == "failure" else "black")
        label.set_clip_path(rect)  # a label never runs over its neighbour
    for j, m in enumerate(tl.marks):
        st = style(m.kind)
        ax.add_line(Line2D([_num(m.at_ms)], [y_of[m.lane]], marker=st.marker, markersize=9 if m.emphasis == "cause"
                           else 7, color=st.color, markeredgecolor="black", linestyle="none", zorder=5,
                           gid=f"mark-{j}-{m.kind}"))
    if tl.timeout_at_ms is not None:
        ax.axvline(_num(tl.timeout_at_ms), color="#c0392b", linestyle="--", linewidth=1.5, zorder=6, gid="timeout")
        _text(ax, _num(tl.timeout_at_ms), n - 0.5, f" timeout {(tl.timeout_ms or 0) / 1000:.1f} s",
              color="#c0392b", fontsize=8, va="bottom", ha="left")
    ax.axvline(_num(tl.failed_at_ms), color="black", linestyle=":", linewidth=1.2, zorder=6, gid="failed")
    ax.set_xlim(_num(tl.view_start_ms), _num(tl.view_end_ms))
    ax.set_ylim(-0.5, n - 0.5 + 0.35)
    ax.set_yticks([y_of[lane.index] for lane in tl.lanes], [lane.label for lane in tl.lanes])
    for label in ax.get_yticklabels():
        label.set_parse_math(False)
    locator = mdates.AutoDateLocator(tz=UTC, minticks=4, maxticks=10)
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(_clock(tl.view_end_ms - tl.view_start_ms))
    day = datetime.fromtimestamp(tl.view_start_ms / 1000, tz=UTC).strftime("%Y-%m-%d")
    ax.set_xlabel(f"{day}  {axis_label(tl.zone, tl.failed_at_ms)}")
    ax.grid(axis="x", color="#d5d8dc", linewidth=0.6, zorder=1)
    head = f"{tl.code}: {tl.title}"
    fig.suptitle(head if len(head) < 140 else head[:139] + "…", fontsize=10, ha="left", x=0.01,
                 parse_math=False)
    _legend(ax, tl)
    return fig


def _legend(ax: Axes, tl: Timeline) -> None:
    kinds = list(dict.fromkeys([s.kind for s in tl.spans] + [m.kind for m in tl.marks]))
    handles: list[Patch | Line2D] = []
    for kind in kinds:
        st = style(kind)
        if any(s.kind == kind for s in tl.spans):
            handles.append(Patch(facecolor=st.color, label=st.label))
        else:
            handles.append(Line2D([], [], marker=st.marker, color=st.color, linestyle="none", label=st.label))
    if any(s.emphasis == "cause" for s in tl.spans) or any(m.emphasis == "cause" for m in tl.marks):
        handles.append(Patch(facecolor="white", edgecolor="black", linewidth=2.2, label="outlined: the root cause"))
    if tl.alternatives:
        ranked = ", ".join(f"{code} {conf:.2f}" for code, conf in tl.alternatives)
        handles.append(Patch(facecolor="white", edgecolor="grey", linestyle="--", label=f"ranked lower: {ranked}"))
    legend = ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.005, 1.0), fontsize=7, frameon=False)
    for text in legend.get_texts():
        text.set_parse_math(False)


def _text(ax: Axes, x: float, y: float, s: str, **kwargs: object) -> Text:
    return ax.text(x, y, s, parse_math=False, clip_on=True, **kwargs)  # type: ignore[arg-type]


def _clock(view_ms: int) -> FuncFormatter:
    """HH:MM:SS on the UTC axis, with milliseconds when the whole picture spans only seconds."""
    precise = view_ms < 20_000

    def fmt(x: float, _pos: int | None = None) -> str:
        t = mdates.num2date(x, tz=UTC)
        return t.strftime("%H:%M:%S") + (f".{t.microsecond // 1000:03d}" if precise else "")

    return FuncFormatter(fmt)


def render(tl: Timeline, fmt: str) -> bytes:
    """The picture as ``png`` or ``svg`` bytes; deterministic for the same timeline (no dates in the metadata)."""
    return render_all(tl, (fmt,))[fmt]


def render_all(tl: Timeline, formats: tuple[str, ...] = ("svg", "png")) -> dict[str, bytes]:
    """One drawing saved in several formats (drawing is most of the cost)."""
    out: dict[str, bytes] = {}
    with rc_context({"svg.hashsalt": tl.verdict_id}):
        fig = draw(tl)
        for fmt in formats:
            buffer = io.BytesIO()
            fig.savefig(buffer, format=fmt, metadata={"Date": None} if fmt == "svg" else {"Software": None})
            out[fmt] = buffer.getvalue()
    return out
