"""Events as plain data (the event JSON): the registry of wire types, and the conversion both ways that every adapter
(orjson codec, snapshots, files) shares. Converting back checks field types, so a corrupt record fails at the
boundary, not inside the engine's state."""

from __future__ import annotations

import dataclasses
import typing
from functools import lru_cache
from typing import Any

from correlator.core import events
from correlator.core.events import Event, event_classes

EVENT_TYPES: dict[str, type[Event]] = event_classes()
"""Every event class by its wire ``type``: generated from the classes of ``core/events/``, never listed by hand."""


def event_to_dict(event: Event) -> dict[str, Any]:
    """Plain-data form with ``type`` and ``at`` first, as `correlator parse` prints it. The field names come from
    ``_FIELDS`` (read once per registered class); a class defined after the registry is read field by field."""
    out: dict[str, Any] = {"type": event.type, "at": event.at}
    known = _FIELDS.get(type(event))
    for name in (n for n, _, _ in known) if known is not None else (f.name for f in dataclasses.fields(event)):
        value = getattr(event, name)
        out[name] = list(value) if isinstance(value, tuple) else value
    return out


class UnknownEventType(ValueError):
    """A dict that names no registered event type."""


class InvalidEvent(ValueError):
    """A dict whose fields do not have the types its event type declares (a corrupt or foreign record)."""


_SCALARS: dict[str, tuple[type, ...]] = {"int": (int,), "str": (str,), "bool": (bool,), "float": (int, float)}


@lru_cache(maxsize=None)
def _options(annotation: str) -> tuple[str, ...]:
    """An annotation's alternatives, split once: every field of every event on the wire is checked."""
    return tuple(part.strip() for part in annotation.split("|"))


def _accepts_any(options: tuple[str, ...], value: Any) -> bool:
    """Whether ``value`` is of one of a field's alternatives, as the wire reads it (a list for a tuple)."""
    for option in options:
        if option == "None" and value is None:
            return True
        if option.startswith("tuple[tuple[str, int]") and isinstance(value, (list, tuple)):
            return all(isinstance(item, (list, tuple)) and len(item) == 2 and isinstance(item[0], str)
                       and isinstance(item[1], int) and not isinstance(item[1], bool) for item in value)
        if option.startswith("tuple[") and isinstance(value, (list, tuple)):
            return all(isinstance(item, str) for item in value)
        kinds = _SCALARS.get(option)
        if kinds and isinstance(value, kinds) and not (option != "bool" and isinstance(value, bool)):
            return True
    return False


def _plain(annotation: str) -> str:
    """A field's annotation as the wire checks it: a sub-kind's ``Literal`` alias is a string there (a value this
    version does not know yet, from a newer producer, is taken as before)."""
    options = (part.strip() for part in annotation.split("|"))
    return " | ".join("str" if typing.get_origin(getattr(events, o, None)) is typing.Literal else o for o in options)


_FIELDS: dict[type[Event], tuple[tuple[str, str, tuple[str, ...]], ...]] = {
    cls: tuple((f.name, annotation, _options(annotation))
               for f in dataclasses.fields(cls) for annotation in (_plain(str(f.type)),))
    for cls in EVENT_TYPES.values()
}
"""Each event class's fields, with the annotation the wire checks and its alternatives, worked out once."""


def number_fields(cls: type) -> tuple[str, ...] | None:
    """The fields of a registered event class that may hold a number (an int or a float); None for another class."""
    checks = _FIELDS.get(cls)
    if checks is None:
        return None
    return tuple(name for name, _, options in checks if "int" in options or "float" in options)


def event_from_dict(data: dict[str, Any]) -> Event:
    """Inverse of :func:`event_to_dict`; ignores ``at`` (derived) and unknown keys (forward compatibility).

    Field types are checked, so a corrupt record fails here, at the boundary, not later inside the engine's state.
    """
    cls = EVENT_TYPES.get(data.get("type", ""))
    if cls is None:
        raise UnknownEventType(f"unknown event type {data.get('type')!r}")
    kwargs: dict[str, Any] = {}
    for name, annotation, options in _FIELDS[cls]:
        if name in data:
            value = data[name]
            if not _accepts_any(options, value):
                raise InvalidEvent(f"{cls.type}.{name} has a {type(value).__name__}, expected {annotation}")
            kwargs[name] = tuple(value) if isinstance(value, list) else value
    try:
        return cls(**kwargs)
    except TypeError as exc:  # a required field is missing
        raise InvalidEvent(f"{cls.type}: {exc}") from None
