"""The command line: every command is listed, every option shows its environment variable, secrets never print."""

from __future__ import annotations

import re

import click
from click.testing import CliRunner

from correlator.cli import COMMANDS, cli
from correlator.config import Settings


def test_help_lists_every_command() -> None:
    """``correlator --help`` names each registered command."""
    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == 0
    listed = set(re.findall(r"^  ([\w-]+)\s", result.output.split("Commands:")[1], re.M))
    assert listed == set(COMMANDS)


def test_every_option_with_a_variable_shows_it() -> None:
    """An option read from a ``CORRELATOR_*`` variable says so in ``--help``, whichever way it was declared."""
    seen = 0
    with click.Context(cli) as ctx:
        for path in _commands(cli, ctx):
            result = CliRunner().invoke(cli, [*path, "--help"], terminal_width=400)
            command: click.Command = cli
            for name in path:
                command = command.get_command(ctx, name)  # type: ignore[attr-defined]
            for param in command.params:
                if isinstance(param, click.Option) and param.envvar and not param.hidden:
                    seen += 1
                    assert param.show_envvar and f"env var: {param.envvar}]" in result.output, (path, param.name)
    assert seen > 50


def test_every_settings_option_shows_its_env_var() -> None:
    """Each ``--option`` that maps to a setting prints ``CORRELATOR_<NAME>`` in its command's help."""
    runner = CliRunner()
    seen = 0
    for name in COMMANDS:
        command = cli.get_command(None, name)  # type: ignore[arg-type]
        subcommands = getattr(command, "commands", {"": command})
        for sub in subcommands:
            args = [name, sub, "--help"] if sub else [name, "--help"]
            out = runner.invoke(cli, args, terminal_width=400).output
            for option in re.findall(r"--([a-z][a-z0-9-]+)", out):
                field = option.replace("-", "_")
                if field in Settings.model_fields:
                    seen += 1
                    assert f"CORRELATOR_{field.upper()}" in out, (args, option)
    assert seen > 10


def test_secrets_never_appear_in_repr_or_dump() -> None:
    """The SASL password and the Slack token are masked in every printable form of the settings."""
    settings = Settings(sasl_password="hunter2-sasl", slack_token="xoxb-secret-token")
    for text in (repr(settings), str(settings), str(settings.model_dump()), settings.model_dump_json()):
        assert "hunter2-sasl" not in text and "xoxb-secret-token" not in text
    assert settings.kafka_security()["sasl.password"] == "hunter2-sasl"
    assert settings.slack_token_value() == "xoxb-secret-token"


def test_every_help_reads_as_plain_text() -> None:
    """No RST markup, no scenario name split across lines, switches shown as switches (not TEXT taking "True")."""
    from click.testing import CliRunner

    from correlator.cli import cli

    runner = CliRunner()
    names = [line.split()[0] for line in runner.invoke(cli, ["--help"]).output.split("Commands:")[1].splitlines()
             if line.strip()]
    assert "simulate" in names and "slack" in names
    for name in names:
        text = runner.invoke(cli, [name, "--help"], terminal_width=80).output
        assert "``" not in text, name
        assert "TEXT" not in "".join(line for line in text.splitlines() if "timelines" in line), name
    simulate = runner.invoke(cli, ["simulate", "--help"], terminal_width=80).output
    assert all(re.search(rf"^  {s}  +\w", simulate, re.M) for s in ("insufficient-data", "two-jobs"))


def _commands(group: click.Group, ctx: click.Context, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    out = [path]
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if isinstance(command, click.Group):
            out += _commands(command, ctx, (*path, name))
        else:
            out.append((*path, name))
    return out


def test_every_help_fits_80_columns_without_cut_summaries() -> None:
    """``--help`` of the tool and of every command at 80 columns: nothing cut with "..." (each listing's summary is
    written to fit), no "…" that reads as a cut, no line wider than the terminal, every command listed with words of
    its own."""
    from correlator.cli import SUMMARIES

    with click.Context(cli) as ctx:
        paths = _commands(cli, ctx)
    assert set(SUMMARIES) == {p[0] for p in paths if p}
    for path in paths:
        result = CliRunner().invoke(cli, [*path, "--help"], terminal_width=80)
        assert result.exit_code == 0, (path, result.output)
        body = result.output.split("\n", 1)[1]  # the usage line's own "[ARGS]..." is click's grammar, not a cut
        cut = [line for line in body.splitlines() if "..." in line or "…" in line]  # click cuts with three dots
        assert not cut, (path, cut)
        assert not [line for line in result.output.splitlines() if len(line) > 80], path
