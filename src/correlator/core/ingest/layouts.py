"""Structured log layouts: one JSON record per event, rendered back into the text line the parsers read.

Flink and Hadoop log through log4j (Flink: log4j2), and a deployment that wants machine-readable logs switches the
appender's layout, not the daemon: the words of every message stay the same, only the stamp, level, logger and the
stack trace move into fields. Rendering such a record as ``<stamp> <LEVEL> <logger> - <message>`` followed by its
stack trace's lines gives exactly the multi-line record the text path builds, so every wording rule applies
unchanged. Each layout is one row of :data:`LAYOUTS`: the field that proves it, and where its facts are.

| layout | proven by | time | level | logger | stack trace |
|---|---|---|---|---|---|
| log4j2 JsonTemplateLayout ``EcsLayout`` (also logback/log4j ECS encoders) | ``log.level`` | ``@timestamp`` | ``log.level`` | ``log.logger`` | ``error.stack_trace`` |
| log4j2 classic ``JsonLayout`` | ``loggerName`` | ``instant`` / ``timeMillis`` | ``level`` | ``loggerName`` | ``thrown`` |
| ``LogstashJsonEventLayoutV1``, logstash-logback-encoder | ``logger_name`` | ``@timestamp`` | ``level`` | ``logger_name`` | ``stack_trace`` / ``exception`` |
| ``GelfLayout`` | ``short_message`` | ``timestamp`` (s) | ``level`` (syslog) | ``_logger`` / ``_loggerName`` | ``full_message`` |

The stamp is written as wall time in the ingest's zone, the same zone the text path reads it back in.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, tzinfo
from typing import Any

from correlator.core.ingest.limits import OutOfRange, epoch_ms
from correlator.core.ingest.timestamps import TimestampError, to_epoch_ms

_SYSLOG_LEVELS = {0: "FATAL", 1: "FATAL", 2: "FATAL", 3: "ERROR", 4: "WARN", 5: "INFO", 6: "INFO", 7: "DEBUG"}


@dataclass(frozen=True, slots=True)
class LayoutRecord:
    """What a structured record says, before rendering."""

    layout: str
    ts_ms: int
    level: str
    logger: str
    message: str
    stack: str | None


def _get(data: dict[str, Any], dotted: str) -> Any:
    """A field as flat dotted key (``"log.level"``, as ECS templates write it) or nested (``{"log": {"level"}}``)."""
    if dotted in data:
        return data[dotted]
    node: Any = data
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def time_ms(value: Any) -> int | None:
    """ISO 8601 with a zone, epoch seconds (a float, as Fluent Bit and GELF write them) or epoch milliseconds;
    :class:`OutOfRange` for a number beyond 1970..2200."""
    if isinstance(value, str):
        try:
            return to_epoch_ms(value)
        except TimestampError:
            return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return epoch_ms(value)
    return None


def _time(value: Any) -> int | None:
    try:
        return time_ms(value)
    except OutOfRange:
        return None


def _ecs(data: dict[str, Any]) -> LayoutRecord | None:
    level, message = _str(_get(data, "log.level")), _get(data, "message")
    ts = _time(_get(data, "@timestamp"))
    if level is None or not isinstance(message, str) or ts is None:
        return None
    return LayoutRecord("ecs", ts, level, _str(_get(data, "log.logger")) or "-", message,
                        _str(_get(data, "error.stack_trace")))


def _log4j2_json(data: dict[str, Any]) -> LayoutRecord | None:
    logger, level, message = _str(data.get("loggerName")), _str(data.get("level")), data.get("message")
    if logger is None or level is None or not isinstance(message, str):
        return None
    instant = data.get("instant")
    ts: int | None = None
    if isinstance(instant, dict) and isinstance(instant.get("epochSecond"), int):
        nanos = instant.get("nanoOfSecond")
        ts = _time(instant["epochSecond"] * 1000 + (nanos // 1_000_000 if isinstance(nanos, int) else 0))
    if ts is None:
        ts = _time(data.get("timeMillis"))
    if ts is None:
        return None
    return LayoutRecord("log4j2-json", ts, level, logger, message, _thrown(data.get("thrown")))


def _thrown(thrown: Any) -> str | None:
    """log4j2 ``JsonLayout``'s ``thrown``: name and message, then ``extendedStackTrace`` (frames or text), causes."""
    if not isinstance(thrown, dict):
        return None
    lines: list[str] = []
    prefix = ""
    while isinstance(thrown, dict):
        name = _str(thrown.get("name")) or "Exception"
        text = _str(thrown.get("message"))
        lines.append(f"{prefix}{name}: {text}" if text else f"{prefix}{name}")
        frames = thrown.get("extendedStackTrace")
        if isinstance(frames, str):
            lines.extend(ln for ln in frames.splitlines() if ln.strip())
        elif isinstance(frames, list):
            for f in frames:
                if isinstance(f, dict):
                    where = f"{f.get('file')}:{f.get('line')}" if f.get("file") else "Unknown Source"
                    lines.append(f"\tat {f.get('class')}.{f.get('method')}({where})")
                elif isinstance(f, str):
                    lines.append(f"\tat {f}")
        thrown, prefix = thrown.get("cause"), "Caused by: "
    return "\n".join(lines)


