"""Block Kit messages for incidents, from verdict dicts (``correlator.verdict/v1``).

Every string that may come from a log line (operator names, paths, hosts, summaries, titles) passes ``escape`` before it
enters mrkdwn, so ``<!channel>`` or ``<http://x|click>`` inside a log renders as text, never as a ping or a link. Every
field is cut to fit Slack's limits instead of having the post rejected.

Feedback buttons ("Right cause", "Wrong cause", "Not a problem") go on every message that shows one verdict's
explanation, named by the button's value: each thread reply (its own recurrence, which stays) and the parent (the
verdict it shows now: the first one until the incident recurs, then the latest). Clicks on a parent that was updated
meanwhile credit the verdict the reader saw, because Slack sends back the value of the button as rendered. A revision's
earlier message loses its buttons: that claim is withdrawn, the revision carries its own.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from correlator.core.events import iso_ms
from correlator.core.explain.causes import Code
from correlator.core.explain.registry import hosts_are
from correlator.core.explain.verdict import outlook_from_dict
from correlator.core.explain.verdict_text import unpredicted_sentence, window_sentence
from correlator.core.feedback import FeedbackShapeError, Label, VerdictRef, verdict_ref
from correlator.core.incidents import (
    RESOLVED,
    Incident,
    delivery_id,
    earlier_delivery_id,
    incident_to_dict,
    recurrence_summary,
)

HEADER_MAX = 150
SECTION_MAX = 3000
FIELD_MAX = 2000
FIELDS_MAX = 10
CONTEXT_ELEMENTS_MAX = 10
BLOCKS_MAX = 50
FALLBACK_MAX = 3000
EVIDENCE_SHOWN = 8
OUTLOOK_SHOWN = 6
KNOWN_ISSUE = re.compile(r"^(HDFS|HADOOP|FLINK|YARN|ZOOKEEPER)-\d{1,7}$")
JIRA_BROWSE = "https://issues.apache.org/jira/browse/"
METADATA_EVENT = "correlator_verdict"
BUTTON_VALUE_MAX = 2000
BUTTON_TEXT_MAX = 75
FEEDBACK_BLOCK = "correlator_feedback"
NAME_MAX = 80


class FeedbackButton(StrEnum):
    """The action ids of the feedback buttons: Slack sends one back with each click, read here into its label once."""

    RIGHT_CAUSE = "correlator_feedback_right_cause"
    WRONG_CAUSE = "correlator_feedback_wrong_cause"
    NOT_A_PROBLEM = "correlator_feedback_not_a_problem"

    @property
    def label(self) -> Label:
        return _BUTTON_LABELS[self]


_BUTTON_LABELS = {
    FeedbackButton.RIGHT_CAUSE: Label.RIGHT_CAUSE,
    FeedbackButton.WRONG_CAUSE: Label.WRONG_CAUSE,
    FeedbackButton.NOT_A_PROBLEM: Label.NOT_A_PROBLEM,
}
_BUTTON_STYLES = {FeedbackButton.RIGHT_CAUSE: "primary", FeedbackButton.WRONG_CAUSE: "danger"}


@dataclass(frozen=True, slots=True)
class Message:
    text: str
    """Notification fallback; Slack parses it like mrkdwn, so it is escaped as well."""
    blocks: list[dict[str, Any]]
    metadata: dict[str, Any]


def escape(text: object) -> str:
    """Slack's three control characters, and nothing else (Slack's own escaping rule)."""
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def truncate(text: str, limit: int) -> str:
    """Cut to ``limit`` characters with an ellipsis, never inside an ``&amp;``-style entity."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    amp = cut.rfind("&")
    if amp != -1 and ";" not in cut[amp:]:
        cut = cut[:amp]
    return cut + "…"


def plain(text: object, limit: int) -> dict[str, Any]:
    """A plain_text object. Slack does not parse it for mentions, yet angle brackets become look-alike guillemets so
    that no client, fallback or copy of the text can turn ``<!here>`` into a ping; control characters are dropped."""
    clean = re.sub(r"[\x00-\x1f]+", " ", str(text)).strip().replace("<", "\u2039").replace(">", "\u203a") or "-"
    return {"type": "plain_text", "text": truncate(clean, limit), "emoji": False}


def mrkdwn(text: str, limit: int = SECTION_MAX) -> dict[str, Any]:
    return {"type": "mrkdwn", "text": truncate(text, limit), "verbatim": True}


def section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": mrkdwn(text)}


