"""The command line's one grammar: options generated from :class:`Settings` (each showing its ``CORRELATOR_*``
variable in ``--help``), durations of one type, and the options several commands share — ``--format json|text``,
``--follow/--once`` — written once, so they are spelt and explained alike everywhere."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click
from pydantic import ValidationError

from correlator.config import DURATIONS, SECRET_FIELDS, Settings, env_var, format_duration, parse_duration

F = TypeVar("F", bound=Callable[..., Any])

KAFKA = (
    "bootstrap_servers",
    "security_protocol",
    "sasl_mechanism",
    "sasl_username",
    "sasl_password",
    "sasl_password_file",
    "ssl_cafile",
    "ssl_certfile",
    "ssl_keyfile",
)
TOPICS = ("topic_logs_flink", "topic_logs_hdfs", "topic_logs_s3", "topic_events", "topic_verdicts", "topic_risks", "topic_deadletter")
INTERPRETATION = ("tz", "cluster", "layout")
EVENT_TIME = ("lookahead_ms", "out_of_orderness_ms", "idle_timeout_ms", "clock_skew_ms", "multiline_idle_ms")

HELP = {
    "slack_app_token": "Slack app-level token (it starts xapp-; scope connections:write) for Socket Mode: the verdict "
                       "buttons' clicks reach the bot without a public URL (never printed)",
}
"""Help where a setting's description does not suit ``--help`` (an ellipsis there reads as text cut off)."""


class Duration(click.ParamType):
    """A duration with its unit (``500ms``, ``90s``, ``15m``, ``2h``, ``1h30m``) or a bare number in ``unit`` (the
    option's own: ``-ms``, ``-s``, ``-min`` at the end of its name, else its help says), converted to that unit."""

    name = "duration"

    def __init__(self, unit: str, *, minimum: float | None = None, whole: bool = False) -> None:
        self.unit = unit
        self.minimum = minimum
        self.whole = whole

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        return "DURATION"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, int | float):
            amount = float(value)
        else:
            try:
                amount = parse_duration(str(value), self.unit)
            except ValueError as exc:
                self.fail(str(exc), param, ctx)
        if self.minimum is not None and amount < self.minimum:
            self.fail(f"{value} is shorter than {format_duration(self.minimum, self.unit)}", param, ctx)
        return round(amount) if self.whole else amount


def format_option(default: str, help: str) -> Callable[[F], F]:
    """``--format json|text``: how a command prints its records (passed as ``fmt``)."""
    return click.option("--format", "fmt", type=click.Choice(["json", "text"]), default=default, show_default=True,
                        help=help)


FOLLOW_HELP = "keep reading as new records arrive, or stop once caught up with the topic (a check, a catch-up run)"


def follow_option(*, default: bool, help: str = FOLLOW_HELP) -> Callable[[F], F]:
    """``--follow/--once``: keep reading a source, or stop at its end (passed as ``follow``); one wording for every
    command that reads a topic."""
    return click.option("--follow/--once", "follow", default=default, show_default=True, help=help)


def old_spelling(flag: str, instead: str, **sets: Any) -> Callable[[F], F]:
    """A flag renamed in this release, kept for one more, hidden from ``--help``: given, it sets the new option's
    parameter(s) (``sets``) and says on stderr what to write instead."""
    key = "old_" + flag.lstrip("-").replace("-", "_")

    def decorate(command: F) -> F:
        @functools.wraps(command)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if kwargs.pop(key):
                click.echo(f"correlator: {flag} is now {instead}; the old spelling goes in the next release", err=True)
                kwargs.update(sets)
            return command(*args, **kwargs)

        hidden = click.option(flag, key, is_flag=True, hidden=True, help=f"old spelling of {instead}")
        return hidden(wrapper)  # type: ignore[return-value]

    return decorate


def settings_options(*names: str) -> Callable[[F], F]:
    """Add one option per named settings field and pass the command a built ``settings`` instead of the raw values."""

    def decorate(command: F) -> F:
        @functools.wraps(command)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            given = {name: kwargs.pop(name) for name in names if name in kwargs}
            try:
                settings = Settings(**{k: v for k, v in given.items() if v is not None})
            except ValidationError as exc:
                first = exc.errors()[0]
                where = "--" + str(first["loc"][0]).replace("_", "-") if first.get("loc") else "settings"
                raise click.UsageError(f"{where}: {first['msg']}") from None
            return command(*args, settings=settings, **kwargs)

        for name in reversed(names):
            info = Settings.model_fields[name]
            default = info.default
            option_type: Any = click.Path(path_type=Path) if isinstance(default, Path) or "Path" in str(
                info.annotation
            ) else (int if isinstance(default, int) and not isinstance(default, bool) else
                  float if isinstance(default, float) else str)
            shown = None if name in SECRET_FIELDS or default is None else str(default)
            if name in DURATIONS:
                option_type = Duration(DURATIONS[name], whole=info.annotation is int)
                shown = format_duration(default, DURATIONS[name])
            description = HELP.get(name, info.description)
            flag = "--" + name.replace("_", "-")
            if isinstance(default, bool):  # a switch pair, not a TEXT option that takes "True"
                wrapper = click.option(
                    f"{flag}/--no-{flag[2:]}", name, default=None, envvar=env_var(name), show_envvar=True,
                    help=f"{description}  [default: {'on' if default else 'off'}]",
                )(wrapper)
                continue
            wrapper = click.option(
                flag,
                name,
                type=option_type,
                envvar=env_var(name),
                show_envvar=True,
                default=None,
                help=(description or "") + (f"  [default: {shown}]" if shown else ""),
            )(wrapper)
        return wrapper  # type: ignore[return-value]

    return decorate


def text_width() -> int:
    """Text verdicts wrap to the terminal they are written to, else to a fixed width (a file, a pipe, CI logs)."""
    import shutil

    from correlator.core.explain.verdict_text import TEXT_WIDTH

    return shutil.get_terminal_size((TEXT_WIDTH, 24)).columns if sys.stdout.isatty() else TEXT_WIDTH
