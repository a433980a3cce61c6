"""HTML pages of verdicts: an index and one page per verdict with its timeline, shared by the offline report and the
worker's web server.

Pages are self-contained (inline CSS, the timeline as inline SVG, no script, no font or CDN) and every piece of text
that came from a log or a record is escaped: log lines are untrusted. A Content-Security-Policy forbids scripts
outright, so even a missed escape could not run one.

Each evidence row opens (``<details>``, no script) onto the raw lines it was read from when the caller can look them
up (the offline report reads its files), and the rows that decided the verdict (the root cause's, as the timeline
outlines them) are open from the start; this module does no I/O, so the worker's pages, which keep no log files,
say where each line is instead.

No word is cut to fit: cells, names and lines wrap inside their boxes (the browser test measures every text box),
and event types are shown by their names for people (:mod:`correlator.core.explain.labels`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape

from correlator.adapters.report_risks import losses_section, lost_by, risks_section, warned
from correlator.core.events import iso_ms
from correlator.core.explain.registry import hosts_are
from correlator.core.explain.labels import event_label
from correlator.core.explain.risk import Risk
from correlator.core.explain.timeline import CAUSE_TYPES, build_timeline, role_name
from correlator.core.explain.transactions import TransactionLoss
from correlator.core.explain.verdict import EvidenceItem, Verdict
from correlator.core.explain.verdict_text import failure_time_sentence, unpredicted_sentence, window_sentence

CSP = "default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"
SAFE_ID = re.compile(r"^[A-Za-z0-9_-]{1,128}$")

STYLE = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:1.5em auto;max-width:1280px;
color:#1c2833;padding:0 1em;overflow-wrap:break-word}
h1{font-size:1.3em;margin:.2em 0}h2{font-size:1.05em;margin:1.4em 0 .4em;border-bottom:1px solid #d5d8dc}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.25em .5em;border-bottom:1px solid #eaeded;
vertical-align:top}th{background:#f4f6f7;font-weight:600}td.num{text-align:right;white-space:nowrap}
code,.ref,pre{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.9em}
td:first-child{white-space:nowrap}#verdicts td.job,#verdicts td.title{overflow-wrap:anywhere}
.code{display:inline-block;padding:.1em .5em;border-radius:4px;background:#c0392b;color:#fff;font-weight:600}
.meta{color:#566573}figure{margin:0}figure svg{width:100%;height:auto}nav a{margin-right:1em}
.whatif{margin:.2em 0 .4em}.risk-chart{max-width:560px}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.15em 1em}dt{color:#566573}
dd{margin:0;min-width:0;overflow-wrap:anywhere}
#evidence{table-layout:fixed}#evidence td{white-space:normal;overflow-wrap:anywhere}
col.at{width:8em}col.span{width:4.5em}col.type{width:11em}col.host{width:20%}col.src{width:18%}
.ref .line{white-space:nowrap}
details.raw summary{cursor:pointer}details.raw p{margin:.3em 0 0}
details.raw pre{margin:.2em 0 .4em;padding:.4em .5em;background:#f4f6f7;border-left:3px solid #aab7b8;
white-space:pre-wrap;overflow-wrap:anywhere;max-height:24em;overflow:auto}
@media (max-width:1000px){#evidence{font-size:.9em}col.at{width:8.2em}col.span{width:4.2em}col.type{width:8.5em}
col.host{width:10.5em}col.src{width:10.5em}.role{display:block}}
"""


def page_key(verdict_id: str) -> str:
    """A name for the verdict's page in a file name or URL path: the id itself when it is plain, else its digest
    (ids come from records, and a record may carry anything)."""
    if SAFE_ID.match(verdict_id):
        return verdict_id
    return "sha256-" + hashlib.sha256(verdict_id.encode("utf-8", "surrogatepass")).hexdigest()[:40]


@dataclass(frozen=True, slots=True)
class Links:
    """Where the pages point: files side by side offline, routes on the worker."""

    page: Callable[[str], str]
    png: Callable[[str], str]
    index: str


FILE_LINKS = Links(page=lambda vid: f"{vid}.html", png=lambda vid: f"{vid}.png", index="index.html")


@dataclass(frozen=True, slots=True)
class RawLines:
    """The lines an evidence row was read from, as logged, or why none are shown: an SRE trusts the line itself
    more than any summary of it."""

    path: str
    first_line: int
    lines: tuple[str, ...] = ()
    cut: bool = False
    """A line was cut at the reader's bound, or the record went on past the lines shown."""
    missing: str = ""
    """Why no line is shown (the file cannot be read, the page's share of lines is spent)."""


