"""The early warnings and the records lost of a run in the report's index, and on the page of each verdict they
concern: each warning's last state, its words, and a small chart of its checkpoints' durations and sizes against the
timeout; each loss with its transactional id, the checkpoints behind it and the broker's line.

The chart is plain SVG written here (a few dozen points, no plotting library needed): durations as dots with the
fitted pace as a line, the timeout dashed, the predicted expiry marked, the state's size as a second, lighter line on
its own scale. Every word that came from a record is escaped, like the rest of the report.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from correlator.core.events import iso_ms
from correlator.core.explain.risk import Risk
from correlator.core.explain.transactions import TransactionLoss
from correlator.core.explain.verdict import Verdict

WIDTH, HEIGHT, PAD = 560, 180, 36
DURATION, SIZE, TIMEOUT, EXPIRY = "#1f77b4", "#ff7f0e", "#c0392b", "#7f8c8d"
"""Colour-blind safe pair (blue, orange) for the two series; the limit red, the prediction grey."""


def _e(value: object) -> str:
    return escape("" if value is None else str(value), quote=True)


def latest(risks: Sequence[Risk]) -> list[Risk]:
    """Each warning once, in its last state, in the order the warnings were raised."""
    last: dict[str, Risk] = {}
    for r in risks:
        last[r.risk_id] = r
    return list(last.values())


def warned(v: Verdict, risks: Sequence[Risk]) -> list[Risk]:
    """The warnings of the verdict's job raised by the time it failed, each in its last state by the time the verdict
    was decided (a warning the failure supersedes says so)."""
    raised = {r.risk_id for r in risks
              if r.cluster == v.cluster and r.job_id == v.job_id and r.as_of_ms <= v.failure.failed_at_ms}
    return latest([r for r in risks if r.risk_id in raised and r.as_of_ms <= v.decided_at_ms])


def chart(risk: Risk) -> str:
    """The warning's series against its timeout, as an inline SVG element."""
    points = list(risk.series)
    if not points:
        return ""
    t0 = points[0][0]
    t1 = max([points[-1][0], *(t for t in (risk.expiry_at_ms,) if t is not None)])
    top = max(risk.timeout_ms, *(d for _, d, _ in points)) * 1.1
    sizes = [s for _, _, s in points if s is not None]
    size_top = max(sizes) * 1.1 if sizes else 1

    def x(t: int) -> float:
        return PAD + (t - t0) / max(1, t1 - t0) * (WIDTH - 2 * PAD)

    def y(v: float, scale: float = top) -> float:
        return HEIGHT - PAD - v / scale * (HEIGHT - 2 * PAD)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" class="risk-chart" '
           f'role="img" aria-label="checkpoint durations and sizes against the {risk.timeout_ms / 1000:.0f} s timeout">',
           f'<line x1="{PAD}" y1="{y(0):.1f}" x2="{WIDTH - PAD}" y2="{y(0):.1f}" stroke="#aab7b8"/>',
           f'<line class="timeout" x1="{PAD}" y1="{y(risk.timeout_ms):.1f}" x2="{WIDTH - PAD}" '
           f'y2="{y(risk.timeout_ms):.1f}" stroke="{TIMEOUT}" stroke-dasharray="6 4"/>',
           f'<text x="{PAD}" y="{y(risk.timeout_ms) - 4:.1f}" font-size="11" fill="{TIMEOUT}">timeout '
           f'{risk.timeout_ms / 1000:.1f} s</text>']
    if sizes:
        path = " ".join(f"{x(t):.1f},{y(s, size_top):.1f}" for t, _, s in points if s is not None)
        out.append(f'<polyline class="size" points="{path}" fill="none" stroke="{SIZE}" stroke-width="1.5" '
                   'stroke-opacity="0.7"/>')
        out.append(f'<text x="{PAD + 140}" y="14" font-size="11" fill="{SIZE}">state size (to '
                   f'{max(sizes) / 1048576:.1f} MiB, own scale)</text>')
    out += [f'<circle class="duration" cx="{x(t):.1f}" cy="{y(d):.1f}" r="2.5" fill="{DURATION}"/>'
            for t, d, _ in points]
    if risk.expiry_at_ms is not None:
        end = risk.expiry_at_ms
        out.append(f'<line class="pace" x1="{x(points[-1][0]):.1f}" y1="{y(risk.duration_now_ms):.1f}" '
                   f'x2="{x(end):.1f}" y2="{y(risk.timeout_ms):.1f}" stroke="{DURATION}" stroke-dasharray="2 3"/>')
        out.append(f'<line class="expiry" x1="{x(end):.1f}" y1="{PAD}" x2="{x(end):.1f}" y2="{y(0):.1f}" '
                   f'stroke="{EXPIRY}"/>')
        out.append(f'<text x="{x(end):.1f}" y="{HEIGHT - 8}" font-size="11" fill="{EXPIRY}" text-anchor="end">'
                   f'predicted expiry {_e(iso_ms(end)[11:19])}</text>')
    what = "oldest open transaction's age" if risk.cause == "transaction_timeout" else "checkpoint duration"
    out.append(f'<text x="{PAD}" y="14" font-size="11" fill="{DURATION}">{what}</text>')
    out.append(f'<text x="{PAD}" y="{HEIGHT - 8}" font-size="11" fill="#566573">{_e(iso_ms(t0)[11:19])} UTC</text>')
    out.append("</svg>")
    return "".join(out)


