"""``correlator simulate SCENARIO --out DIR``: write the realistic log files of a named scenario."""

from __future__ import annotations

import textwrap
from pathlib import Path

import click

from correlator.cli import RuntimeFailure
from correlator.simulate import SCENARIOS, generate


HELP = ("Write the log files of SCENARIO (Flink, DataNode, NameNode, GC logs with their real file names) to --out.\n\n"
        "\b\nScenarios:\n" + "\n".join(textwrap.wrap(", ".join(sorted(SCENARIOS)), 72, initial_indent="  ",
                                                        subsequent_indent="  ", break_on_hyphens=False)))


@click.command(help=HELP)
@click.argument("scenario", type=click.Choice(sorted(SCENARIOS)), metavar="SCENARIO")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="directory to write the log files into (created if missing)")
@click.option("--scale", type=click.IntRange(min=1), default=1, show_default=True,
              help="multiply the background traffic (lines per minute) to make large inputs")
@click.option("--seed", type=int, default=0, show_default=True, help="seed of the generator (same seed, same bytes)")
def simulate(scenario: str, out_dir: Path, scale: int, seed: int) -> None:
    """Write the log files of SCENARIO (Flink, DataNode, NameNode, GC logs with their real file names) to --out."""
    try:
        written = generate(scenario, out_dir, scale=scale, seed=seed)
    except OSError as exc:
        raise RuntimeFailure(f"cannot write {out_dir}: {exc.strerror or exc}") from None
    for path in written:
        click.echo(str(path))
