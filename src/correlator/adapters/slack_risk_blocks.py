"""Block Kit messages for early warnings (``correlator.risk/v1``): quieter than an incident's.

No header, no mention, no incident: one context line says what it is, one section says the warning in the record's
own words, and the advice follows as a list. The words are the core's, built from log text, so they pass ``escape``
like every other string the bot posts. The metadata carries the risk and the delivery (status at a time), so a post
whose recording was lost is found again instead of posted twice.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from correlator.adapters.slack_blocks import FALLBACK_MAX, FIELD_MAX, Message, code, escape, mrkdwn, section, truncate

METADATA_EVENT = "correlator_risk"
WORDS = {"raised": "Early warning", "updated": "Early warning, updated", "withdrawn": "Warning withdrawn",
         "superseded": "Warning superseded"}
EMOJI = {"raised": ":hourglass_flowing_sand:", "updated": ":hourglass_flowing_sand:", "withdrawn": ":white_check_mark:",
         "superseded": ":arrow_right:"}


def delivery_of(risk: Mapping[str, Any]) -> str:
    """One delivery per risk, status and time (``updated`` comes more than once)."""
    return f"{risk.get('risk_id')}/{risk.get('status')}@{risk.get('as_of_ms')}"


def risk_message(risk: Mapping[str, Any]) -> Message:
    status = str(risk.get("status"))
    words = WORDS.get(status, "Early warning")
    blocks: list[dict[str, Any]] = [
        {"type": "context", "elements": [mrkdwn(f"{EMOJI.get(status, '')} {words} · job {code(risk.get('job_id'))} · "
                                                f"cluster {code(risk.get('cluster'))}", FIELD_MAX)]},
        section(escape(str(risk.get("headline") or ""))),
    ]
    advice = [str(step) for step in risk.get("advice") or []]
    if advice:
        blocks.append(section("*What to do*\n" + "\n".join(f"• {escape(step)}" for step in advice)))
    blocks.append({"type": "context", "elements": [mrkdwn(f"risk {code(risk.get('risk_id'))}", FIELD_MAX)]})
    fallback = truncate(escape(f"{words}: {risk.get('headline') or ''}"), FALLBACK_MAX)
    metadata = {"event_type": METADATA_EVENT,
                "event_payload": {"risk_id": str(risk.get("risk_id")), "delivery": delivery_of(risk),
                                  "status": str(risk.get("status"))}}
    return Message(fallback, blocks, metadata)
