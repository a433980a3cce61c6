"""What flows between the ingest stages: a reassembled log record, and the error an input turns into instead."""

from __future__ import annotations

from dataclasses import dataclass

EXCERPT_CHARS = 200


@dataclass(frozen=True, slots=True)
class ParseError:
    """An input that could not be turned into events; the streaming layer sends it to the dead-letter topic."""

    reason: str
    """Short stable code: ``invalid_utf8``, ``binary``, ``line_too_long``, ``bad_json``, ``bad_envelope``,
    ``bad_timestamp``, ``no_timestamp``, ``out_of_range``, ``unknown_layout``, ``internal_error``."""
    detail: str
    ref: str
    excerpt: str


def safe_excerpt(text: str | bytes, limit: int = EXCERPT_CHARS) -> str:
    """A printable prefix of ``text``: control characters become ``?`` so a dead letter never carries raw binary."""
    if isinstance(text, bytes):
        text = text[: limit * 4].decode("utf-8", errors="replace")
    head = text[:limit]
    return "".join(c if c.isprintable() or c == "\t" else "?" for c in head)


def parse_error(reason: str, detail: str, ref: str, text: str | bytes) -> ParseError:
    return ParseError(reason=reason, detail=detail, ref=ref, excerpt=safe_excerpt(text))


@dataclass(frozen=True, slots=True)
class Origin:
    """Where a record comes from, after the envelope and the transport hint were merged."""

    cluster: str
    host: str
    role: str | None
    family: str | None
    file: str | None
    shipper_ts_ms: int | None = None


@dataclass(frozen=True, slots=True)
class Record:
    """One log record: a header line and its continuation lines (stack frames, banners, GC details)."""

    lines: tuple[str, ...]
    ref: str
    """Reference of the first line (``file:line`` or ``topic/partition@offset``)."""
    origin: Origin

    @property
    def text(self) -> str:
        return "\n".join(self.lines)