RawLookup = Callable[[str], RawLines | None]
"""An evidence ref to its raw lines; ``None`` when the ref names no line of a file."""
REF = re.compile(r"(?P<path>.+):(?P<line>[1-9][0-9]{0,11})")


def file_line(ref: str) -> tuple[str, int] | None:
    """``path:line`` to its parts; ``None`` for any other reference (a topic record's ``topic/partition@offset``)."""
    m = REF.fullmatch(ref)
    return None if m is None else (m["path"], int(m["line"]))


def _e(value: object) -> str:
    return escape("" if value is None else str(value), quote=True)


def _name(value: str) -> str:
    """A host or file name, escaped, that a narrow cell may break before a dot (``dn02<wbr>.example<wbr>.com``)
    rather than anywhere."""
    return "<wbr>.".join(_e(part) for part in value.split("."))


def _page(title: str, body: str) -> str:
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        "<link rel=\"icon\" href=\"data:,\">"  # no favicon request (a 404 in every browser console)
        f"<meta name=\"referrer\" content=\"no-referrer\"><title>{_e(title)}</title><style>{STYLE}</style></head>"
        f"<body>{body}</body></html>\n"
    )


def _ms(ms: int | None) -> str:
    return "–" if ms is None else f"{ms / 1000:.1f} s"


def inline_svg(svg: bytes) -> str:
    """matplotlib's SVG document as an element to put inside HTML (its XML prolog and doctype dropped)."""
    text = svg.decode("utf-8")
    return text[text.index("<svg"):]


def index_page(verdicts: Sequence[Verdict], links: Links = FILE_LINKS, heading: str = "correlator verdicts",
               extra: str = "") -> str:
    """The verdicts' table; ``extra`` is HTML of this module's making appended after it (losses, early warnings)."""
    rows = []
    for v in verdicts:
        cp = "–" if v.checkpoint_id is None else str(v.checkpoint_id)
        code = "_<wbr>".join(_e(part) for part in v.root_cause.code.split("_"))  # a narrow page breaks it there
        link = f"<a href=\"{_e(links.page(page_key(v.verdict_id)))}\">{code}</a>"
        hosts = ", ".join(_name(h) for h in v.root_cause.hosts) or "–"
        rows.append(
            f"<tr><td>{_e(iso_ms(v.failure.failed_at_ms))}</td>"
            f"<td class=\"job\"><code>{_e(v.job_id or '–')}</code></td><td class=\"num\">{_e(cp)}</td>"
            f"<td>{link}</td><td>{hosts}</td><td class=\"num\">{v.root_cause.confidence:.2f}</td>"
            f"<td class=\"title\">{_e(v.root_cause.title)}</td></tr>"
        )
    table = ("<table id=\"verdicts\"><thead><tr><th>failed at (UTC)</th><th>job</th><th>checkpoint</th><th>code</th>"
             "<th>host</th><th>confidence</th><th>title</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>")
    count = f"<p class=\"meta\">{len(verdicts)} verdict{'s' if len(verdicts) != 1 else ''}</p>"
    return _page(heading, f"<h1>{_e(heading)}</h1>{count}{table}{extra}")


