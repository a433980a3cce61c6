"""The ``correlator`` command: wiring only. Each command lives in its own module, imported when it runs."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from typing import TYPE_CHECKING, Any

import click

from correlator import __version__

if TYPE_CHECKING:  # the summary's module is the offline path's: not imported by commands that do not read files
    from correlator.offline.summary import Summary

COMMANDS: dict[str, str] = {
    "analyze": "correlator.cli.analyze:analyze",
    "parse": "correlator.cli.parse:parse",
    "simulate": "correlator.cli.simulate:simulate",
    "worker": "correlator.cli.worker:worker",
    "replay": "correlator.cli.replay:replay",
    "verdicts": "correlator.cli.verdicts:verdicts",
    "slack": "correlator.cli.slack:slack",
    "alerts": "correlator.cli.alerts:alerts",
    "accuracy": "correlator.cli.accuracy:accuracy",
    "topics": "correlator.cli.topics:topics",
    "bench": "correlator.cli.bench:bench",
    "schema": "correlator.cli.schema:schema",
    "flink-stats": "correlator.cli.flink_stats:flink_stats",
}


SUMMARIES: dict[str, str] = {
    "accuracy": "How often each root-cause code was right, from feedback.",
    "alerts": "Send verdicts to Alertmanager, a webhook, PagerDuty, Opsgenie.",
    "analyze": "One verdict per failed checkpoint in log files or folders.",
    "bench": "Measure parse and worker speed against grep and a bare loop.",
    "flink-stats": "Read Flink's REST checkpoint statistics as events.",
    "parse": "Print the events the parsers read from log files.",
    "replay": "Produce log files into the raw topics, as shippers would.",
    "schema": "Print a published JSON Schema (verdict, risk, feedback).",
    "simulate": "Write the log files of a bundled scenario.",
    "slack": "Post verdicts to Slack, one thread per incident.",
    "topics": "Create or align the Kafka topics correlator uses.",
    "verdicts": "Print verdicts from the verdict topic as they arrive.",
    "worker": "Run the worker: raw logs in, events and verdicts out.",
}
"""The listing's one line per command, short enough for an 80-column terminal (the full text is its --help)."""


class LazyGroup(click.Group):
    """Imports a command's module only when that command needs it, keeping start-up and the listing fast."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(name for name in COMMANDS if _available(name))

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, SUMMARIES[name]) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None or not _available(cmd_name):
            return None
        module_name, attr = target.split(":")
        command: click.Command = getattr(importlib.import_module(module_name), attr)
        return command


def _available(name: str) -> bool:
    module_name = COMMANDS[name].split(":")[0]
    return importlib.util.find_spec(module_name) is not None


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 120})
@click.version_option(__version__, prog_name="correlator")
def cli() -> None:
    """Explain failed Flink checkpoints from the HDFS and JVM logs that overlapped them."""


class RuntimeFailure(click.ClickException):
    """A failure at run time: exit 1 with a one-line reason (usage errors stay exit 2)."""

    exit_code = 1

    def show(self, file: Any = None) -> None:
        click.echo(f"correlator: {self.format_message()}", err=True)


UNKNOWN_LAYOUT_HINT = "if the lines do not start with their date, give their log4j pattern with --layout"


def report(summary: Summary, command: str) -> None:
    """What a command that read files says at the end, on stderr: each file, how it was read and whose it is (or why it
    was skipped), then the totals; with nothing recognised at all, fail."""
    for line in summary.per_file(command):
        click.echo(line, err=True)
    if summary.recognised == 0:
        raise RuntimeFailure(summary.line(command).removeprefix(f"{command}: "))
    if summary.events == 0 and summary.errors["unknown_layout"]:
        raise RuntimeFailure(f"{summary.line(command).removeprefix(f'{command}: ')}; no record was in a layout "
                             f"correlator reads: {UNKNOWN_LAYOUT_HINT}")
    click.echo(f"correlator: {summary.line(command)}", err=True)


def main() -> None:
    try:
        cli.main(prog_name="correlator", standalone_mode=True)
    except KeyboardInterrupt:
        sys.exit(130)
