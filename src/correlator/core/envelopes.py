"""Envelope decoding: a Kafka record or file line → log text plus what the shipper knows about its origin.

Understood: raw bytes (UTF-8; invalid bytes replaced, never fatal), Filebeat (``message``, ``host.name``,
``log.file.path``, ``@timestamp``, ``fields.*``), Fluent Bit (``log`` plus configured host/file keys), Vector
(``message``, ``host``, ``file``, ``timestamp``), and Kafka headers ``cluster`` / ``host`` / ``role``.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from correlator.core.limits import OutOfRange, epoch_ms, valid_text
from correlator.core.timestamps import TimestampError, parse_offset

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
    """``filebeat`` / ``fluentbit`` / ``vector`` / ``json`` when the value was a JSON envelope."""


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


def decode(value: bytes, headers: Mapping[str, bytes] | None = None) -> Decoded:
    """Decode one record value; raises :class:`EnvelopeError` with a stable reason when it is unusable."""
    if looks_binary(value):
        raise EnvelopeError("binary", "value contains NUL bytes or mostly control characters")
    text, invalid = decode_text(value)
    header_fields = _header_fields(headers)
    stripped = text.lstrip("\ufeff \t")
    if stripped.startswith("{"):
        decoded = _storable(_json_envelope(stripped, invalid))
    else:
        decoded = Decoded(text=text, invalid_utf8=invalid)
    if header_fields:
        decoded = Decoded(
            text=decoded.text,
            host=header_fields.get("host") or decoded.host,
            file=decoded.file,
            role=header_fields.get("role") or decoded.role,
            cluster=header_fields.get("cluster") or decoded.cluster,
            shipper_ts_ms=decoded.shipper_ts_ms,
            invalid_utf8=decoded.invalid_utf8,
            envelope=decoded.envelope,
        )
    return decoded


def _header_fields(headers: Mapping[str, bytes] | None) -> dict[str, str]:
    if not headers:
        return {}
    out: dict[str, str] = {}
    for name in ("cluster", "host", "role"):
        raw = headers.get(name)
        if raw:
            out[name] = (raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else str(raw)).strip()
    return out


def _json_envelope(text: str, invalid: bool) -> Decoded:
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise EnvelopeError("bad_json", f"JSON envelope does not parse: {exc}") from None
    if not isinstance(data, dict):
        raise EnvelopeError("bad_envelope", f"JSON envelope is a {type(data).__name__}, not an object")
    message = data.get("message")
    kind = "vector" if "message" in data and isinstance(data.get("host"), str) else "filebeat"
    if not isinstance(message, str):
        message = data.get("log") if isinstance(data.get("log"), str) else None
        kind = "fluentbit"
    if not isinstance(message, str):
        raise EnvelopeError("bad_envelope", "JSON envelope has no string 'message' or 'log' field")
    raw_fields = data.get("fields")
    fields: dict[str, Any] = raw_fields if isinstance(raw_fields, dict) else {}
    return Decoded(
        text=message,
        host=_first_str(_path(data, "host", "name"), data.get("host"), data.get("hostname"), fields.get("host")),
        file=_first_str(
            _path(data, "log", "file", "path"), data.get("file"), data.get("path"), data.get("filepath"),
            fields.get("file"),
        ),
        role=_first_str(fields.get("role"), data.get("role")),
        cluster=_first_str(fields.get("cluster"), data.get("cluster")),
        shipper_ts_ms=_timestamp(data),
        invalid_utf8=invalid,
        envelope=kind,
    )


def _path(data: dict[str, Any], *keys: str) -> Any:
    node: Any = data
    for key in keys:
        if not isinstance(node, dict):
            return None
        node = node.get(key)
    return node


def _first_str(*values: Any) -> str | None:
    for value in values:
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def _timestamp(data: dict[str, Any]) -> int | None:
    for key in ("@timestamp", "timestamp", "time", "date"):
        value = data.get(key)
        if isinstance(value, str):
            try:
                return parse_offset(value)
            except TimestampError:
                return None
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            try:
                return epoch_ms(value)
            except OutOfRange as exc:
                raise EnvelopeError("bad_timestamp", f"envelope {key}: {exc}") from None
    return None


def _storable(decoded: Decoded) -> Decoded:
    """JSON escapes can spell lone surrogates, which no UTF-8 snapshot or event can hold."""
    texts = {f: getattr(decoded, f) for f in ("text", "host", "file", "role", "cluster")}
    clean: dict[str, Any] = {f: valid_text(v) for f, v in texts.items() if isinstance(v, str) and valid_text(v) is not v}
    return dataclasses.replace(decoded, **clean) if clean else decoded