def verdict_page(v: Verdict, svg: bytes | None, links: Links = FILE_LINKS, zone: str = "UTC",
                 raw: RawLookup | None = None, risks: Sequence[Risk] = (),
                 losses: Sequence[TransactionLoss] = ()) -> str:
    """One verdict, the fix first: the cause (heading), what to do (with its what-if figures), why, the early
    warning that preceded it (the job's warnings among ``risks``, with their chart), the records an exactly-once
    sink lost because of it (among ``losses``, the failure one of theirs), the timeline, the failure,
    evidence with refs (opening onto their raw lines when ``raw`` can look them up), alternatives, the outlook of a
    periodic cause, coverage. The logs' ``zone`` is named once, on the timeline's axis (drawn with it)."""
    f, rc = v.failure, v.root_cause
    nav = f"<nav><a href=\"{_e(links.index)}\">all verdicts</a>"
    nav += f"<a href=\"{_e(links.png(page_key(v.verdict_id)))}\">timeline PNG</a>" if svg is not None else ""
    nav += "</nav>"
    head = (f"<h1><span class=\"code\">{_e(rc.code)}</span> {_e(rc.title)}</h1>"
            f"<p class=\"meta\">confidence {rc.confidence:.2f} · {_e(hosts_are(rc.code))} "
            f"{_e(', '.join(rc.hosts) or '–')}"
            + (f" · known issue {_e(rc.known_issue)}" if rc.known_issue else "")
            + f" · verdict <code>{_e(v.verdict_id)}</code></p>")
    figure = "" if svg is None else (
        "<h2>Timeline</h2><figure id=\"timeline\" role=\"img\" "
        "aria-label=\"timeline of the failure, one lane per host\">"
        f"{inline_svg(svg)}</figure>")  # the axis says the times are UTC and the zone of the logs
    facts = [("cluster", v.cluster), ("job", v.job_id), ("checkpoint", v.checkpoint_id),
             ("failure", f.kind.replace("_", " ")), ("failed at", iso_ms(f.failed_at_ms)),
             ("started at", None if f.started_at_ms is None else iso_ms(f.started_at_ms)),
             ("ran for", _ms(f.duration_ms)), ("timeout", _ms(f.timeout_ms)), ("operator", f.operator),
             ("path", f.path), ("on hosts", ", ".join(f.hosts)), ("decided at (event time)", iso_ms(v.decided_at_ms))]
    if v.recurrence is not None:
        r = v.recurrence
        facts.append(("recurrence", f"{r.count} failures since {iso_ms(r.first_at_ms)}, typically every "
                                    f"{_ms(r.typical_interval_ms)}"))
    failure = "<h2>Failure</h2><dl id=\"failure\">" + "".join(
        f"<dt>{_e(k)}</dt><dd>{_e('–' if val is None or val == '' else val)}</dd>" for k, val in facts) + "</dl>"
    when = failure_time_sentence(v)
    failure += f"<p id=\"failure-time\">{_e(when)}</p>" if when else ""
    explanation = f"<h2>Why</h2><p id=\"explanation\">{_e(rc.explanation)}</p>"
    evidence = evidence_table(v, raw)
    alternatives = "" if not v.alternatives else "<h2>Ranked lower</h2><ul id=\"alternatives\">" + "".join(
        f"<li><code>{_e(a.code)}</code> {a.confidence:.2f}</li>" for a in v.alternatives) + "</ul>"
    remediation = "<h2>What to do</h2><ol id=\"remediation\">" + "".join(
        f"<li>{_e(step.text)}" + "".join(f"<p class=\"whatif\">what if: {_e(w.text)} <span class=\"meta\">(assumes "
                                    f"{_e(w.assumes)})</span></p>" for w in v.whatif if w.remediation == i)
        + "</li>" for i, step in enumerate(v.remediation)) + "</ol>"
    rest = None if v.outlook is None else unpredicted_sentence(v.outlook)
    outlook = "" if v.outlook is None else "<h2>Outlook</h2><ul id=\"outlook\">" + "".join(
        f"<li>{_e(window_sentence(v.outlook.kind, w))}<br><span class=\"meta\">{_e(w.basis)}</span></li>"
        for w in v.outlook.windows if w.expected_ms is not None) + (f"<li>{_e(rest)}</li>" if rest else "") + "</ul>"
    covered = ", ".join(f"{c.host} ({role_name(c.role)})" for c in v.covered) or "–"
    missing = "".join(f"<li>{_e(m.host)} ({_e(role_name(m.role))}){': ' + _e(m.why) if m.why else ''}</li>"
                      for m in v.missing)
    coverage = (f"<h2>Logs read</h2><p id=\"covered\">{_e(covered)}</p>"
                + (f"<p>missing:</p><ul id=\"missing\">{missing}</ul>" if missing else ""))
    warning = risks_section(warned(v, risks), heading="Early warning")
    lost = losses_section(lost_by(v, losses))
    return _page(f"{rc.code} – {rc.title}",
                 # the fix first: what failed, what to do, why, then the pictures and the evidence behind it
                 nav + head + remediation + explanation + warning + lost + figure + failure + evidence + alternatives
                 + outlook + coverage)


def _short(ref: str) -> str:
    """The source cell: the file's name and line, the full ref on hover (the directory is noise in a table). A long
    name wraps within its cell, whole; the line number stays in one piece."""
    where = file_line(ref)
    if where is None:
        return (f"<span class=\"ref\" title=\"{_e(ref)}\"><span class=\"file\"><bdi>{_e(ref or '–')}</bdi></span>"
                "</span>")
    path, line = where
    name = path.replace("\\", "/").rsplit("/", 1)[-1] or path
    return (f"<span class=\"ref\" title=\"{_e(ref)}\"><span class=\"file\"><bdi>{_name(name)}</bdi></span>"
            f"<span class=\"line\">:{line}</span></span>")


