"""``correlator verdicts``: read the verdict topic, for people (default) or programs (``--json``)."""

from __future__ import annotations

import uuid

import click

from correlator.cli import RuntimeFailure
from correlator.cli.options import KAFKA, settings_options, text_width
from correlator.config import Settings


@click.command()
@click.option("--follow", "-f", is_flag=True, help="Keep waiting for new verdicts.")
@click.option("--from-beginning", is_flag=True, help="Start at the oldest retained verdict, not at new ones.")
@click.option("--json", "as_json", is_flag=True, help="Print the verdict JSON objects, one per line.")
@click.option("--idle-timeout", type=float, default=5.0, show_default=True,
              help="Without --follow, stop after this many seconds without a new verdict.")
@click.option("--max", "max_count", type=int, default=0, help="Stop after this many verdicts (0: no limit).")
@settings_options(*KAFKA, "topic_verdicts")
def verdicts(follow: bool, from_beginning: bool, as_json: bool, idle_timeout: float, max_count: int,
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
            if msg.error():
                if msg.error().fatal():
                    raise RuntimeFailure(f"reading {settings.topic_verdicts}: {msg.error().str()}")
                continue
            last = time.monotonic()
            try:
                data = orjson.loads(msg.value())  # also proves the bytes are UTF-8
                text = msg.value().decode() if as_json else verdict_text(verdict_from_dict(data), text_width())
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
