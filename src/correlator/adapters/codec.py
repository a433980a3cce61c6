"""The wire format of events and parse errors: orjson bytes ↔ core dataclasses (events, parse errors and dead letters)."""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

import orjson

from correlator.core.event_dicts import event_from_dict, event_to_dict
from correlator.core.events import Event
from correlator.core.ingest.records import ParseError


def encode_event(event: Event, extra: Mapping[str, Any] | None = None) -> bytes:
    """The event JSON; ``extra`` adds transport fields that event readers ignore."""
    data = event_to_dict(event)
    if extra:
        data.update(extra)
    return orjson.dumps(data)


def decode_event_record(data: bytes | str) -> tuple[Event, dict[str, Any]]:
    """The event and the whole decoded object (for transport fields); ``ValueError`` on bad input."""
    value = orjson.loads(data)
    if not isinstance(value, dict):
        raise ValueError("event JSON is not an object")
    return event_from_dict(value), value


def decode_event(data: bytes | str) -> Event:
    """Inverse of :func:`encode_event`; raises ``ValueError`` (incl. ``UnknownEventType``) on bad input."""
    return decode_event_record(data)[0]


def parse_error_to_dict(error: ParseError) -> dict[str, Any]:
    return {"reason": error.reason, "detail": error.detail, "ref": error.ref, "excerpt": error.excerpt}


def encode_parse_error(error: ParseError) -> bytes:
    return orjson.dumps(parse_error_to_dict(error))


def decode_parse_error(data: bytes | str) -> ParseError:
    value = orjson.loads(data)
    if not isinstance(value, dict):
        raise ValueError("parse error JSON is not an object")
    return ParseError(
        reason=str(value["reason"]), detail=str(value["detail"]), ref=str(value["ref"]), excerpt=str(value["excerpt"])
    )


def deadletter_value(
    error: ParseError, *, topic: str, partition: int, offset: int, value: bytes | None, max_inline: int = 65536
) -> bytes:
    """The dead-letter record: reason plus coordinates and the original value (base64 when at hand
    and small, else the error's printable excerpt)."""
    record: dict[str, Any] = {
        "reason": error.reason,
        "detail": error.detail,
        "topic": topic,
        "partition": partition,
        "offset": offset,
    }
    if value is not None and len(value) <= max_inline:
        record["value_b64"] = base64.b64encode(value).decode("ascii")
    else:
        record["value_prefix"] = error.excerpt
    return orjson.dumps(record)