def _raw_block(summary: str, found: RawLines | None, is_open: bool = False) -> str:
    """The summary as the ``<summary>`` of a ``<details>`` holding the raw lines with their file and line, open when
    the row is one that decided the verdict."""
    if found is None or not found.lines:
        why = found.missing if found is not None and found.missing else "its source is not a line of a file"
        body = f"<p class=\"meta\">raw line not shown: {_e(why)}</p>"
    else:
        last = found.first_line + len(found.lines) - 1
        lines = f"line {found.first_line}" if last == found.first_line else f"lines {found.first_line}–{last}"
        body = (f"<p class=\"meta\">{_e(found.path)}, {lines}{' (shortened)' if found.cut else ''}</p>"
                f"<pre>{_e(chr(10).join(found.lines))}</pre>")
    return f"<details class=\"raw\"{' open' if is_open else ''}><summary>{_e(summary)}</summary>{body}</details>"


def _where_note(refs: Sequence[str]) -> str:
    """Where the raw lines are, for pages that cannot show them (the worker keeps no log lines)."""
    places = []
    if any(file_line(r) is not None for r in refs):
        places.append("a file and line number on the host that logged it")
    if any(r and file_line(r) is None for r in refs):
        places.append("a record of the raw-log topic (topic/partition@offset)")
    if not places:
        return ""
    return (f"<p class=\"meta\" id=\"raw-where\">This page keeps no log lines: each row's source names where its "
            f"raw line is, {' or '.join(places)}; hover it for the full reference.</p>")


EVIDENCE_HEAD = (
    "<h2>Evidence</h2><table id=\"evidence\"><colgroup><col class=\"at\"><col class=\"span\"><col class=\"type\">"
    "<col class=\"host\"><col class=\"sum\"><col class=\"src\"></colgroup><thead><tr><th>at (UTC)</th><th>span</th>"
    "<th>type</th><th>host</th><th>summary</th><th>source line</th></tr></thead><tbody>")


OPEN_ROWS = 6
"""Deciding rows shown open at most: the rest of a long cause's rows are a click away."""


def deciding(v: Verdict) -> set[EvidenceItem]:
    """The evidence rows that decided the verdict, the first ``OPEN_ROWS`` of them in the verdict's order: those the
    timeline outlines as the root cause's, or when it outlines none (a cause that names no host, a host lost as told
    by another) the rows of the types the cause is read from; none for a verdict that names no cause."""
    drawn = build_timeline(v)
    cause = {(d.kind, d.ref) for d in drawn.spans if d.emphasis == "cause"}
    cause |= {(d.kind, d.ref) for d in drawn.marks if d.emphasis == "cause"}
    rows = [e for e in v.evidence if (e.type, e.ref) in cause]
    if not rows:
        rows = [e for e in v.evidence if e.type in CAUSE_TYPES.get(v.root_cause.code, ())]
    return set(rows[:OPEN_ROWS])


def evidence_table(v: Verdict, raw: RawLookup | None) -> str:
    """The evidence, one row each: time, span, kind (in words), host, summary (opening onto the raw lines when
    ``raw`` is given, the deciding rows open) and the source shortened to file name and line. Fixed column widths:
    a long path or line never widens the page, it wraps within its cell."""
    day = iso_ms(v.failure.failed_at_ms)[:10]
    rows = []
    opened = deciding(v) if raw is not None else set()
    for e in v.evidence:
        at = iso_ms(e.at_ms)
        shown = at[11:23] if at[:10] == day else at  # the day is the failure's unless it says otherwise
        span = _ms(e.end_ms - e.start_ms) if e.start_ms is not None and e.end_ms is not None else ""
        # as the timeline's lanes: the role first, it is short; a long host name wraps before a dot
        host = f"<span class=\"role\">{_e(role_name(e.role))}</span> {_name(e.host)}"
        summary = _e(e.summary) if raw is None else _raw_block(e.summary, raw(e.ref), e in opened)
        rows.append(f"<tr><td title=\"{_e(at)}\">{_e(shown)}</td><td class=\"num\">{_e(span)}</td>"
                    f"<td>{_e(event_label(e.type))}</td>"
                    f"<td title=\"{_e(role_name(e.role))} {_e(e.host)}\">{host}</td>"
                    f"<td class=\"sum\">{summary}</td><td>{_short(e.ref)}</td></tr>")
    note = "" if raw is not None else _where_note([e.ref for e in v.evidence])
    return EVIDENCE_HEAD + "".join(rows) + "</tbody></table>" + note
