"""``correlator alerts``: verdicts to where on-call lives — Alertmanager, a signed webhook, PagerDuty, Opsgenie — read
from the verdict topic (or a JSONL file)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import click

from correlator.cli import RuntimeFailure
from correlator.cli.options import KAFKA, follow_option, settings_options
from correlator.config import Settings

SETTINGS = (*KAFKA, "topic_verdicts", "topic_risks", "redis_url", "alertmanager_url", "alerts_group", "alert_hold_min",
            "alert_resolve_after_min", "alerts_namespace", "alert_codes", "alert_severity", "alert_max_age_min",
            "webhook_url", "pagerduty_url", "opsgenie_url",
            "report_base_url", "log_level", "web_host", "metrics_port")
"""Keys and secrets (CORRELATOR_WEBHOOK_SECRET, CORRELATOR_PAGERDUTY_ROUTING_KEY, CORRELATOR_OPSGENIE_API_KEY) are read
from the environment only: an option would show them in the process list."""


@click.command("alerts")
@settings_options(*SETTINGS)
@click.option("--verdicts-file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="read verdicts from this JSONL file, to its end, instead of the topic")
@follow_option(default=True)
def alerts(settings: Settings, verdicts_file: Path | None, follow: bool) -> None:
    """Send verdicts where on-call lives. Each configured target is optional: Alertmanager gets one alert per
    verdict (labels: cluster, job_id, code, hosts, verdict_id); the webhook, PagerDuty and Opsgenie get one alert
    per incident (a job failing for one cause) and one resolve once it stays quiet for --alert-resolve-after-min, as
    does Alertmanager. Incidents are kept in Redis, so a restart neither pages twice nor forgets to resolve.
    Records an exactly-once Kafka sink lost (the risk topic's loss records) become Alertmanager alerts
    CorrelatorRecordsLost of severity critical; early warnings alert no one.

    Keys come from the environment only: CORRELATOR_WEBHOOK_SECRET (HMAC-SHA256 signature),
    CORRELATOR_PAGERDUTY_ROUTING_KEY, CORRELATOR_OPSGENIE_API_KEY."""
    from correlator.adapters import logs
    from correlator.cli.feeds import feed_verdicts
    from correlator.notify.alert_forwarder import AlertForwarder

    if not logging.getLogger().handlers:
        logs.configure(settings.log_level)
    sink = build_sinks(settings)
    try:
        stats = feed_verdicts(sink, settings, verdicts_file, group=settings.alerts_group, follow=follow,
                              risks=True, feed="alerts")
    finally:
        for lane in getattr(sink.parts[-1], "lanes", ()):
            lane.store.close()
    retries = sum(part.stats.retries for part in sink.parts)
    click.echo(f"alerts: verdicts read {stats.posted + stats.duplicates + stats.skipped + stats.suppressed}: sent "
               f"{stats.posted}, already sent {stats.duplicates}, not verdicts {stats.skipped}, held back by the "
               f"alert policy {stats.suppressed}; retries {retries}", err=True)
    for part in sink.parts:
        if isinstance(part, AlertForwarder):
            click.echo(f"alerts: alertmanager: {part.stats.posted} alert(s) posted", err=True)
        for kind, n in sorted(getattr(part, "sent", {}).items()):
            click.echo(f"alerts: {kind}: {n} request(s)", err=True)


def build_sinks(settings: Settings) -> Any:
    """The configured targets, each behind its own incident record; a usage error when none is."""
    from correlator.adapters.alertmanager import AlertmanagerClient
    from correlator.adapters.pagers import AlertmanagerTarget, OpsgenieTarget, PagerDutyTarget, Target, WebhookTarget
    from correlator.adapters.redis_incidents import RedisIncidentStore, StoreUnavailable
    from correlator.notify.alert_forwarder import AlertForwarder, ForwarderConfig
    from correlator.notify.pager import Lane, Pager, PagerConfig, Sinks

    from correlator.core.alert_policy import AlertPolicy, PolicyError

    try:
        policy = AlertPolicy.parse(settings.alert_codes, settings.alert_severity, settings.alert_max_age_min)
    except PolicyError as exc:
        raise click.UsageError(str(exc)) from None
    targets: list[Target] = []
    parts: list[Any] = []
    if settings.alertmanager_url:
        client = AlertmanagerClient(settings.alertmanager_url)
        parts.append(AlertForwarder(client, ForwarderConfig(hold_s=settings.alert_hold_min * 60.0,
                                                            report_base_url=settings.report_base_url, policy=policy)))
        targets.append(AlertmanagerTarget(client))
    if settings.webhook_url:
        secret = settings.webhook_secret.get_secret_value() if settings.webhook_secret else None
        targets.append(WebhookTarget(settings.webhook_url, secret))
    if settings.pagerduty_routing_key is not None:
        targets.append(PagerDutyTarget(settings.pagerduty_url, settings.pagerduty_routing_key.get_secret_value()))
    if settings.opsgenie_api_key is not None:
        targets.append(OpsgenieTarget(settings.opsgenie_url, settings.opsgenie_api_key.get_secret_value()))
    if not targets:
        raise click.UsageError("no alert target: set --alertmanager-url, --webhook-url, CORRELATOR_PAGERDUTY_ROUTING_KEY "
                               "or CORRELATOR_OPSGENIE_API_KEY")
    lanes = [Lane(t, RedisIncidentStore(settings.redis_url.get_secret_value(), f"{settings.alerts_namespace}:{t.name}"))
             for t in targets]
    try:
        lanes[0].store.ping()
    except StoreUnavailable as exc:
        if parts and not any(t.needs_store for t in targets):
            click.echo(f"alerts: no incident store ({exc}): Alertmanager gets one alert per verdict, which it groups "
                       "and resolves itself; an alert per incident needs Redis (CORRELATOR_REDIS_URL)", err=True)
            return Sinks(parts, policy=policy)
        raise RuntimeFailure(f"the incident store is unreachable (CORRELATOR_REDIS_URL): {exc}; the webhook, "
                             "PagerDuty and Opsgenie targets keep each incident there") from None
    quiet_s = settings.alert_resolve_after_min * 60.0
    parts.append(Pager(lanes, PagerConfig(quiet_ms=int(quiet_s * 1000), sweep_every_s=min(60.0, quiet_s / 4),
                                          report_base_url=settings.report_base_url, policy=policy)))
    return Sinks(parts, policy=policy)
