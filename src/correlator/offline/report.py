"""``analyze --report DIR``: the run's verdicts as a self-contained HTML report (index, a page and a timeline each).

The directory opens without a network: pages embed the timeline as SVG and link the PNG beside them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from correlator.adapters.report_html import index_page, page_key, verdict_page
from correlator.adapters.report_risks import risks_section
from correlator.adapters.timeline_plot import render_all
from correlator.core.explain.risk import Risk
from correlator.core.explain.timeline import build_timeline
from correlator.core.explain.verdict import Verdict


def write_report(verdicts: Sequence[Verdict], out_dir: Path, *, zone: str = "UTC",
                 on_page: Callable[[Verdict], None] | None = None, risks: Sequence[Risk] = ()) -> list[Path]:
    """Write ``index.html`` (the verdicts, then the early warnings with a chart each) and ``<id>.html`` / ``.png`` /
    ``.svg`` per verdict; returns the paths written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for verdict in verdicts:
        key = page_key(verdict.verdict_id)
        timeline = build_timeline(verdict, zone=zone)
        pictures = render_all(timeline, ("svg", "png"))
        files = {f"{key}.svg": pictures["svg"], f"{key}.png": pictures["png"],
                 f"{key}.html": verdict_page(verdict, pictures["svg"], zone=zone).encode("utf-8")}
        for name, data in files.items():
            (out_dir / name).write_bytes(data)
            written.append(out_dir / name)
        if on_page is not None:
            on_page(verdict)
    index = out_dir / "index.html"
    index.write_text(index_page(verdicts, extra=risks_section(risks)), encoding="utf-8")
    return [index, *written]
