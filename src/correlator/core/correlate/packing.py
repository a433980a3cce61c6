"""Compact plain-data form of events for engine snapshots: ``[type, value, value, …]`` in field order.

Snapshots hold thousands of events; naming every field in every one would double their size. The order is the
dataclass field order, fixed per event class.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from correlator.core.event_dicts import EVENT_TYPES, UnknownEventType
from correlator.core.events import Event

_NAMES: dict[str, tuple[str, ...]] = {}


def _names(cls: type[Event]) -> tuple[str, ...]:
    names = _NAMES.get(cls.type)
    if names is None:
        names = _NAMES[cls.type] = tuple(f.name for f in dataclasses.fields(cls))
    return names


def pack(event: Event) -> list[Any]:
    values = (getattr(event, name) for name in _names(type(event)))
    return [event.type, *(list(v) if isinstance(v, tuple) else v for v in values)]


def unpack(data: list[Any]) -> Event:
    cls = EVENT_TYPES.get(data[0])
    if cls is None:
        raise UnknownEventType(f"unknown event type {data[0]!r}")
    names = _names(cls)
    if len(data) - 1 > len(names):
        raise ValueError(f"{data[0]}: {len(data) - 1} values for {len(names)} fields")
    # a snapshot written before optional fields were added to the end of an event has fewer values: defaults apply
    fields: dict[str, Any] = {n: tuple(v) if isinstance(v, list) else v for n, v in zip(names, data[1:])}
    return cls(**fields)
