"""A verdict as a few lines a human reads first (``correlator analyze --format text``, the demo)."""

from __future__ import annotations

import textwrap

from correlator.core.events import CheckpointDeclined, CheckpointExpired, CheckpointFailed, iso_ms
from correlator.core.explain.registry import hosts_are
from correlator.core.explain.kinds import Periodic
from correlator.core.explain.labels import event_label
from correlator.core.explain.outlook import span_text
from correlator.core.explain.verdict import NextWindow, Outlook, Verdict

WHAT: dict[str, str] = {Periodic.DIRECTORY_SCAN: "DirectoryScanner run", Periodic.JVM_PAUSE: "long JVM pause"}


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


def _and(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def unpredicted_sentence(o: Outlook) -> str | None:
    """The hosts whose next run cannot be said, in one sentence: a reader should not skip a line per host to find the
    ones that can (how each was judged stays in the outlook's JSON)."""
    hosts = [w.host for w in o.windows if w.expected_ms is None]
    if not hosts:
        return None
    what = WHAT.get(o.kind, o.kind)
    if len(hosts) == len(o.windows):
        return f"The logs give no schedule from which to predict the next {what} on {_and(hosts)}."
    return f"The logs of {_and(hosts)} give no schedule from which to predict their next {what}."


def outlook_lines(o: Outlook) -> list[str]:
    """One sentence per host whose next run can be said, with how it was derived; the others in one sentence."""
    said = [f"{window_sentence(o.kind, w)} {w.basis}" for w in o.windows if w.expected_ms is not None]
    rest = unpredicted_sentence(o)
    return said + ([rest] if rest else [])


def failure_time_sentence(v: Verdict) -> str | None:
    """Which time is the failure when the JobManager's expiry and the task's own report differ: the timeout runs out
    first, and the task reports its failure (say, ``async_materialize``) only once its stuck write returns."""
    f = v.failure
    expired = [e.at_ms for e in v.evidence if e.type == CheckpointExpired.type]
    reported = sorted(e.at_ms for e in v.evidence if e.type in (CheckpointFailed.type, CheckpointDeclined.type))
    if not expired or f.failed_at_ms not in expired:
        return None
    timeout = f"its {_s(f.timeout_ms)} timeout" if f.timeout_ms is not None else "its timeout"
    text = f"The failure time is when the JobManager expired the checkpoint because {timeout} ran out."
    later = [at for at in reported if at > f.failed_at_ms]
    if later and f.kind != "expired":
        text += (f" The task reported its own failure ({f.kind.replace('_', ' ')}) {_s(later[0] - f.failed_at_ms)} "
                 f"later, at {iso_ms(later[0])}, when its write returned.")
    return text


def _cause_line(code: str, confidence: float, hosts: tuple[str, ...]) -> str:
    """``cause: CODE on hosts``; a verdict that names no cause says what its hosts are (looked at, logs missing)."""
    said = hosts_are(code)
    if said == "cause on":
        return f"  cause: {code} (confidence {confidence:.2f})" + (f" on {', '.join(hosts)}" if hosts else "")
    return f"  verdict: {code} (confidence {confidence:.2f})" + (f"; {said} {', '.join(hosts)}" if hosts else "")


TEXT_WIDTH = 100
"""Where a text verdict wraps when it is not written to a terminal (whose own width is used then)."""


def verdict_text(v: Verdict, width: int = TEXT_WIDTH) -> str:
    """The cause first, then what to do, then why; evidence named in words; every line wrapped to ``width``."""
    f, rc = v.failure, v.root_cause
    chk = f"checkpoint {v.checkpoint_id}" if v.checkpoint_id is not None else "a checkpoint"
    job = v.job_id or "unknown job"
    lines = [
        (f"{chk} of job {job} failed at {iso_ms(f.failed_at_ms)} ({f.kind}; ran {_s(f.duration_ms)}, "
         f"timeout {_s(f.timeout_ms)})", ""),
        (_cause_line(rc.code, rc.confidence, rc.hosts).strip()
         + (f" — known issue {rc.known_issue}" if rc.known_issue else ""), "  "),
        (rc.title, "  "),
    ]
    if v.remediation:
        lines.append(("what to do:", "  "))
        for i, r in enumerate(v.remediation):
            lines.append((f"- {r.text}", "    "))
            lines += [(f"what if: {w.text}; assumes {w.assumes}", "      ") for w in v.whatif if w.remediation == i]
    lines.append((f"why: {rc.explanation}", "  "))
    if (when := failure_time_sentence(v)) is not None:
        lines.append((f"when: {when}", "  "))
    if v.recurrence is not None:
        every = v.recurrence.typical_interval_ms
        lines.append((f"recurrence: the {_ordinal(v.recurrence.count)} failure of this job with this cause since "
                      f"{iso_ms(v.recurrence.first_at_ms)}" + (f", typically every {every / 60000:.1f} min" if every
                                                               else ""), "  "))
    if v.evidence:
        lines.append(("evidence:", "  "))
        lines += [(f"{iso_ms(e.at_ms)} {e.host} {event_label(e.type)}: {e.summary}", "    ") for e in v.evidence]
    if v.outlook is not None:
        lines.append(("outlook:", "  "))
        lines += [(line, "    ") for line in outlook_lines(v.outlook)]
    if v.missing:
        lines.append(("missing: " + "; ".join(f"{m.role} {m.host} ({m.why})" for m in v.missing), "  "))
    guessed = [c for c in v.covered if c.why]
    if guessed:
        lines.append(("hosts guessed: " + "; ".join(f"{c.role} {c.host} ({c.why})" for c in guessed), "  "))
    return "\n".join(_wrapped(text, indent, width) for text, indent in lines)


def _wrapped(text: str, indent: str, width: int) -> str:
    """One item over as many lines as it needs, its continuation lines indented two more (long words not broken:
    a path or an id stays whole)."""
    return textwrap.fill(text, width=max(40, width), initial_indent=indent, subsequent_indent=indent + "  ",
                         break_long_words=False, break_on_hyphens=False)
