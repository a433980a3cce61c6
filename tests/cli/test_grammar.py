"""One grammar across the commands: ``--format json|text`` wherever records are printed, ``--follow/--once`` worded
alike wherever a topic is read, durations of one type (a unit of their own or the option's), no option a command
ignores, and the old spellings still working, hidden, for one release."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from correlator.cli import cli
from correlator.cli.options import FOLLOW_HELP, Duration
from correlator.config import DURATIONS, Settings, format_duration, parse_duration
from correlator.simulate import SCENARIOS

VERDICT = next(line for line in (Path(__file__).resolve().parents[1] / "data" / "verdicts" / "recurring.jsonl")
               .read_text(encoding="utf-8").splitlines() if line.startswith("{"))


def command(*path: str) -> click.Command:
    found: click.Command = cli
    with click.Context(cli) as ctx:
        for name in path:
            assert isinstance(found, click.Group)
            found = found.get_command(ctx, name)  # type: ignore[assignment]
    return found


def every_command() -> list[tuple[tuple[str, ...], click.Command]]:
    out = []
    with click.Context(cli) as ctx:
        for name in cli.list_commands(ctx):
            found = cli.get_command(ctx, name)
            if isinstance(found, click.Group):
                out += [((name, sub), found.get_command(ctx, sub)) for sub in found.list_commands(ctx)]
            else:
                out.append(((name,), found))
    return out  # type: ignore[return-value]


def option(cmd: click.Command, name: str) -> click.Option:
    return next(p for p in cmd.params if isinstance(p, click.Option) and p.name == name)


def flags(cmd: click.Command, *, hidden: bool = False) -> set[str]:
    return {o for p in cmd.params if isinstance(p, click.Option) and p.hidden == hidden
            for o in (*p.opts, *p.secondary_opts)}


def test_every_command_that_prints_records_takes_format_json_or_text() -> None:
    for path in (("analyze",), ("verdicts",), ("accuracy",)):
        fmt = option(command(*path), "fmt")
        assert fmt.opts == ["--format"], path
        assert list(fmt.type.choices) == ["json", "text"], path  # type: ignore[attr-defined]
    assert "--json" not in flags(command("verdicts")) and "--json" in flags(command("verdicts"), hidden=True)


def test_follow_and_once_are_one_pair_worded_alike() -> None:
    """Every command that reads the verdict topic says ``--follow / --once`` in the same words; flink-stats (which
    polls a JobManager) uses the same two names."""
    for path in (("verdicts",), ("alerts",), ("slack",)):
        follow = option(command(*path), "follow")
        assert (follow.opts, follow.secondary_opts, follow.help) == (["--follow"], ["--once"], FOLLOW_HELP), path
    stats = option(command("flink-stats"), "follow")
    assert (stats.opts, stats.secondary_opts, stats.default) == (["--follow"], ["--once"], False)
    for path, cmd in every_command():
        assert not {"-f", "--no-follow", "--no-once"} & flags(cmd), path


class FakeConsumer:
    """The verdict topic holding one verdict, for ``correlator verdicts`` without a broker."""

    def __init__(self, _: dict[str, Any]) -> None:
        self.pending = [VERDICT.encode()]

    def list_topics(self, *_: Any, **__: Any) -> None:
        return None

    def subscribe(self, _: list[str]) -> None:
        return None

    def poll(self, _: float) -> Any:
        if not self.pending:
            return None
        value = self.pending.pop()
        return type("Message", (), {"error": lambda self: None, "value": lambda self: value,
                                    "offset": lambda self: 0})()

    def close(self) -> None:
        return None


@pytest.fixture
def verdict_topic(monkeypatch: pytest.MonkeyPatch) -> None:
    import confluent_kafka

    monkeypatch.setattr(confluent_kafka, "Consumer", FakeConsumer)


def test_verdicts_old_spellings_still_work_and_say_the_new_one(verdict_topic: None) -> None:
    """``--json`` prints what ``--format json`` prints, ``-f`` follows as ``--follow`` does (with --once and no idle
    time nothing is read), each noting its new spelling on stderr; neither is in ``--help``."""
    runner = CliRunner()
    new = runner.invoke(cli, ["verdicts", "--format", "json", "--follow", "--max", "1"])
    old = runner.invoke(cli, ["verdicts", "--json", "-f", "--max", "1"])
    assert new.exit_code == old.exit_code == 0, (new.output, old.output)
    assert new.stdout == old.stdout == VERDICT + "\n"
    assert new.stderr == ""
    assert "--json is now --format json" in old.stderr and "-f is now --follow" in old.stderr
    once = runner.invoke(cli, ["verdicts", "--json", "--once", "--idle-timeout", "0s"])
    assert once.exit_code == 0 and once.stdout == ""
    text = runner.invoke(cli, ["verdicts", "-f", "--max", "1"])
    assert text.exit_code == 0 and "HDFS_DIRECTORY_SCAN" in text.stdout and not text.stdout.startswith("{")
    shown = runner.invoke(cli, ["verdicts", "--help"], terminal_width=400).output
    assert "--json" not in shown and "-f," not in shown and "--format [json|text]" in shown


def test_durations_take_a_unit_or_the_options_own() -> None:
    assert parse_duration("90s", "min") == 1.5 and parse_duration("2h", "min") == 120
    assert parse_duration("1h30m", "s") == 5400 and parse_duration("500ms", "s") == 0.5
    assert parse_duration("120", "min") == 120 and parse_duration("0.5", "s") == 0.5  # the old spellings
    for bad in ("", "2x", "h", "1.5.5s", "2 hours"):
        with pytest.raises(ValueError, match="not a duration"):
            parse_duration(bad, "min")
    assert [format_duration(*d) for d in ((120.0, "min"), (0.5, "s"), (180_000, "ms"), (90, "min"))] == \
        ["2h", "500ms", "3m", "90m"]
    assert Duration("min").convert("15m", None, None) == 15
    assert Duration("ms", whole=True).convert("3s", None, None) == 3000


def test_minutes_are_one_type_in_every_command() -> None:
    """Every duration option, of whatever command, is a DURATION; the minutes of the Slack bot and of the alert
    forwarder alike take fractions and units."""
    seen = 0
    for path, cmd in every_command():
        for param in cmd.params:
            if isinstance(param, click.Option) and (param.name in DURATIONS or param.name in ("idle_timeout",
                                                                                              "interval")):
                seen += 1
                assert isinstance(param.type, Duration), (path, param.name)
    assert seen >= 10
    settings = Settings(slack_resolve_after_min="90s", alert_hold_min="1.5", alert_resolve_after_min="2h",
                        lookahead_ms="3m")
    assert (settings.slack_resolve_after_min, settings.alert_hold_min, settings.alert_resolve_after_min) == \
        (1.5, 1.5, 120)
    assert settings.lookahead_ms == 180_000 and isinstance(settings.lookahead_ms, int)


def test_a_duration_in_the_environment_reads_as_on_the_command_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CORRELATOR_SLACK_RESOLVE_AFTER_MIN", "45m")
    monkeypatch.setenv("CORRELATOR_IDLE_TIMEOUT_MS", "5000")
    settings = Settings()
    assert settings.slack_resolve_after_min == 45 and settings.idle_timeout_ms == 5000


def test_a_bad_duration_is_a_usage_error() -> None:
    result = CliRunner().invoke(cli, ["alerts", "--alert-hold-min", "2x"])
    assert result.exit_code == 2 and "not a duration" in result.output
    result = CliRunner().invoke(cli, ["flink-stats", "--jobmanager", "http://jm:8081", "--interval", "500ms"])
    assert result.exit_code == 2 and "shorter than 1s" in result.output


def test_replay_offers_only_the_topics_it_writes() -> None:
    topics = {f for f in flags(command("replay")) if f.startswith("--topic")}
    assert topics == {"--topic-logs-flink", "--topic-logs-hdfs", "--topic-logs-s3"}


def test_simulate_names_each_scenario_with_a_line() -> None:
    runner = CliRunner()
    listed = runner.invoke(cli, ["simulate", "--list"])
    assert listed.exit_code == 0
    rows = dict(line.split(None, 1) for line in listed.output.splitlines())
    assert rows == {name: s.summary for name, s in SCENARIOS.items()}
    shown = runner.invoke(cli, ["simulate", "--help"], terminal_width=80).output.split("Scenarios:")[1]
    assert {line.split()[0] for line in shown.split("Options:")[0].splitlines() if line.startswith("  ") and
            not line.startswith("   ")} == set(SCENARIOS)
