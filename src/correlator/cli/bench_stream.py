"""``correlator bench stream``: the worker against a bare consume loop and a naive Faust agent, on one broker."""

from __future__ import annotations

import click

from correlator.cli import RuntimeFailure
from correlator.cli.options import KAFKA, settings_options
from correlator.config import Settings


@click.command("stream")
@click.option("--scale", type=click.IntRange(1), default=20, show_default=True,
              help="size multiplier of the generated 'recurring' scenario in the corpus")
@click.option("--datanodes", type=click.IntRange(1), default=8, show_default=True,
              help="busy DataNodes in the corpus (mostly routine block-write lines)")
@click.option("--lines-per-datanode", type=click.IntRange(1), default=75_000, show_default=True,
              help="log lines of each busy DataNode")
@settings_options(*KAFKA, "topics_dir")
def stream_bench(scale: int, datanodes: int, lines_per_datanode: int, settings: Settings) -> None:
    """Records/s, CPU, RSS of bare consume loops, Faust baselines and the worker on a DataNode-heavy corpus."""
    from correlator.bench.stream import run_bench

    try:
        run_bench(settings, scale, settings.topics_dir, click.echo, datanodes=datanodes,
                  lines_per_datanode=lines_per_datanode)
    except RuntimeError as exc:
        raise RuntimeFailure(str(exc)) from exc
