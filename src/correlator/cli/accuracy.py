"""``correlator accuracy``: how often each root-cause code was right, from the verdicts and the feedback given on them
in Slack (each read to its end, from its topic or a JSONL file)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import click

from correlator.cli import RuntimeFailure
from correlator.cli.options import KAFKA, format_option, settings_options
from correlator.config import Settings
from correlator.core.feedback import CodeAccuracy, feedback_from_dict, total, verdict_ref
from correlator.core.feedback import accuracy as count

T = TypeVar("T")
READ_TIMEOUT_S = 30.0
"""Longest wait for the next record while a topic is read to its end (the end was measured when reading began)."""
COLUMNS = ("verdicts", "confirmed", "wrong cause", "not a problem", "unanswered")


@click.command("accuracy")
@settings_options(*KAFKA, "topic_verdicts", "topic_feedback")
@click.option("--verdicts-file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="read verdicts from this JSONL file instead of the topic")
@click.option("--feedback-file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="read feedback records from this JSONL file instead of the topic")
@format_option("text", "text: a table for people; json: one JSON object for programs")
def accuracy(settings: Settings, verdicts_file: Path | None, feedback_file: Path | None, fmt: str) -> None:
    """Per root-cause code: how many verdicts, how many people confirmed (right cause), refuted (wrong cause, not a
    problem) or left unanswered, and the ids of the refuted ones. A verdict counts under its latest answer."""
    verdicts = _records(settings, settings.topic_verdicts, verdicts_file)
    claims, skipped_verdicts = _parsed(verdicts, verdict_ref)
    answers, skipped_feedback = _parsed(_records(settings, settings.topic_feedback, feedback_file), feedback_from_dict)
    rows = count(claims, answers)
    if skipped_verdicts or skipped_feedback:
        click.echo(f"accuracy: skipped {skipped_verdicts} record(s) that are no verdicts and {skipped_feedback} that "
                   "are no feedback", err=True)
    if fmt == "json":
        click.echo(json.dumps({"codes": [_row(r) for r in rows], "total": _row(total(rows))}, indent=2))
        return
    click.echo(_table(rows, total(rows)))


def _parsed(records: Iterable[dict[str, Any] | None], parse: Callable[[dict[str, Any]], T]) -> tuple[list[T], int]:
    """The records ``parse`` reads, and how many it could not (or were no JSON object)."""
    out: list[T] = []
    skipped = 0
    for record in records:
        try:
            if record is None:
                raise ValueError("not a JSON object")
            out.append(parse(record))
        except (ValueError, TypeError, AttributeError):
            skipped += 1
    return out, skipped


def _row(row: CodeAccuracy) -> dict[str, Any]:
    return {"code": row.code, "verdicts": row.verdicts, "confirmed": row.confirmed, "wrong_cause": row.wrong_cause,
            "not_a_problem": row.not_a_problem, "unanswered": row.unanswered, "refuted_ids": list(row.refuted_ids)}


def _table(rows: tuple[CodeAccuracy, ...], all_rows: CodeAccuracy) -> str:
    width = max([len("code"), *(len(r.code) for r in rows)])
    head = "code".ljust(width) + "".join(f"  {c}" for c in COLUMNS)
    lines = [head]
    for row in [*rows, all_rows]:
        counts = (row.verdicts, row.confirmed, row.wrong_cause, row.not_a_problem, row.unanswered)
        lines.append(row.code.ljust(width) + "".join(f"  {n:>{len(c)}}" for n, c in zip(counts, COLUMNS, strict=True)))
    refuted = [(row.code, i, "wrong cause") for row in rows for i in row.wrong_cause_ids]
    refuted += [(row.code, i, "not a problem") for row in rows for i in row.not_a_problem_ids]
    if refuted:
        lines += ["", "refuted:"] + [f"  {c}  {i}  ({why})" for c, i, why in sorted(refuted)]
    return "\n".join(lines)


def _records(settings: Settings, topic: str, path: Path | None) -> Iterator[dict[str, Any] | None]:
    from correlator.notify.slack_feed import decode_verdict, read_verdict_lines

    if path is not None:
        yield from read_verdict_lines(path)
        return
    for value in _read_to_end(settings, topic):
        yield decode_verdict(value)


def _read_to_end(settings: Settings, topic: str) -> Iterator[bytes | None]:
    """Every record value of ``topic`` from its first retained one to its end as of now, in a throwaway group that
    commits nothing."""
    import time

    from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition

    consumer = Consumer(settings.kafka_client(**{
        "group.id": f"correlator-accuracy-{uuid.uuid4().hex[:8]}",
        "enable.auto.commit": False,
        "enable.partition.eof": True,
        "isolation.level": "read_committed",
        "log_level": 0,  # connection trouble is reported once, below, not per retry
    }))
    try:
        try:
            metadata = consumer.list_topics(topic, timeout=10)
        except KafkaException as exc:
            wanted = "--feedback-file" if topic == settings.topic_feedback else "--verdicts-file"
            raise RuntimeFailure(f"cannot reach Kafka at {settings.bootstrap_servers} to read {topic}: "
                                 f"{exc.args[0].str()} (without Kafka, give {wanted})") from None
        found = metadata.topics.get(topic)
        if found is None or found.error is not None:
            raise RuntimeFailure(f"no topic {topic} (correlator topics apply creates it)")
        pending: dict[int, int] = {}
        for partition in found.partitions:
            low, high = consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=10)
            if high > low:
                pending[partition] = low
        consumer.assign([TopicPartition(topic, p, low) for p, low in pending.items()])
        last = time.monotonic()
        while pending:
            message = consumer.poll(0.5)
            if message is None:
                if time.monotonic() - last > READ_TIMEOUT_S:
                    raise RuntimeFailure(f"reading {topic}: no record for {READ_TIMEOUT_S:g} s before its end")
                continue
            last = time.monotonic()
            error = message.error()
            if error is not None:
                if error.code() == KafkaError._PARTITION_EOF:
                    pending.pop(message.partition() or 0, None)
                elif error.fatal():
                    raise RuntimeFailure(f"reading {topic}: {error.str()}")
                continue
            yield message.value()
    finally:
        consumer.close()
