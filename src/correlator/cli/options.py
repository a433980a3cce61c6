"""Click options generated from :class:`Settings`, so every option shows its ``CORRELATOR_*`` variable in ``--help``."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click
from pydantic import ValidationError

from correlator.config import SECRET_FIELDS, Settings, env_var

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
TOPICS = ("topic_logs_flink", "topic_logs_hdfs", "topic_events", "topic_verdicts", "topic_risks", "topic_deadletter")
INTERPRETATION = ("tz", "cluster", "layout")
EVENT_TIME = ("lookahead_ms", "out_of_orderness_ms", "idle_timeout_ms", "clock_skew_ms", "multiline_idle_ms")


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
            flag = "--" + name.replace("_", "-")
            if isinstance(default, bool):  # a switch pair, not a TEXT option that takes "True"
                wrapper = click.option(
                    f"{flag}/--no-{flag[2:]}", name, default=None, envvar=env_var(name), show_envvar=True,
                    help=f"{info.description}  [default: {'on' if default else 'off'}]",
                )(wrapper)
                continue
            wrapper = click.option(
                flag,
                name,
                type=option_type,
                envvar=env_var(name),
                show_envvar=True,
                default=None,
                help=f"{info.description}" + (f"  [default: {shown}]" if shown else ""),
            )(wrapper)
        return wrapper  # type: ignore[return-value]

    return decorate


def text_width() -> int:
    """Text verdicts wrap to the terminal they are written to, else to a fixed width (a file, a pipe, CI logs)."""
    import shutil

    from correlator.core.explain.verdict_text import TEXT_WIDTH

    return shutil.get_terminal_size((TEXT_WIDTH, 24)).columns if sys.stdout.isatty() else TEXT_WIDTH
