"""Record values on the worker's own topics: events (with their ingest position), verdicts, risks and dead letters."""

from __future__ import annotations

from dataclasses import dataclass

import orjson

from correlator.adapters import codec
from correlator.core.events import Event
from correlator.core.explain.risk import Risk, risk_to_dict
from correlator.core.explain.transactions import TransactionLoss, loss_to_dict
from correlator.core.explain.verdict import Verdict, verdict_to_dict
from correlator.core.ingest.records import ParseError


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
    generation: int = 0
    """How often the raw topic was found recreated under its name: a new topic's offsets start again at 0, and
    must not be taken for positions of the deleted one that were applied already."""

    @property
    def stream(self) -> str:
        base = f"{self.topic}/{self.partition}"
        return base if not self.generation else f"{base}#{self.generation}"


def encode_event(event: Event, position: Position) -> bytes:
    """The event JSON plus ``_pos``, which consumers other than the worker may ignore."""
    pos: list[object] = [position.topic, position.partition, position.offset, position.seq]
    return codec.encode_event(event, {"_pos": pos + [position.generation] if position.generation else pos})


def decode_event(value: bytes) -> tuple[Event, Position | None]:
    event, record = codec.decode_event_record(value)
    pos = record.get("_pos")
    position = Position(str(pos[0]), int(pos[1]), int(pos[2]), int(pos[3]), int(pos[4]) if len(pos) > 4 else 0) \
        if pos else None
    return event, position


def encode_verdict(verdict: Verdict) -> bytes:
    return orjson.dumps(verdict_to_dict(verdict))


def verdict_key(verdict: Verdict) -> bytes:
    return f"{verdict.cluster}/{verdict.job_id or '-'}".encode()


def encode_risk(risk: Risk) -> bytes:
    return orjson.dumps(risk_to_dict(risk))


def risk_key(risk: Risk) -> bytes:
    """The verdicts' key: a job's warnings and its verdicts land on the same partition number."""
    return f"{risk.cluster}/{risk.job_id}".encode()


def encode_loss(loss: TransactionLoss) -> bytes:
    return orjson.dumps(loss_to_dict(loss))


def loss_key(loss: TransactionLoss) -> bytes:
    """The job's key, as its warnings and verdicts have it."""
    return f"{loss.cluster}/{loss.job_id or '-'}".encode()


def coordinates(ref: str) -> tuple[str, int, int] | None:
    """``topic/partition@offset`` back to its parts; ``None`` for a file reference."""
    topic_partition, at, offset = ref.rpartition("@")
    topic, slash, partition = topic_partition.rpartition("/")
    if not (at and slash and partition.isdigit() and offset.isdigit()):
        return None
    return topic, int(partition), int(offset)


def encode_dead_letter(error: ParseError, position: Position, value: bytes | None) -> bytes:
    """Coordinates of the record the error is about (its first line), not of the record that closed it."""
    topic, partition, offset = coordinates(error.ref) or (position.topic, position.partition, position.offset)
    return codec.deadletter_value(error, topic=topic, partition=partition, offset=offset, value=value)
