"""``correlator worker``: the always-on streaming service."""

from __future__ import annotations

import click

from correlator.cli import RuntimeFailure
from correlator.cli.options import EVENT_TIME, INTERPRETATION, KAFKA, TOPICS, settings_options
from correlator.config import Settings


@click.command()
@settings_options(*KAFKA, *TOPICS, *INTERPRETATION, *EVENT_TIME, "worker_id", "web_host", "web_port", "data_dir",
                  "state_replication", "log_level")
def worker(settings: Settings) -> None:
    """Run the Faust worker: raw log topics in, events and verdicts out. SIGTERM drains and commits."""
    import faust
    from confluent_kafka import KafkaException

    from correlator.adapters import logs
    from correlator.stream.app import TopicsMissing, create_app

    logs.configure(settings.log_level)
    try:
        app = create_app(settings)
    except TopicsMissing as exc:
        raise RuntimeFailure(str(exc)) from exc
    except KafkaException as exc:
        raise RuntimeFailure(f"cannot reach Kafka at {settings.bootstrap_servers}: {exc.args[0].str()}") from exc
    faust.Worker(
        app,
        loglevel=settings.log_level,
        logging_config=logs.logging_config(settings.log_level),
        quiet=True,
        override_logging=False,
    ).execute_from_commandline()
