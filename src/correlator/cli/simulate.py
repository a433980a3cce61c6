"""``correlator simulate SCENARIO --out DIR``: write the realistic log files of a named scenario; ``--list`` names
each scenario with a line on what it shows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from correlator.cli import RuntimeFailure
from correlator.simulate import SCENARIOS, generate


class ScenarioCommand(click.Command):
    """``--help`` lists the scenarios, each with its one line, between the description and the options."""

    def format_help_text(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        super().format_help_text(ctx, formatter)
        with formatter.section("Scenarios"):
            formatter.write_dl([(name, SCENARIOS[name].summary) for name in sorted(SCENARIOS)])


def _list(ctx: click.Context, _: click.Parameter, given: bool) -> None:
    if not given or ctx.resilient_parsing:
        return
    width = max(map(len, SCENARIOS))
    for name in sorted(SCENARIOS):
        click.echo(f"{name:<{width}}  {SCENARIOS[name].summary}")
    ctx.exit()


@click.command(cls=ScenarioCommand)
@click.argument("scenario", type=click.Choice(sorted(SCENARIOS)), metavar="SCENARIO")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="directory to write the log files into (created if missing)")
@click.option("--scale", type=click.IntRange(min=1), default=1, show_default=True,
              help="multiply the background traffic (lines per minute) to make large inputs")
@click.option("--seed", type=int, default=0, show_default=True, help="seed of the generator (same seed, same bytes)")
@click.option("--list", "list_scenarios", is_flag=True, is_eager=True, expose_value=False, callback=_list,
              help="print each scenario's name and what it shows, one a line, and exit")
def simulate(scenario: str, out_dir: Path, scale: int, seed: int, **_: Any) -> None:
    """Write the log files of SCENARIO (Flink, DataNode, NameNode, GC logs with their real file names) to --out."""
    try:
        written = generate(scenario, out_dir, scale=scale, seed=seed)
    except OSError as exc:
        raise RuntimeFailure(f"cannot write {out_dir}: {exc.strerror or exc}") from None
    for path in written:
        click.echo(str(path))
