"""``correlator simulate SCENARIO --out DIR``: write the realistic log files of a named scenario."""

from __future__ import annotations

from pathlib import Path

import click

from correlator.cli import RuntimeFailure
from correlator.simulate import SCENARIOS, generate


def _rows(names: list[str], width: int = 72) -> list[list[str]]:
    """Scenario names in lines of at most ``width`` characters, never split inside a name."""
    rows: list[list[str]] = [[]]
    for name in names:
        if rows[-1] and len(", ".join([*rows[-1], name])) > width:
            rows.append([])
        rows[-1].append(name)
    return rows


HELP = ("Write the log files of SCENARIO (Flink, DataNode, NameNode, GC logs with their real file names) to --out.\n\n"
        "\b\nScenarios:\n" + ",\n".join("  " + ", ".join(row) for row in _rows(sorted(SCENARIOS))))


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
