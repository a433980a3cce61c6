"""What flows between the ingest stages: a reassembled log record, and the error an input turns into instead."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

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
    """Where a record comes from, after the envelope and the transport hint were merged (``origins.origin_of``).

    Its :attr:`key` names the source: records of one key are stitched, their writes tracked and their clock kept
    apart from every other source's."""

    cluster: str
    host: str | None
    role: str | None
    family: str | None
    file: str | None
    host_guessed: bool = False
    """The host was read from the file's name (a pod's or a folder's), not told by the record or the caller."""
    shipper_ts_ms: int | None = None
    """When the shipper read the line (the time of a record that has no stamp of its own)."""
    file_date: tuple[int, int, int] | None = None
    """The date the file's name carries: the day of a layout that stamps only the time."""
    stream: str | None = None
    """The Kafka key of a record that does not name both its host and its file: it keeps apart the files an
    unkeyed partition mixes."""
    key: str = field(init=False, repr=False, compare=False)
    """The source's key: cluster, host, file, family and stream."""

    def __post_init__(self) -> None:
        parts = (self.cluster, self.host, self.file, self.family, self.stream)
        object.__setattr__(self, "key", "\x1f".join(part or "" for part in parts))

    def as_dict(self) -> dict[str, Any]:
        """The dict form: a snapshot's."""
        data: dict[str, Any] = {"cluster": self.cluster, "host": self.host, "host_guessed": self.host_guessed,
                                "role": self.role, "family": self.family, "file": self.file,
                                "shipper_ts_ms": self.shipper_ts_ms, "file_date": self.file_date}
        if self.stream is not None:
            data["stream"] = self.stream
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Origin:
        """An origin back from its dict form (a snapshot's, JSON's lists for tuples)."""
        date = data.get("file_date")
        return cls(str(data.get("cluster") or ""), data.get("host"), data.get("role"), data.get("family"),
                   data.get("file"), bool(data.get("host_guessed")), data.get("shipper_ts_ms"),
                   (int(date[0]), int(date[1]), int(date[2])) if date else None, data.get("stream"))


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
