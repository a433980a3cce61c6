"""Line rendering: the default log layouts of Flink (log4j 1 / log4j 2), Hadoop daemons and JVM GC logs."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone


def wall(ts_ms: int, offset_min: int = 0, sep: str = ",") -> str:
    """``yyyy-MM-dd HH:mm:ss,SSS`` in a zone ``offset_min`` east of UTC (log lines carry no zone)."""
    t = datetime.fromtimestamp(ts_ms / 1000, tz=UTC) + timedelta(minutes=offset_min)
    return t.strftime("%Y-%m-%d %H:%M:%S") + f"{sep}{ts_ms % 1000:03d}"


def iso_with_offset(ts_ms: int, offset_min: int = 0) -> str:
    """``2020-01-02T17:18:15.512+0800`` as JVM GC logs print it."""
    tz = timezone(timedelta(minutes=offset_min))
    t = datetime.fromtimestamp(ts_ms / 1000, tz=tz)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ts_ms % 1000:03d}" + t.strftime("%z")


def flink(ts_ms: int, level: str, logger: str, message: str, *, log4j2: bool, offset_min: int = 0) -> str:
    """``%d{yyyy-MM-dd HH:mm:ss,SSS} %-5p %-60c %x - %m%n``; log4j 2 renders the empty NDC as ``[]``."""
    ndc = "[]" if log4j2 else ""
    return f"{wall(ts_ms, offset_min)} {level:<5} {logger:<60} {ndc} - {message}"


def hadoop(ts_ms: int, level: str, logger: str, message: str, *, offset_min: int = 0) -> str:
    """``%d{ISO8601} %p %c: %m%n`` (level not padded)."""
    return f"{wall(ts_ms, offset_min)} {level} {logger}: {message}"


def gc_unified(ts_ms: int, uptime_ms: int, tags: str, message: str, *, offset_min: int = 0) -> str:
    """JDK 9+ ``-Xlog:gc*:file=…:time,uptime,level,tags`` line (tags padded as newer JDKs do)."""
    return f"[{iso_with_offset(ts_ms, offset_min)}][{uptime_ms / 1000:.3f}s][info][{tags:<12}] {message}"
