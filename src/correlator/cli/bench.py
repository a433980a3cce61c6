"""``correlator bench``: benchmarks that print ratios against baselines measured in the same run."""

from __future__ import annotations

from pathlib import Path

import click


@click.group()
def bench() -> None:
    """Benchmarks; each prints our rate next to baselines measured in the same run."""


@bench.command("parse", short_help="Parse rate against grep and a naive regex loop.")
@click.option("--size-mb", type=click.IntRange(1), default=256, show_default=True,
              help="size of each generated corpus (MiB); 256 is where Hadoop's default log4j.properties rolls a "
                   "daemon's log")
@click.option("--kind", "kinds", type=click.Choice(["real", "datanode", "incident", "mixed"]), multiple=True,
              default=None, help="corpora to run (repeatable): the lab's real logs end to end (in a clone of the "
              "repository), a generated DataNode on a good day, the same on a bad day, a mix  [default: all]")
@click.option("--corpus", type=click.Path(exists=True, dir_okay=False), default=None,
              help="read this log file instead of generating a corpus")
@click.option("--real-dir", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
              help="the lab's logs for the real corpus (a clone's tests/data/lab; an installed package has none)")
def parse_bench(size_mb: int, corpus: str | None, kinds: tuple[str, ...], real_dir: Path | None) -> None:
    """Parsing rate (lines/s, MB/s) vs a naive per-line re loop and grep -cE over the same trigger phrases."""
    from correlator.bench.parse import run_bench
    from correlator.bench.real import LAB_DIR, available

    root = real_dir or LAB_DIR
    if not kinds:
        kinds = ("real",) * available(root) + ("datanode", "incident", "mixed")
        if "real" not in kinds:
            click.echo("no lab logs here (tests/data/lab of a clone): the real corpus is left out", err=True)
    elif "real" in kinds and not available(root):
        raise click.UsageError(f"--kind real needs the lab's logs: none in {root} (tests/data/lab of a clone of the "
                               "repository, or --real-dir)")
    run_bench(size_mb, corpus, click.echo, kinds, real_dir)


def _register_stream() -> None:
    from correlator.cli.bench_stream import soak_bench, stream_bench

    bench.add_command(stream_bench)
    bench.add_command(soak_bench)


_register_stream()