def risks_section(risks: Sequence[Risk], heading: str = "Early warnings") -> str:
    """``<h2>`` with ``heading`` and one entry per warning; empty when there is none."""
    shown = latest(risks)
    if not shown:
        return ""
    items = []
    for r in shown:
        advice = "".join(f"<li>{_e(step)}</li>" for step in r.advice)
        items.append(
            f'<section class="risk" id="{_e(r.risk_id)}"><p><strong>{_e(r.status)}</strong> · job '
            f"<code>{_e(r.job_id)}</code> · {_e(iso_ms(r.as_of_ms))}</p><p>{_e(r.headline)}</p>"
            + (f"<ol>{advice}</ol>" if advice else "") + f"<figure>{chart(r)}</figure></section>")
    return f"<h2>{_e(heading)}</h2>" + "".join(items)


def lost_by(v: Verdict, losses: Sequence[TransactionLoss]) -> list[TransactionLoss]:
    """The losses the verdict's failed checkpoint helped cause (its job's, the checkpoint among their failures)."""
    return [loss for loss in losses if loss.caused_by(v.cluster, v.job_id, v.checkpoint_id)]


def losses_section(losses: Sequence[TransactionLoss], heading: str = "Records lost") -> str:
    """``<h2>`` with ``heading`` and one entry per loss, the log line verbatim (escaped); empty when there is none."""
    if not losses:
        return ""
    items = []
    for loss in losses:
        facts = [f"job <code>{_e(loss.job_id or 'unknown')}</code>", _e(iso_ms(loss.as_of_ms))]
        if loss.transactional_id:
            facts.append(f"transactional id <code>{_e(loss.transactional_id)}</code>")
        if loss.failed_checkpoints:
            facts.append("failed checkpoints " + ", ".join(str(c) for c in loss.failed_checkpoints))
        advice = "".join(f"<li>{_e(step)}</li>" for step in loss.advice)
        items.append(f'<section class="loss" id="{_e(loss.loss_id)}"><p><strong>lost</strong> · '
                     + " · ".join(facts) + f"</p><p>{_e(loss.headline)}</p><pre>{_e(loss.line)}</pre>"
                     + (f"<ol>{advice}</ol>" if advice else "") + "</section>")
    return f"<h2>{_e(heading)}</h2>" + "".join(items)
