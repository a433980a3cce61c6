"""``correlator replay``: produce log files into the raw topics as a shipper would, optionally at compressed speed."""

from __future__ import annotations

import click

from correlator.cli import RuntimeFailure
from correlator.cli.options import INTERPRETATION, KAFKA, settings_options
from correlator.config import Settings


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@click.option(
    "--speed",
    type=click.FloatRange(min=0),
    default=0.0,
    show_default=True,
    help="Replay log time this many times faster than it passed (0: as fast as possible).",
)
@click.option("--cluster-from-dir", is_flag=True,
              help="Each folder directly under a given directory holds one cluster's logs, named after the folder.")
@settings_options(*KAFKA, "topic_logs_flink", "topic_logs_hdfs", "topic_logs_s3",
                  *INTERPRETATION)  # the topics it writes, no more
def replay(paths: tuple[str, ...], speed: float, cluster_from_dir: bool, settings: Settings) -> None:
    """Produce log files into the Flink and HDFS topics, each file's lines in order on one partition.

    Lines of all files are merged by their timestamps so the topics look like a live cluster's. Files are shipped
    as they are on disk, decompressed: container framing and JSON layouts are read by the worker. Several clusters'
    files in one folder are told apart as 'correlator analyze' tells them, each line carrying its cluster.
    """
    from correlator.adapters.shipping import ShippingFailed, merged_lines, ship, topic_for
    from correlator.cli.preflight import require_topics
    from correlator.offline.files import discover
    from correlator.offline.summary import Summary

    skipped: list[tuple[str, str]] = []
    summary = Summary()
    files = discover(list(paths), skipped, summary, cluster_from_dir=cluster_from_dir, layout=settings.layout)
    for remark in summary.remarks:
        click.echo(f"replay: {remark}", err=True)
    for path, why in skipped:
        click.echo(f"replay: skipping {path}: {why}", err=True)
    if not files:
        raise click.UsageError("no log files found in the given paths")
    require_topics(settings, {topic_for(f, settings) for f in files})
    try:
        sent = ship(merged_lines(files, settings), settings, speed=speed)
    except ShippingFailed as exc:
        raise RuntimeFailure(str(exc)) from exc
    click.echo(f"replayed {sent} lines from {len(files)} files", err=True)
