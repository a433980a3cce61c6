"""``correlator verdicts``: read the verdict topic, for people (default) or programs (``--format json``)."""

from __future__ import annotations

import uuid

import click

from correlator.cli import RuntimeFailure
from correlator.cli.options import (
    KAFKA,
    Duration,
    follow_option,
    format_option,
    old_spelling,
    settings_options,
    text_width,
)
from correlator.config import Settings


@click.command()
@follow_option(default=False)
@click.option("--from-beginning", is_flag=True, help="start at the oldest retained verdict, not at new ones")
@format_option("text", "text: a summary per verdict for people; json: one verdict object per line")
@click.option("--idle-timeout", type=Duration("s"), default=5.0,
              help="with --once, caught up after this long without a new verdict (a bare number: seconds)  "
              "[default: 5s]")
@click.option("--max", "max_count", type=int, default=0, help="stop after this many verdicts (0: no limit)")
@settings_options(*KAFKA, "topic_verdicts")
@old_spelling("--json", "--format json", fmt="json")
@old_spelling("-f", "--follow", follow=True)
def verdicts(follow: bool, from_beginning: bool, fmt: str, idle_timeout: float, max_count: int,
             settings: Settings) -> None:
    """Print verdicts from the verdict topic as they arrive."""
    import time

    import orjson
    from confluent_kafka import Consumer, KafkaException

    from correlator.core.explain.verdict import verdict_from_dict
    from correlator.core.explain.verdict_text import verdict_text

    consumer = Consumer(
        settings.kafka_client(
            **{
                "group.id": f"correlator-verdicts-{uuid.uuid4().hex[:8]}",
                "auto.offset.reset": "earliest" if from_beginning else "latest",
                "enable.auto.commit": False,
                "log_level": 0,  # connection trouble is reported once, below, not per retry
            }
        )
    )
    try:
        consumer.list_topics(settings.topic_verdicts, timeout=10)
    except KafkaException as exc:
        consumer.close()
        raise RuntimeFailure(f"cannot reach Kafka at {settings.bootstrap_servers}: {exc.args[0].str()}") from exc
    consumer.subscribe([settings.topic_verdicts])
    shown = 0
    last = time.monotonic()
    try:
        while follow or time.monotonic() - last < idle_timeout:
            msg = consumer.poll(0.5)
            if msg is None:
                continue
            error = msg.error()
            if error is not None:
                if error.fatal():
                    raise RuntimeFailure(f"reading {settings.topic_verdicts}: {error.str()}")
                continue
            last = time.monotonic()
            value = msg.value() or b""
            try:
                data = orjson.loads(value)  # also proves the bytes are UTF-8
                text = value.decode() if fmt == "json" else verdict_text(verdict_from_dict(data), text_width())
            except (ValueError, KeyError, TypeError) as exc:
                click.echo(f"(skipped a record that is not a verdict at offset {msg.offset()}: {exc})", err=True)
                continue
            click.echo(text)
            shown += 1
            if max_count and shown >= max_count:
                break
    except KafkaException as exc:
        raise RuntimeFailure(f"reading {settings.topic_verdicts}: {exc}") from exc
    finally:
        consumer.close()
