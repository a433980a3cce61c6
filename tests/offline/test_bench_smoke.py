"""A tiny run of ``correlator bench parse``: it prints the three rates and the ratios (never a full-size run here)."""

from __future__ import annotations

from click.testing import CliRunner

from correlator.cli import cli


def test_bench_parse_small() -> None:
    """With a 2 MiB corpus the command prints our rate, the naive loop, grep and both ratios."""
    result = CliRunner().invoke(cli, ["bench", "parse", "--size-mb", "2"])
    assert result.exit_code == 0, result.output
    for text in ("correlator (offline path", "naive loop", "grep -cE", "ratio ours / naive", "ratio ours / grep"):
        assert text in result.output
