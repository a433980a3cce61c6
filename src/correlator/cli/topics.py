"""``correlator topics apply``: create or align the topics described in ``topics/``."""

from __future__ import annotations

import click

from correlator.cli import RuntimeFailure
from correlator.cli.options import KAFKA, TOPICS, settings_options
from correlator.config import Settings


@click.group()
def topics() -> None:
    """Manage the Kafka topics correlator reads and writes."""


@topics.command("apply", short_help="Create missing topics, align partitions and configs.")
@click.option("--dry-run", is_flag=True, help="Print the plan, change nothing.")
@settings_options(*KAFKA, "topics_dir", *TOPICS)
def apply_command(dry_run: bool, settings: Settings) -> None:
    """Create missing topics and align partitions and configs; a second run reports no change."""
    from correlator.adapters import topics as topic_admin

    errors: list[str] = []
    try:
        specs = topic_admin.load_specs(settings.topics_dir, settings)
    except topic_admin.TopicDefinitionError as exc:
        raise click.UsageError(str(exc)) from exc
    admin = topic_admin.admin_client(settings, errors)
    try:
        changes = topic_admin.plan(admin, specs)
    except Exception as exc:  # the admin client reports an unreachable cluster as a generic KafkaException
        admin.poll(0.5)  # serves the error callbacks, which name the real cause (refused, authentication failed)
        reason = errors[0] if errors else str(exc)
        if dry_run:  # what would be asked for is worth seeing before there is a cluster to compare with
            for spec in specs:
                configs = ", ".join(f"{k}={v}" for k, v in sorted(spec.configs.items()))
                click.echo(f"define {spec.name}: {spec.partitions} partitions, replication {spec.replication_factor}"
                           + (f", {configs}" if configs else ""))
            reason += "; the definitions above were not compared with the cluster"
        raise RuntimeFailure(f"cannot read topics from {settings.bootstrap_servers}: {reason}") from exc
    if not changes:
        click.echo(f"no change: {len(specs)} topics match their definitions")
        return
    for change in changes:
        click.echo(("plan  " if dry_run else "apply ") + str(change))
    if dry_run:
        return
    try:
        topic_admin.apply(admin, specs, changes)
    except RuntimeError as exc:
        raise RuntimeFailure(str(exc)) from exc
    click.echo(f"applied {sum(c.applicable for c in changes)} change(s)")
