"""Block Kit messages for early warnings (``correlator.risk/v1``), quieter than an incident's, and for the records an
exactly-once Kafka sink lost (``correlator.loss/v1``), louder than a warning.

No header, no mention, no incident: one context line says what it is, one section says the warning in the record's
own words, and the advice follows as a list. The words are the core's, built from log text, so they pass ``escape``
like every other string the bot posts. The metadata carries the risk and the delivery (status at a time), so a post
whose recording was lost is found again instead of posted twice.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from correlator.adapters.slack_blocks import (FALLBACK_MAX, FIELD_MAX, HEADER_MAX, Message, code, escape, mrkdwn, plain,
                                             section, truncate)

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


LOSS_EVENT = "correlator_loss"
LOSS_LINE_MAX = 600
"""The broker's (or committer's) line is quoted whole up to this: enough for the transactional id and the reason."""


def loss_message(loss: Mapping[str, Any]) -> Message:
    """A header (records were lost: this is no warning), the record's own words, the line that shows the loss as
    quoted code, and the advice. Posted once per loss; its metadata names the loss, so a post whose recording was lost
    is found again."""
    failed = [str(c) for c in loss.get("failed_checkpoints") or []]
    blocks: list[dict[str, Any]] = [
        {"type": "header", "text": plain("Records lost by an exactly-once Kafka sink", HEADER_MAX)},
        {"type": "context", "elements": [mrkdwn(
            f":rotating_light: transaction {code(loss.get('transactional_id'))} · job {code(loss.get('job_id'))} · "
            f"cluster {code(loss.get('cluster'))}", FIELD_MAX)]},
        section(escape(str(loss.get("headline") or ""))),
    ]
    if failed:
        blocks.append(section("*Failed checkpoints before it* " + escape(", ".join(failed[-20:]))))
    line = truncate(str(loss.get("line") or "").replace("`", "'"), LOSS_LINE_MAX)  # a backtick would end the quote
    if line:
        blocks.append(section("```" + escape(line) + "```"))
    advice = [str(step) for step in loss.get("advice") or []]
    if advice:
        blocks.append(section("*What to do*\n" + "\n".join(f"• {escape(step)}" for step in advice)))
    blocks.append({"type": "context", "elements": [mrkdwn(f"loss {code(loss.get('loss_id'))}", FIELD_MAX)]})
    fallback = truncate(escape(f"Records lost: {loss.get('headline') or ''}"), FALLBACK_MAX)
    metadata = {"event_type": LOSS_EVENT, "event_payload": {"loss_id": str(loss.get("loss_id"))}}
    return Message(fallback, blocks, metadata)
