"""Record values on the worker's own topics: events (with their ingest position), verdicts and dead letters."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

import orjson

from correlator.core.events import Event, event_from_dict, event_to_dict
from correlator.core.records import ParseError
from correlator.core.verdict import Verdict, verdict_to_dict

DEADLETTER_VALUE_LIMIT = 64 * 1024


@dataclass(frozen=True, slots=True, order=True)
class Position:
    """Where the ingest stage emitted an event: raw topic-partition, the raw offset being processed, and a sequence.

    Emission is deterministic from a persisted ingest snapshot, so a redelivered event has the same position as the
    first delivery, and the correlate stage skips positions it has already applied.
    """

    topic: str
    partition: int
    offset: int
    seq: int

    @property
    def stream(self) -> str:
        return f"{self.topic}/{self.partition}"


def encode_event(event: Event, position: Position) -> bytes:
    data = event_to_dict(event)
    data["_pos"] = [position.topic, position.partition, position.offset, position.seq]
    return orjson.dumps(data)


def decode_event(value: bytes) -> tuple[Event, Position | None]:
    data = orjson.loads(value)
    pos = data.pop("_pos", None)
    position = Position(str(pos[0]), int(pos[1]), int(pos[2]), int(pos[3])) if pos else None
    return event_from_dict(data), position


def encode_verdict(verdict: Verdict) -> bytes:
    return orjson.dumps(verdict_to_dict(verdict))


def verdict_key(verdict: Verdict) -> bytes:
    return f"{verdict.cluster}/{verdict.job_id or '-'}".encode()


def encode_dead_letter(
    error: ParseError, *, topic: str, partition: int, offset: int, value: bytes | None
) -> bytes:
    """The reason, the original coordinates and the original bytes (base64) when they are at hand and small."""
    record: dict[str, Any] = {
        "reason": error.reason,
        "detail": error.detail,
        "ref": error.ref,
        "topic": topic,
        "partition": partition,
        "offset": offset,
    }
    if value is not None and len(value) <= DEADLETTER_VALUE_LIMIT:
        record["value_b64"] = base64.b64encode(value).decode("ascii")
    else:
        record["value_prefix"] = error.excerpt
    return orjson.dumps(record)
