"""Kafka records: the broker's ``server.log`` and, inside a Flink TaskManager, the Kafka client's producer
configuration and the exactly-once sink's committer, to typed events.

The broker's layout is its own (``[<time>] <LEVEL> <message> (<logger>)``, the logger last), so its records are read
before the log4j header is split; the client's and the committer's are ordinary records routed here by logger. Each
wording is a row of ``BROKER_RULES`` or ``CLIENT_RULES`` (``wording.Wording``); the prefilter's Kafka triggers are
their phrases.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from correlator.core.events import (
    KAFKA_ROLE,
    CommitFailureKind,
    TransactionAborted,
    TransactionCommitFailed,
    TransactionSetting,
    sink_checkpoint,
    sink_prefix,
)
from correlator.core.ingest.parse.emit import Emit
from correlator.core.ingest.parse.wording import Dispatch, Handler, Wording

BROKER_RECORD = re.compile(
    r"^\[(?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d[,.]\d{3})\] (?P<level>TRACE|DEBUG|INFO|WARN|ERROR|FATAL) "
    r"(?P<msg>.*) \((?P<logger>(?:kafka|org\.apache\.kafka|state\.change\.logger)[\w.$]*)\)\s*$",
    re.DOTALL,
)
"""A broker record's first line, in the layout Kafka's own log4j configuration gives ``server.log``."""
CLIENT_LOGGERS = ("ProducerConfig", "AbstractConfig", "KafkaCommitter")
"""The logger segments read here: the Kafka client's producer configuration (kafka-clients 3.x logs it as
``ProducerConfig``, 4.x as ``AbstractConfig``), the Flink Kafka sink's committer."""
_ABORTED = re.compile(r"Completed rollback of ongoing transaction for transactionalId (\S+) due to timeout")
_CONFIG = re.compile(r"^\s*(transactional\.id|transaction\.timeout\.ms) = (\S*)\s*$", re.MULTILINE)
_QUOTED_ID = re.compile(r"transactionalId='?([^',})\s]+)")
_QUOTED_TIMEOUT = re.compile(r"'transaction\.timeout\.ms' \((\d+)ms\)")


def broker_record(first: str) -> re.Match[str] | None:
    return BROKER_RECORD.match(first)


def parse_broker(m: re.Match[str], emit: Emit) -> None:
    """A broker record (``m`` its first line's match) → the events its wording gives."""
    msg = m["msg"].strip()
    rule = BROKER_DISPATCH.first(msg)
    if rule is not None:
        rule.handler(msg, (m.group(0),), msg, emit.bind(role=KAFKA_ROLE))


def parse_client(message: str, lines: Sequence[str], emit: Emit) -> None:
    """A record of the Kafka client or the sink's committer inside a Flink process."""
    text = "\n".join(lines)
    rule = CLIENT_DISPATCH.first(message.strip(), text)
    if rule is not None:
        rule.handler(message.strip(), lines, text, emit)


def _aborted(msg: str, _lines: Sequence[str], _text: str, emit: Emit) -> None:
    m = _ABORTED.search(msg)
    if m:
        emit(TransactionAborted, transactional_id=m[1], line=msg)


def _producer_config(_msg: str, _lines: Sequence[str], text: str, emit: Emit) -> None:
    found = dict(_CONFIG.findall(text))
    tid, timeout = found.get("transactional.id", "null"), found.get("transaction.timeout.ms", "")
    if tid and tid != "null" and timeout.isdigit():
        emit(TransactionSetting, transactional_id=tid, timeout_ms=int(timeout), prefix=sink_prefix(tid))


def _commit_failed(kind: CommitFailureKind) -> Handler:
    """The committer's line for one kind of failure; the request it prints names the transaction in some versions
    only (others print ``CommitRequestImpl@<hash>``)."""

    def handler(msg: str, _lines: Sequence[str], _text: str, emit: Emit) -> None:
        tid = _QUOTED_ID.search(msg)
        timeout = _QUOTED_TIMEOUT.search(msg)
        emit(TransactionCommitFailed, kind=kind, transactional_id=tid[1] if tid else None,
             checkpoint_id=sink_checkpoint(tid[1]) if tid else None, timeout_ms=int(timeout[1]) if timeout else None,
             message=msg)

    return handler


BROKER_RULES: tuple[Wording[Handler], ...] = (
    Wording("Completed rollback of ongoing transaction for transactionalId ", _aborted, "message",
            emits=(TransactionAborted,)),
)
"""The broker's wordings read (its ``TransactionCoordinator``)."""
CLIENT_RULES: tuple[Wording[Handler], ...] = (
    Wording("ProducerConfig values:", _producer_config, emits=(TransactionSetting,)),
    Wording("because its producer is already fenced", _commit_failed("fenced"), "message",
            prefix="Unable to commit transaction (", emits=(TransactionCommitFailed,)),
)
"""The Kafka client's producer configuration and the Flink Kafka sink committer's failure, as the lab's runs logged
them (its other failures' wordings are not read until a real log shows them)."""
BROKER_DISPATCH = Dispatch(BROKER_RULES)
CLIENT_DISPATCH = Dispatch(CLIENT_RULES)
