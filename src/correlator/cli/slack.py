"""``correlator slack``: the Slack bot, reading the verdict topic (or a JSONL file) and threading incidents; with an
app-level token, also the feedback buttons' listener (Socket Mode)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import click

from correlator.cli import RuntimeFailure
from correlator.cli.options import KAFKA, follow_option, settings_options
from correlator.config import Settings

SETTINGS = (
    *KAFKA,
    "topic_verdicts",
    "topic_risks",
    "redis_url",
    "slack_api_url",
    "slack_token",
    "slack_token_file",
    "slack_channel",
    "slack_group",
    "slack_namespace",
    "slack_resolve_after_min",
    "slack_retry_backoff_s",
    "slack_timelines",
    "report_base_url",
    "slack_app_token",
    "topic_feedback",
    "tz",
    "log_level",
    "web_host",
    "metrics_port",
)


@click.command("slack")
@settings_options(*SETTINGS)
@click.option("--verdicts-file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="read verdicts from this JSONL file, to its end, instead of the topic")
@follow_option(default=True)
def slack(
    settings: Settings,
    verdicts_file: Path | None,
    follow: bool,
) -> None:
    """Post verdicts to Slack: one message per incident, recurrences as replies in its thread; early warnings as a
    quieter message per warning, its later states as replies. With an app-level token, each verdict's message gets
    feedback buttons, whose clicks are recorded in Redis and on the feedback topic."""
    from correlator.adapters.redis_incidents import RedisIncidentStore
    from correlator.adapters.slack import RetryPolicy, SlackPoster, SlackRejected
    from correlator.cli.feeds import feed_verdicts
    from correlator.notify.slackbot import BotConfig, SlackBot

    from correlator.adapters import logs

    if not logging.getLogger().handlers:
        logs.configure(settings.log_level)
    if not settings.slack_channel:
        raise click.UsageError("a channel is required: --slack-channel or CORRELATOR_SLACK_CHANNEL")
    try:
        token = settings.slack_token_value()
    except OSError as exc:
        raise RuntimeFailure(f"cannot read the Slack token file: {exc.strerror}") from None
    if not token:
        raise click.UsageError("a token is required: CORRELATOR_SLACK_TOKEN or --slack-token-file")

    store = RedisIncidentStore(settings.redis_url.get_secret_value(), settings.slack_namespace)
    poster = SlackPoster(settings.slack_api_url, token, settings.slack_channel,
                         RetryPolicy(backoff_factor_s=settings.slack_retry_backoff_s))
    config = BotConfig(
        quiet_ms=round(settings.slack_resolve_after_min * 60_000), backoff_initial_s=settings.slack_retry_backoff_s,
        feedback_buttons=settings.slack_app_token is not None,
    )
    bot = SlackBot(store, poster, config, timelines=_timelines(settings, poster))
    feedback = None
    try:
        feedback = _feedback(settings, store, poster)
        stats = feed_verdicts(bot, settings, verdicts_file, group=settings.slack_group, follow=follow, risks=True,
                               feed="slack")
    except SlackRejected as exc:
        raise RuntimeFailure(str(exc)) from None
    finally:
        if feedback is not None:
            feedback.close()
        store.close()
    click.echo(f"posted {stats.posted}, duplicates {stats.duplicates}, skipped {stats.skipped}", err=True)


def _timelines(settings: Settings, poster: Any) -> Any:
    """The timeline uploader, sharing the bot's Redis namespace and Slack client (None when switched off)."""
    if not settings.slack_timelines:
        return None
    from correlator.adapters.slack_files import FileLedger, TimelineFiles
    from correlator.notify.sink import default_owner

    ledger = FileLedger(settings.redis_url.get_secret_value(), settings.slack_namespace)
    return TimelineFiles(ledger, poster, owner=default_owner(), zone=settings.tz,
                         report_base_url=settings.report_base_url)


def _feedback(settings: Settings, store: Any, poster: Any) -> Any:
    """The feedback buttons' listener, connected, sharing the bot's Redis and Slack client (None without an app-level
    token). A refused app token raises ``SlackRejected``, like a refused bot token."""
    if settings.slack_app_token is None:
        return None
    from correlator.adapters.slack import SlackSocket
    from correlator.notify.slack_feedback import FeedbackConfig, FeedbackListener, FeedbackTopic

    topic = FeedbackTopic(settings.kafka_client(), settings.topic_feedback)
    listener = FeedbackListener(store, poster, topic, FeedbackConfig(backoff_initial_s=settings.slack_retry_backoff_s))
    socket = SlackSocket(settings.slack_api_url, settings.slack_app_token.get_secret_value(), listener.on_envelope)
    try:
        listener.start(socket)
    except BaseException:
        listener.close()
        raise
    return listener
