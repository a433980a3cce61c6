"""Ranges every value from input must fall in before it is kept: beyond them a value is corrupt, not data.

State snapshots and the wire format store integers as 64-bit and text as UTF-8; an input that breaks either
(``1e300`` as a timestamp, a 30-digit checkpoint id, a lone surrogate from a ``\\ud800`` JSON escape) would otherwise
fail far from where it entered, in the middle of a snapshot. Checking where input enters turns it into a dead
letter with a reason instead.
"""

from __future__ import annotations

import dataclasses
import math

from correlator.core.event_dicts import number_fields

EPOCH_MS_MIN = 0
EPOCH_MS_MAX = 7_258_118_400_000
"""2200-01-01T00:00:00Z: an epoch-millisecond stamp outside 1970..2200 is a corrupt clock or a unit mix-up."""
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1


class OutOfRange(ValueError):
    """A value from input that no snapshot or event may carry."""


def epoch_ms(value: int | float) -> int:
    """A shipper's numeric stamp (seconds below 1e11, else milliseconds) as epoch ms in 1970..2200."""
    if isinstance(value, float) and not math.isfinite(value):
        raise OutOfRange(f"timestamp {value} is not a finite number")
    if not -1e15 < value < 1e15:
        raise OutOfRange(f"timestamp {_shown(value)} outside 1970..2200")
    ms = round(value * 1000) if abs(value) < 1e11 else int(value)  # round: 1095403325.86 * 1000 is 1095403325859.9998
    if not EPOCH_MS_MIN <= ms <= EPOCH_MS_MAX:
        raise OutOfRange(f"timestamp {value!r} outside 1970..2200")
    return ms


def _shown(value: int | float) -> str:
    return f"{value:.3g}" if isinstance(value, float) else str(value)[:40]


def valid_text(text: str) -> str:
    """``text`` as storable UTF-8: lone surrogates (from JSON escapes) become U+FFFD."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in text)
    return text


def out_of_range(obj: object) -> str | None:
    """Why a parsed dataclass (an event) cannot be stored, or ``None``: an int beyond 64 bits, a time beyond 2200."""
    for name, is_time in _names(type(obj)):
        value = getattr(obj, name)
        if value.__class__ is not int:  # bools, None, text, floats: nothing to check
            continue
        if is_time:
            if not EPOCH_MS_MIN <= value <= EPOCH_MS_MAX:
                return f"{name}={value} outside 1970..2200"
        elif not INT64_MIN <= value <= INT64_MAX:
            return f"{name}={str(value)[:40]} exceeds 64 bits"
    return None


_FIELDS: dict[type, tuple[tuple[str, bool], ...]] = {}


def _names(cls: type) -> tuple[tuple[str, bool], ...]:
    """The fields of a dataclass that may hold an int, each with whether it is a time (looked up once per class:
    events are many). An event's are those its annotation lets hold a number; another class's are all of them."""
    names = _FIELDS.get(cls)
    if names is None:
        numbers = number_fields(cls)
        every = numbers if numbers is not None else tuple(f.name for f in dataclasses.fields(cls))
        names = _FIELDS[cls] = tuple((name, name.endswith("ts_ms")) for name in every)
    return names
