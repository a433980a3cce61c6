"""Compact plain-data form of events for engine snapshots: ``[type, value, value, …]`` in field order.

Snapshots hold thousands of events; naming every field in every one would double their size. The order is the
dataclass field order, fixed per event class.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
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


class Packer:
    """:func:`pack`, remembering each event's form from one snapshot to the next.

    A worker snapshots its engine after every batch, and nearly all the events held are those of the last snapshot:
    on a busy cluster tens of thousands, so packing each anew would be most of the worker's time. Events are frozen,
    so a form once packed stays true; it is kept while the event is held (packed in the last or the current round).
    The forms are shared between snapshots: a caller must not change a snapshot's lists.
    """

    __slots__ = ("_current", "_last")

    def __init__(self) -> None:
        self._last: dict[int, tuple[Event, list[Any]]] = {}
        self._current: dict[int, tuple[Event, list[Any]]] = {}

    def __call__(self, event: Event) -> list[Any]:
        return self.many((event,))[0]

    def many(self, events: Iterable[Event]) -> list[list[Any]]:
        """The packed form of each of ``events``, in order (one call for a whole list: they are many)."""
        last, current, out = self._last, self._current, []
        for event in events:
            key = id(event)
            kept = last.get(key) or current.get(key)  # most were held at the last snapshot too
            if kept is None or kept[0] is not event:  # an id is reused only after its event is gone
                kept = (event, pack(event))
            current[key] = kept
            out.append(kept[1])
        return out

    def round_done(self) -> None:
        """A snapshot is complete: forget the forms of events it did not hold."""
        self._last, self._current = self._current, {}


Pack = Callable[[Event], list[Any]]


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
