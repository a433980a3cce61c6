"""How an early warning or a loss record says a time, a duration and a size: in a person's units, UTC."""

from __future__ import annotations

from datetime import UTC, datetime

HOUR_MS = 3_600_000


def clock(ts_ms: int, since_ms: int | None = None) -> str:
    """UTC time of day, as precise as it is near ``since_ms``: seconds within the hour, the date on another day."""
    when = datetime.fromtimestamp(ts_ms / 1000, tz=UTC)
    if since_ms is None:
        return when.strftime("%H:%M UTC")
    if abs(ts_ms - since_ms) < HOUR_MS:
        return when.strftime("%H:%M:%S UTC")
    same_day = when.date() == datetime.fromtimestamp(since_ms / 1000, tz=UTC).date()
    return when.strftime("%H:%M UTC" if same_day else "%Y-%m-%d %H:%M UTC")


def span(ms: int) -> str:
    minutes = round(ms / 60_000)
    if minutes < 1:
        return f"{ms / 1000:.0f} s"
    return f"{minutes} min" if minutes < 120 else f"{minutes / 60:.1f} h"


def secs(ms: float) -> str:
    return f"{ms / 1000:.1f} s"


def mib(size: int) -> str:
    return f"{size / 1048576:.1f} MiB"