def code(text: object) -> str:
    """Inline code for identifiers; backticks inside would end the span, so they become quotes."""
    return "`" + escape(str(text).replace("`", "'")) + "`"


def _issue_link(issue: object) -> str | None:
    if issue is None:
        return None
    text = str(issue)
    if KNOWN_ISSUE.match(text):
        return f"<{JIRA_BROWSE}{text}|{text}>"
    return escape(text)


def _fields(verdict: Mapping[str, Any]) -> list[dict[str, Any]]:
    failure = verdict.get("failure") or {}
    cause = verdict.get("root_cause") or {}
    pairs = [
        ("Job", code(verdict.get("job_id") or "unknown")),
        ("Checkpoint", escape(verdict.get("checkpoint_id") if verdict.get("checkpoint_id") is not None else "-")),
        ("Cluster", escape(verdict.get("cluster") or "default")),
        ("Confidence", f"{float(cause.get('confidence') or 0.0):.0%}"),
        ("Failure", escape(failure.get("kind") or "other") + _duration(failure)),
        ("Cause code", code(cause.get("code") or Code.UNEXPLAINED)),
    ]
    if failure.get("operator"):
        pairs.append(("Operator", escape(failure["operator"])))
    if cause.get("hosts"):
        said = hosts_are(str(cause.get("code") or ""))
        pairs.append(("Where" if said == "cause on" else said.capitalize(),
                      escape(", ".join(str(h) for h in cause["hosts"]))))
    link = _issue_link(cause.get("known_issue"))
    if link:
        pairs.append(("Known issue", link))
    return [mrkdwn(f"*{name}*\n{value}", FIELD_MAX) for name, value in pairs[:FIELDS_MAX]]


def _duration(failure: Mapping[str, Any]) -> str:
    duration, timeout = failure.get("duration_ms"), failure.get("timeout_ms")
    if duration is None:
        return ""
    text = f" after {int(duration):,} ms"
    return text + (f" (timeout {int(timeout):,} ms)" if timeout is not None else "")


def _evidence_lines(verdict: Mapping[str, Any], shown: int) -> list[str]:
    lines = []
    for item in (verdict.get("evidence") or [])[:shown]:
        at = escape(item.get("at") or "")
        where = escape(item.get("host") or "?") + (f" ({escape(item['role'])})" if item.get("role") else "")
        lines.append(f"• `{at}` {where}: {escape(item.get('summary') or item.get('type') or '')}")
    more = len(verdict.get("evidence") or []) - shown
    if more > 0:
        lines.append(f"_…and {more} more_")
    return lines


def _remediation(verdict: Mapping[str, Any]) -> str:
    """Each remediation line, with the what-if figures that quantify it beneath it."""
    figures = [w for w in verdict.get("whatif") or [] if isinstance(w, Mapping)]
    lines = []
    for i, step in enumerate(verdict.get("remediation") or []):
        lines.append(f"• {escape(step)}")
        lines += [f"      ↳ _what if:_ {escape(w.get('text') or '')} (assumes {escape(w.get('assumes') or '-')})"
                  for w in figures if w.get("remediation") == i]
    return "\n".join(lines)


def _outlook_lines(verdict: Mapping[str, Any]) -> list[str]:
    """The next expected window per host of a periodic cause; an unreadable outlook is left out, not guessed at."""
    try:
        outlook = outlook_from_dict(verdict.get("outlook"))
    except (KeyError, TypeError, ValueError, AttributeError):
        return []
    if outlook is None:
        return []
    said = [w for w in outlook.windows if w.expected_ms is not None]
    lines = [f"• {escape(window_sentence(outlook.kind, w))}" for w in said[:OUTLOOK_SHOWN]]
    more = len(said) - OUTLOOK_SHOWN
    rest = unpredicted_sentence(outlook)
    return lines + ([f"_…and {more} more hosts_"] if more > 0 else []) + ([f"• {escape(rest)}"] if rest else [])


def _status_line(incident: Incident) -> str:
    first, last = iso_ms(incident.first_seen_ms), iso_ms(incident.last_seen_ms)
    text = f"*Recurrence:* {escape(recurrence_summary(incident))} · first `{first}` · last `{last}`"
    if incident.status == RESOLVED and incident.resolved_at_ms is not None:
        text += f"\n:white_check_mark: *Resolved*: quiet since `{last}`"
    return text


