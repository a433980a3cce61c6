"""``correlator bench stream``: the worker against a bare consume loop and a naive Faust agent, on one broker."""

from __future__ import annotations

import click

from correlator.cli import RuntimeFailure
from correlator.cli.options import KAFKA, settings_options
from correlator.config import Settings


@click.command("stream")
@click.option("--scale", type=click.IntRange(1), default=200, show_default=True,
              help="size multiplier of the generated 'recurring' scenario corpus")
@settings_options(*KAFKA, "topics_dir")
def stream_bench(scale: int, settings: Settings) -> None:
    """Records/s of a bare consume loop, a naive per-record Faust agent and the worker; verdict latency p50/p99."""
    from correlator.bench.stream import run_bench

    try:
        run_bench(settings, scale, settings.topics_dir, click.echo)
    except RuntimeError as exc:
        raise RuntimeFailure(str(exc)) from exc
