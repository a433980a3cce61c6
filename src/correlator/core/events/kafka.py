"""Kafka: an exactly-once sink's transactions, from the producer, the committer and the broker."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar, Literal

from correlator.core.events.base import clip_text, Event


KAFKA_ROLE = "kafka"
"""A Kafka broker's own log (``server.log``): the side that aborts a transaction that outlived its timeout."""
CommitFailureKind = Literal["fenced"]
"""Why the Kafka sink's committer could not commit a transaction, as its words say it: its producer was fenced (the
broker aborted the transaction and bumped its epoch). The committer's other failures get kinds of their own once a
real log shows their wording."""


SINK_TRANSACTIONAL_ID = re.compile(r"^(?P<prefix>.+)-(?P<subtask>\d+)-(?P<checkpoint>\d+)$")
"""The Flink Kafka sink's transactional id: its prefix, the writer's subtask, the checkpoint it is committed with."""


def sink_checkpoint(transactional_id: str) -> int | None:
    """The checkpoint a Flink Kafka sink's transaction belongs to, where its id has the sink's shape."""
    m = SINK_TRANSACTIONAL_ID.match(transactional_id)
    return int(m["checkpoint"]) if m else None


def sink_prefix(transactional_id: str) -> str:
    """The sink's transactional id prefix (the whole id where it has another shape)."""
    m = SINK_TRANSACTIONAL_ID.match(transactional_id)
    return m["prefix"] if m else transactional_id


@dataclass(frozen=True, slots=True, kw_only=True)
class TransactionSetting(Event):
    """A transactional Kafka producer's configuration, as the Kafka client logs it when the producer is created (one
    per transaction of an exactly-once sink): how long the broker lets a transaction stay open."""

    type: ClassVar[str] = "kafka_transaction_setting"
    transactional_id: str
    timeout_ms: int
    prefix: str = ""
    """The sink's transactional id prefix (:func:`sink_prefix`): what its producers share."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TransactionAborted(Event):
    """The broker rolled back a transaction because it outlived its timeout: its records will never be read by a
    ``read_committed`` consumer, and the commit the sink attempts later fails. ``line`` is the broker's message."""

    type: ClassVar[str] = "kafka_transaction_aborted"
    transactional_id: str
    line: str

    def __post_init__(self) -> None:
        clip_text(self, "line")


@dataclass(frozen=True, slots=True, kw_only=True)
class TransactionCommitFailed(Event):
    """The Kafka sink's committer could not commit a transaction when its checkpoint completed. The transaction is
    named only where the committer's request prints it; ``timeout_ms`` where the line quotes the producer's."""

    type: ClassVar[str] = "kafka_commit_failed"
    kind: CommitFailureKind
    transactional_id: str | None = None
    checkpoint_id: int | None = None
    timeout_ms: int | None = None
    message: str = ""

    def __post_init__(self) -> None:
        clip_text(self, "message")
