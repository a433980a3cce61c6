"""``correlator alerts``: verdicts as Alertmanager alerts, read from the verdict topic (or a JSONL file)."""

from __future__ import annotations

import logging
from pathlib import Path

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
    from correlator.cli.feeds import feed_verdicts
    from correlator.stream.alert_forwarder import AlertForwarder, ForwarderConfig

    if not logging.getLogger().handlers:
        logs.configure(settings.log_level)
    if not settings.alertmanager_url:
        raise click.UsageError("an Alertmanager is required: --alertmanager-url or CORRELATOR_ALERTMANAGER_URL")
    forwarder = AlertForwarder(AlertmanagerClient(settings.alertmanager_url),
                               ForwarderConfig(hold_s=settings.alert_hold_min * 60.0,
                                               report_base_url=settings.report_base_url))
    try:
        stats = feed_verdicts(forwarder, settings, verdicts_file, group=settings.alerts_group, follow=not once)
    except AlertRejected as exc:
        raise RuntimeFailure(f"Alertmanager refused the alerts: {exc}") from None
    click.echo(f"alerts posted {stats.posted}, skipped {stats.skipped}, retries {stats.retries}", err=True)
