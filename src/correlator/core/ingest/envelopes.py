"""Envelope decoding: a Kafka record or file line → log text plus what the shipper knows about its origin.

Understood: raw bytes (UTF-8; invalid bytes replaced, never fatal), a JSON string (Vector's ``log_namespace``), the
JSON objects of :mod:`correlator.core.ingest.envelope_shapes` (Filebeat, Vector, Fluent Bit, rsyslog,
OpenTelemetry), Kafka headers ``cluster`` / ``host`` / ``role`` / ``file``, and keys of the form ``host:path``,
``host|path``, ``host/path`` (:func:`correlator.core.ingest.sources.source_of_key`).

Who names the origin, strongest first: Kafka headers, the JSON envelope, the key. File names and banners are the
parsers' later fallbacks.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, tzinfo

from correlator.core.ingest.envelope_shapes import ShapeError, Shipped, read_object
from correlator.core.ingest.framing import unframe_text
from correlator.core.ingest.layouts import read_layout, render
from correlator.core.ingest.limits import OutOfRange, valid_text
from correlator.core.ingest.sources import source_of_key

_NOT_CONTROL = bytes(b for b in range(256) if b >= 32 or b in (9, 10, 12, 13, 27))


@dataclass(frozen=True, slots=True)
class Decoded:
    text: str
    host: str | None = None
    file: str | None = None
    role: str | None = None
    cluster: str | None = None
    shipper_ts_ms: int | None = None
    invalid_utf8: bool = False
    envelope: str | None = None
    """The shape of a JSON value (``filebeat``, ``vector``, ``fluentbit``, ``rsyslog``, ``otel``, ``json_string``)."""


class EnvelopeError(ValueError):
    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


def looks_binary(value: bytes) -> bool:
    """NUL bytes or many control characters in the first 4 KiB: not a log line in any encoding we read."""
    head = value[:4096]
    if b"\x00" in head:
        return True
    control = len(head.translate(None, _NOT_CONTROL))
    return control > max(4, len(head) // 10)


def decode_text(value: bytes) -> tuple[str, bool]:
    try:
        return value.decode("utf-8"), False
    except UnicodeDecodeError:
        return value.decode("utf-8", errors="replace"), True


def decode(value: bytes, headers: Mapping[str, bytes] | None = None, key: bytes | None = None,
           zone: tzinfo = UTC) -> Decoded:
    """Decode one record value; raises :class:`EnvelopeError` with a stable reason when it is unusable.

    Whatever carried it, the text is unwrapped down to the daemon's own line: a container runtime's CRI prefix is
    removed and a JSON layout record is rendered as its text line (stamped in ``zone``, the ingest's zone)."""
    if looks_binary(value):
        raise EnvelopeError("binary", "value contains NUL bytes or mostly control characters")
    text, invalid = decode_text(value)
    text = unframe_text(text)
    shipped = _json_value(text, zone)
    named = _header_fields(headers)
    keyed = source_of_key(key.decode("utf-8", errors="replace")) if key else None
    if shipped is None:
        return Decoded(
            text=text,
            host=named.get("host") or (keyed.host if keyed else None),
            file=named.get("file") or (keyed.file if keyed else None),
            role=named.get("role"),
            cluster=named.get("cluster"),
            invalid_utf8=invalid,
        )
    inner = _inner(shipped.text, zone)
    text = valid_text(inner)
    replaced = text is not inner
    return Decoded(
        text=text,
        host=named.get("host") or _valid(shipped.host) or (keyed.host if keyed else None),
        file=named.get("file") or _valid(shipped.file) or (keyed.file if keyed else None),
        role=named.get("role") or _valid(shipped.role),
        cluster=named.get("cluster") or _valid(shipped.cluster),
        shipper_ts_ms=shipped.shipper_ts_ms,
        invalid_utf8=invalid or replaced,
        envelope=shipped.shape,
    )


def _valid(value: str | None) -> str | None:
    return None if value is None else valid_text(value)


_HEADERS = ("cluster", "host", "role", "file")


def _header_fields(headers: Mapping[str, bytes] | None) -> dict[str, str]:
    if not headers:
        return {}
    out: dict[str, str] = {}
    for name in _HEADERS:
        raw = headers.get(name)
        if raw:
            value = (raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else str(raw)).strip()
            if value:
                out[name] = value
    return out


def _inner(text: str, zone: tzinfo) -> str:
    """A shipper's text that is itself framed (a CRI line, a JSON layout record forwarded unparsed)."""
    text = unframe_text(text)
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):
            return text
        record = read_layout(data) if isinstance(data, dict) else None
        if record is not None:
            return render(record, zone)
    return text


def _json_value(text: str, zone: tzinfo = UTC) -> Shipped | None:
    """The envelope a value holds, or None for a raw line. An object must parse; a string record (Vector's
    ``log_namespace``) is used when it parses, and is otherwise a raw line that happens to start with a quote."""
    stripped = text.lstrip("\ufeff \t")
    if stripped.startswith('"'):
        try:
            data = json.loads(stripped)
        except (ValueError, RecursionError):
            return None
        return Shipped("json_string", data) if isinstance(data, str) else None
    if not stripped.startswith("{"):
        return None
    try:
        data = json.loads(stripped)
    except (ValueError, RecursionError) as exc:
        raise EnvelopeError("bad_json", f"JSON envelope does not parse: {exc}") from None
    if not isinstance(data, dict):
        raise EnvelopeError("bad_envelope", f"JSON envelope is a {type(data).__name__}, not an object")
    try:
        return read_object(data, zone)
    except ShapeError as exc:
        raise EnvelopeError("bad_envelope", str(exc)) from None
    except OutOfRange as exc:
        raise EnvelopeError("bad_timestamp", f"envelope {exc}") from None
