"""``correlator bench stream`` (the worker against a bare consume loop and Faust baselines) and ``bench soak`` (its
memory under a steady stream for minutes), each on one broker."""

from __future__ import annotations

import click

from correlator.cli import RuntimeFailure
from correlator.cli.options import KAFKA, settings_options
from correlator.config import Settings


@click.command("stream", short_help="Worker records/s, CPU, RSS against bare consume loops.")
@click.option("--scale", type=click.IntRange(1), default=20, show_default=True,
              help="size multiplier of the generated 'recurring' scenario in the corpus")
@click.option("--datanodes", type=click.IntRange(1), default=8, show_default=True,
              help="busy DataNodes in the corpus (mostly routine block-write lines)")
@click.option("--lines-per-datanode", type=click.IntRange(1), default=75_000, show_default=True,
              help="log lines of each busy DataNode")
@click.option("--day", type=click.Choice(["good", "bad", "real"]), default="good", show_default=True,
              help="the busy DataNodes' day: routine writes, the incident corpus (slow writes, storms, bursts), or "
                   "the lab's real DataNode logs end to end (in a clone of the repository)")
@settings_options(*KAFKA, "topics_dir")
def stream_bench(scale: int, datanodes: int, lines_per_datanode: int, day: str, settings: Settings) -> None:
    """Records/s, CPU, RSS of bare consume loops, Faust baselines and the worker on a DataNode-heavy corpus."""
    from correlator.bench.stream import run_bench

    try:
        run_bench(settings, scale, settings.topics_dir, click.echo, datanodes=datanodes,
                  lines_per_datanode=lines_per_datanode, day=day)
    except RuntimeError as exc:
        raise RuntimeFailure(str(exc)) from exc


@click.command("soak", short_help="Is the worker's memory flat under a steady stream?")
@click.option("--minutes", type=click.FloatRange(min=0.1), default=10.0, show_default=True,
              help="how long to feed the worker")
@click.option("--rate", type=click.IntRange(1), default=20_000, show_default=True, help="raw records per second")
@settings_options(*KAFKA, "topics_dir")
def soak_bench(minutes: float, rate: int, settings: Settings) -> None:
    """The worker under a steady DataNode-heavy stream: is its memory flat (±10 %, under 300 MB) while it keeps up?

    Exit 1 when it is not."""
    from correlator.bench.soak import run_soak

    try:
        ok = run_soak(settings, settings.topics_dir, click.echo, minutes=minutes, rate=rate)
    except RuntimeError as exc:
        raise RuntimeFailure(str(exc)) from exc
    if not ok:
        raise RuntimeFailure("soak goal missed (see above)")
