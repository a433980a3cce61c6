"""``correlator alerts``: verdicts as Alertmanager alerts, read from the verdict topic (or a JSONL file)."""

from __future__ import annotations

import logging
import signal
import threading
from pathlib import Path
from typing import Any

import click

from correlator.cli import RuntimeFailure
from correlator.cli.options import KAFKA, settings_options
from correlator.config import Settings

SETTINGS = (*KAFKA, "topic_verdicts", "alertmanager_url", "alerts_group", "alert_hold_min", "report_base_url",
            "log_level")


@click.command("alerts")
@settings_options(*SETTINGS)
@click.option("--verdicts-file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="read verdicts from this JSONL file instead of the topic")
@click.option("--once/--follow", default=False, show_default=True,
              help="stop at the end of the topic (tests, catch-up runs) or keep following it; a file is read to its end")
def alerts(settings: Settings, verdicts_file: Path | None, once: bool) -> None:
    """Post each verdict to Alertmanager as an alert (labels: cluster, job_id, code, verdict_id), where on-call's
    routes take it to PagerDuty, Opsgenie, e-mail or a webhook."""
    from correlator.adapters import logs
    from correlator.adapters.alertmanager import AlertmanagerClient, AlertRejected
    from correlator.cli.slack import stop_on_signals
    from correlator.stream.alert_forwarder import AlertForwarder, ForwarderConfig
    from correlator.stream.slack_feed import run_file, run_kafka

    if not logging.getLogger().handlers:
        logs.configure(settings.log_level)
    if not settings.alertmanager_url:
        raise click.UsageError("an Alertmanager is required: --alertmanager-url or CORRELATOR_ALERTMANAGER_URL")
    forwarder = AlertForwarder(AlertmanagerClient(settings.alertmanager_url),
                               ForwarderConfig(hold_s=settings.alert_hold_min * 60.0,
                                               report_base_url=settings.report_base_url))
    stop = threading.Event()
    previous = stop_on_signals(stop)
    try:
        if verdicts_file is not None:
            stats = run_file(forwarder, verdicts_file, stop)
        else:
            consumer: dict[str, Any] = settings.kafka_client(**{"group.id": settings.alerts_group})
            stats = run_kafka(forwarder, consumer, settings.topic_verdicts, follow=not once, stop=stop)
    except AlertRejected as exc:
        raise RuntimeFailure(f"Alertmanager refused the alerts: {exc}") from None
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    click.echo(f"alerts posted {stats.posted}, skipped {stats.skipped}, retries {stats.retries}", err=True)
