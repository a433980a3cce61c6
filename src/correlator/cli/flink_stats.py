"""``correlator flink-stats --jobmanager URL``: the JobManager's REST checkpoint statistics as checkpoint spans, for
Flink versions and deployments whose logs carry none: printed once, or published to the events topic as they come."""

from __future__ import annotations

import sys
import threading

import click
import orjson

from correlator.cli import RuntimeFailure
from correlator.cli.options import KAFKA, Duration, follow_option, settings_options
from correlator.config import Settings


@click.command("flink-stats")
@click.option("--jobmanager", required=True, metavar="URL", help="the JobManager's REST address, e.g. http://jm:8081")
@follow_option(default=False, help="keep polling the JobManager and publish new checkpoints to the events topic, "
              "or print the checkpoints in its history now and stop")
@click.option("--interval", type=Duration("s", minimum=1.0), default=10.0,
              help="time between polls with --follow, at least 1s (a bare number: seconds)  [default: 10s]")
@settings_options(*KAFKA, "topic_events", "cluster")
def flink_stats(jobmanager: str, follow: bool, interval: float, settings: Settings) -> None:
    """Read the checkpoint statistics of every job of a JobManager (which tasks never acknowledged a failed
    checkpoint; the longest start delay, alignment, sync and async part of each) as checkpoint_span events, each
    task's and subtask's part and where each subtask runs as checkpoint_child_span and task_deployed events, and each
    running job's own checkpoint timeout (set in its code too) as a flink_setting event for the early warning.

    Exit 1 when the JobManager does not answer.
    """
    from correlator.adapters.flink_rest import CheckpointPoller, FlinkRest, FlinkRestError
    from correlator.core.event_dicts import event_to_dict

    poller = CheckpointPoller(FlinkRest(jobmanager), settings.cluster)
    if not follow:
        try:
            settings_read = poller.job_settings()
            spans, detail = poller.poll_with_subtasks()
        except FlinkRestError as exc:
            raise RuntimeFailure(f"cannot read checkpoint statistics: {exc}") from None
        for event in [*settings_read, *spans, *detail]:
            sys.stdout.buffer.write(orjson.dumps(event_to_dict(event)) + b"\n")
        poller.confirm(spans)
        for note in poller.notes:
            click.echo(f"correlator: flink-stats: {note}", err=True)
        click.echo(f"correlator: flink-stats: {len(spans)} checkpoint span(s) and the checkpoint timeout of "
                   f"{len(settings_read)} job(s) from {jobmanager}", err=True)
        return
    _follow(poller, interval, settings)


def _follow(poller: object, interval: float, settings: Settings) -> None:
    from confluent_kafka import Producer

    from correlator.adapters import codec
    from correlator.adapters.flink_rest import CheckpointPoller, FlinkRestError
    from correlator.cli.feeds import stop_on_signals

    assert isinstance(poller, CheckpointPoller)
    # the worker's partitioner: a cluster's events must all land on the partition its state lives on
    producer = Producer(settings.kafka_client(**{"enable.idempotence": True, "partitioner": "murmur2_random"}))
    stop = threading.Event()
    stop_on_signals(stop)
    while not stop.is_set():
        try:
            settings_read = poller.job_settings()
            spans, detail = poller.poll_with_subtasks()
            for event in [*settings_read, *spans, *detail]:
                producer.produce(settings.topic_events, key=settings.cluster.encode(),
                                 value=codec.encode_event(event, {}))
            for note in poller.notes:
                click.echo(f"correlator: flink-stats: {note}", err=True)
            poller.notes.clear()
            if producer.flush(30) == 0:
                poller.confirm(spans)
                poller.confirm_settings(settings_read)
            else:
                click.echo("correlator: flink-stats: the broker did not take every span; sending again", err=True)
        except FlinkRestError as exc:
            click.echo(f"correlator: flink-stats: {exc}; trying again in {interval:.0f} s", err=True)
        stop.wait(interval)
    producer.flush(30)