def _metadata(verdict: Mapping[str, Any], incident: Incident) -> dict[str, Any]:
    return {
        "event_type": METADATA_EVENT,
        "event_payload": {
            "verdict_id": delivery_id(verdict),
            "incident_id": incident.key.id,
            "epoch": incident.epoch,
            "count": incident.count,
            "incident": incident_to_dict(incident),
        },
    }


def _fallback(prefix: str, verdict: Mapping[str, Any]) -> str:
    cause = verdict.get("root_cause") or {}
    job = verdict.get("job_id") or "unknown job"
    return truncate(escape(f"{prefix}{cause.get('title') or cause.get('code')} (job {job})"), FALLBACK_MAX)


def _cap(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return blocks[:BLOCKS_MAX]


def _revised(verdict: Mapping[str, Any]) -> str:
    """The line that says a verdict was revised, and why; empty for a first decision."""
    try:
        revision = int(verdict.get("revision") or 0)
    except (TypeError, ValueError):
        return ""
    if revision <= 0:
        return ""
    reason = verdict.get("revision_reason") or "late evidence changed the cause"
    return f"*Revised* (revision {revision} of verdict {code(verdict.get('verdict_id'))}): {escape(str(reason))}"


def parent_message(verdict: Mapping[str, Any], incident: Incident, buttons: bool = False) -> Message:
    """The incident's top-level message: the latest verdict's explanation plus the recurrence so far; with ``buttons``,
    the feedback buttons for that verdict."""
    cause = verdict.get("root_cause") or {}
    resolved = incident.status == RESOLVED
    title = cause.get("title") or cause.get("code") or "Checkpoint failure"
    revised = _revised(verdict)
    blocks: list[dict[str, Any]] = [
        {"type": "header", "text": plain(("Resolved: " if resolved else "Revised: " if revised else "") + str(title),
                                         HEADER_MAX)},
        {"type": "section", "fields": _fields(verdict)},
        section(_status_line(incident)),
    ]
    if revised:
        blocks.append(section(revised))
    if cause.get("explanation"):
        blocks.append(section("*Why:* " + escape(cause["explanation"])))
    evidence = _evidence_lines(verdict, EVIDENCE_SHOWN)
    if evidence:
        blocks.append(section("*Evidence*\n" + "\n".join(evidence)))
    if verdict.get("remediation"):
        blocks.append(section("*Remediation*\n" + _remediation(verdict)))
    outlook = _outlook_lines(verdict)
    if outlook:
        blocks.append(section("*Outlook*\n" + "\n".join(outlook)))
    missing = (verdict.get("coverage") or {}).get("missing") or []
    context = [mrkdwn(f"verdict {code(verdict.get('verdict_id'))}", FIELD_MAX)]
    if (verdict.get("failure") or {}).get("path"):
        context.append(mrkdwn(f"path {code(verdict['failure']['path'])}", FIELD_MAX))
    if missing:
        hosts = ", ".join(escape(f"{m.get('host')} ({m.get('role')})") for m in missing[:10])
        context.append(mrkdwn(f"logs missing from: {hosts}", FIELD_MAX))
    if incident.hosts:
        context.append(mrkdwn("hosts involved: " + escape(", ".join(incident.hosts)), FIELD_MAX))
    blocks.append({"type": "context", "elements": context[:CONTEXT_ELEMENTS_MAX]})
    _with_buttons(blocks, verdict, buttons)
    prefix = "Resolved: " if resolved else "Revised: " if revised else ""
    return Message(_fallback(prefix, verdict), _cap(blocks), _metadata(verdict, incident))


def reply_message(verdict: Mapping[str, Any], incident: Incident, buttons: bool = False) -> Message:
    """A thread reply for a recurrence: what is new in this occurrence, short; with ``buttons``, its feedback
    buttons."""
    failure = verdict.get("failure") or {}
    cause = verdict.get("root_cause") or {}
    checkpoint = verdict.get("checkpoint_id")
    head = (
        f"*{escape(recurrence_summary(incident)).capitalize()}*: checkpoint "
        f"{escape(checkpoint if checkpoint is not None else '-')} failed at `{escape(failure.get('failed_at') or '?')}`"
        f" ({escape(failure.get('kind') or 'other')}{_duration(failure)}), "
        f"confidence {float(cause.get('confidence') or 0.0):.0%}"
    )
    if failure.get("operator"):
        head += f"\n*Operator:* {escape(failure['operator'])}"
    revised = _revised(verdict)
    blocks = [section(revised + "\n" + head if revised else head)]
    evidence = _evidence_lines(verdict, 3)
    if evidence:
        blocks.append(section("\n".join(evidence)))
    blocks.append({"type": "context", "elements": [mrkdwn(f"verdict {code(verdict.get('verdict_id'))}")]})
    _with_buttons(blocks, verdict, buttons)
    return Message(_fallback(f"Again ({incident.count}×): ", verdict), _cap(blocks), _metadata(verdict, incident))


def superseded_message(verdict: Mapping[str, Any], incident_id: str | None) -> Message:
    """What an earlier verdict's message becomes once ``verdict`` revised it: that it was revised, why, and the cause
    now named (posted in its own incident's thread). Its metadata still names the earlier delivery."""
    cause = verdict.get("root_cause") or {}
    earlier = earlier_delivery_id(verdict) or str(verdict.get("verdict_id"))
    now = f"The cause is now {code(cause.get('code'))}: {escape(str(cause.get('title') or ''))}"
    blocks = [
        {"type": "header", "text": plain("Revised: " + str(cause.get("title") or cause.get("code") or ""), HEADER_MAX)},
        section(_revised(verdict) + "\n" + now),
        {"type": "context", "elements": [mrkdwn(f"verdict {code(verdict.get('verdict_id'))}", FIELD_MAX)]},
    ]
    payload = {"verdict_id": earlier, "superseded_by": delivery_id(verdict)}
    if incident_id:
        payload["incident_id"] = incident_id
    return Message(_fallback("Revised: ", verdict), blocks, {"event_type": METADATA_EVENT, "event_payload": payload})


def feedback_value(ref: VerdictRef) -> str:
    """A button's value: the delivery id, code and cluster as compact JSON (any character survives the round trip)."""
    return json.dumps({"v": ref.verdict_id, "c": ref.code, "k": ref.cluster}, separators=(",", ":"),
                      ensure_ascii=False)


def read_feedback_value(value: object) -> VerdictRef:
    """The verdict a clicked button names; ``FeedbackShapeError`` for a value this module did not write."""
    if not isinstance(value, str) or len(value) > BUTTON_VALUE_MAX:
        raise FeedbackShapeError("a button value is a string of at most 2000 characters")
    try:
        data = json.loads(value)
    except ValueError:
        raise FeedbackShapeError("a button value is JSON") from None
    if not isinstance(data, dict):
        raise FeedbackShapeError("a button value is a JSON object")
    return VerdictRef(data.get("v"), data.get("c"), data.get("k"))  # type: ignore[arg-type]  # checked there


def feedback_actions(verdict: Mapping[str, Any]) -> dict[str, Any] | None:
    """The actions block of a verdict's three feedback buttons; None when the verdict cannot be named in a button
    (no id or code, or a reference longer than Slack keeps): no button is better than one that names nothing."""
    try:
        value = feedback_value(verdict_ref(verdict))
    except ValueError:  # VerdictShapeError
        return None
    if len(value) > BUTTON_VALUE_MAX:
        return None
    elements = []
    for button in FeedbackButton:
        element: dict[str, Any] = {"type": "button", "action_id": button.value,
                                   "text": plain(button.label.text, BUTTON_TEXT_MAX), "value": value}
        if button in _BUTTON_STYLES:
            element["style"] = _BUTTON_STYLES[button]
        elements.append(element)
    return {"type": "actions", "block_id": FEEDBACK_BLOCK, "elements": elements}


def _with_buttons(blocks: list[dict[str, Any]], verdict: Mapping[str, Any], buttons: bool) -> None:
    """The buttons close the message; kept within the block limit by taking the place of the last block before."""
    actions = feedback_actions(verdict) if buttons else None
    if actions is not None:
        del blocks[BLOCKS_MAX - 1:]
        blocks.append(actions)


def display_name(name: object, fallback: str) -> str:
    """A user-supplied name fit for a plain-text sentence: control characters dropped, cut short, never empty."""
    clean = re.sub(r"[\x00-\x1f\x7f]+", " ", str(name or "")).strip()
    return truncate(clean, NAME_MAX) if clean else fallback


def feedback_ack_text(name: str, label: Label, changed: bool = False) -> str:
    """The thread's acknowledgement of a recorded answer. Posted as plain text (no mrkdwn), and escaped as well: a name
    such as ``<!channel>`` stays text, never a ping."""
    verb = "now says" if changed else "says"
    return escape(f"Feedback recorded: {name} {verb} {label.text.lower()}.")