def _logstash(data: dict[str, Any]) -> LayoutRecord | None:
    logger, level, message = _str(data.get("logger_name")), _str(data.get("level")), data.get("message")
    ts = _time(data.get("@timestamp"))
    if logger is None or level is None or not isinstance(message, str) or ts is None:
        return None
    stack = _str(data.get("stack_trace"))
    exception = data.get("exception")
    if stack is None and isinstance(exception, dict):
        stack = _str(exception.get("stacktrace"))
        head = _str(exception.get("exception_class"))
        if stack is not None and head is not None and not stack.startswith(head):
            stack = f"{head}: {exception.get('exception_message') or ''}\n{stack}"
    return LayoutRecord("logstash", ts, level, logger, message, stack)


def _gelf(data: dict[str, Any]) -> LayoutRecord | None:
    short = data.get("short_message")
    ts = _time(data.get("timestamp"))
    if not isinstance(short, str) or ts is None:
        return None
    raw_level = data.get("level")
    level = _SYSLOG_LEVELS.get(raw_level, "INFO") if isinstance(raw_level, int) else (_str(raw_level) or "INFO")
    logger = _str(data.get("_logger")) or _str(data.get("_loggerName")) or _str(data.get("_logger_name")) or "-"
    full = _str(data.get("full_message"))
    stack = full[len(short):].lstrip("\n") or None if full and full.startswith(short) else full
    return LayoutRecord("gelf", ts, level, logger, short, stack)


LAYOUTS: tuple[tuple[str, Callable[[dict[str, Any]], LayoutRecord | None]], ...] = (
    ("log.level", _ecs),
    ("loggerName", _log4j2_json),
    ("logger_name", _logstash),
    ("short_message", _gelf),
)
"""(the field that proves the layout, its reader), tried in order."""


def read_layout(data: dict[str, Any]) -> LayoutRecord | None:
    """The structured log record ``data`` holds, or None when it is not a log layout (a shipper's envelope)."""
    for proof, reader in LAYOUTS:
        if proof in data or (proof == "log.level" and isinstance(data.get("log"), dict) and "level" in data["log"]):
            record = reader(data)
            if record is not None:
                return record
    return None


def render(record: LayoutRecord, zone: tzinfo) -> str:
    """The record as the text layout's lines: ``yyyy-MM-dd HH:mm:ss,SSS LEVEL logger - message`` + stack trace."""
    wall = datetime.fromtimestamp(record.ts_ms // 1000, zone)
    level = record.level.upper()
    level = "WARN" if level == "WARNING" else level
    text = f"{wall:%Y-%m-%d %H:%M:%S},{record.ts_ms % 1000:03d} {level:<5} {record.logger} - {record.message}"
    return f"{text}\n{record.stack.rstrip()}" if record.stack else text
