"""A verdict as a few lines a human reads first (``correlator analyze --format text``, the demo)."""

from __future__ import annotations

from correlator.core.events import iso_ms
from correlator.core.explain.outlook import span_text
from correlator.core.explain.verdict import NextWindow, Outlook, Verdict

WHAT = {"directory_scan": "DirectoryScanner run", "jvm_pause": "long JVM pause"}


def _s(ms: int | None) -> str:
    return "?" if ms is None else f"{ms / 1000:.1f} s"


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def window_sentence(kind: str, w: NextWindow) -> str:
    """``The next DirectoryScanner run on dn02 is expected at about 2020-01-02T15:05:05.024Z (interval 6 h, …).``"""
    what = WHAT.get(kind, kind)
    if w.expected_ms is None:
        return f"The next {what} on {w.host} cannot be predicted. {w.basis}"
    detail = [f"interval {span_text(w.interval_ms)}" if w.interval_ms else None,
              f"last {iso_ms(w.last_ms)}" if w.last_ms is not None else None]
    window = ""
    if w.earliest_ms is not None and w.latest_ms is not None and w.latest_ms > w.earliest_ms:
        window = f", within {iso_ms(w.earliest_ms)} – {iso_ms(w.latest_ms)}"
    return (f"The next {what} on {w.host} is expected at about {iso_ms(w.expected_ms)}{window} ("
            + ", ".join(d for d in detail if d) + ").")


def outlook_lines(o: Outlook) -> list[str]:
    """One sentence per host, then how each was derived."""
    return [f"{window_sentence(o.kind, w)}" + (f" {w.basis}" if w.expected_ms is not None else "")
            for w in o.windows]


def verdict_text(v: Verdict) -> str:
    f, rc = v.failure, v.root_cause
    chk = f"checkpoint {v.checkpoint_id}" if v.checkpoint_id is not None else "a checkpoint"
    job = v.job_id or "unknown job"
    lines = [
        f"{chk} of job {job} failed at {iso_ms(f.failed_at_ms)} ({f.kind}; ran {_s(f.duration_ms)}, "
        f"timeout {_s(f.timeout_ms)})",
        f"  cause: {rc.code} (confidence {rc.confidence:.2f})" + (f" on {', '.join(rc.hosts)}" if rc.hosts else "")
        + (f" — known issue {rc.known_issue}" if rc.known_issue else ""),
        f"  {rc.title}",
        f"  why: {rc.explanation}",
    ]
    if v.recurrence is not None:
        every = v.recurrence.typical_interval_ms
        lines.append(f"  recurrence: the {_ordinal(v.recurrence.count)} failure of this job with this cause since "
                     f"{iso_ms(v.recurrence.first_at_ms)}" + (f", typically every {every / 60000:.1f} min" if every
                                                               else ""))
    if v.evidence:
        lines.append("  evidence:")
        lines += [f"    {iso_ms(e.at_ms)} {e.host} {e.type}: {e.summary}" for e in v.evidence]
    if v.remediation:
        lines.append("  remediation:")
        for i, r in enumerate(v.remediation):
            lines.append(f"    - {r.text}")
            lines += [f"      what if: {w.text}; assumes {w.assumes}" for w in v.whatif if w.remediation == i]
    if v.outlook is not None:
        lines.append("  outlook:")
        lines += [f"    {line}" for line in outlook_lines(v.outlook)]
    if v.missing:
        lines.append("  missing: " + "; ".join(f"{m.role} {m.host} ({m.why})" for m in v.missing))
    guessed = [c for c in v.covered if c.why]
    if guessed:
        lines.append("  hosts guessed: " + "; ".join(f"{c.role} {c.host} ({c.why})" for c in guessed))
    return "\n".join(lines)
