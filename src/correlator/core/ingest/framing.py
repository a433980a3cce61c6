"""Container framing: the log lines a Kubernetes node keeps, turned back into the lines the daemon wrote.

A container runtime does not store a process's output as is. containerd and CRI-O (the kubelet's CRI log format)
prefix every line with ``<RFC 3339 time, ns> <stdout|stderr> <F|P> `` and cut lines longer than their buffer into
``P`` (partial) pieces ended by an ``F`` piece; Docker's ``json-file`` driver writes ``{"log": …, "stream": …,
"time": …}`` per line, a piece without its trailing newline being partial. Either way the text inside is the
daemon's own line, with its own stamp and layout, so unframing comes before everything else and the rest of the
ingest never knows a container was there. Inside the frame the line may itself be a JSON layout record
(:mod:`correlator.core.ingest.layouts`): the caller chains the two.

Recognised by content (:func:`sniff_framing`), never by file name: a ``kubectl cp`` of ``0.log`` is still CRI.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from datetime import tzinfo
from enum import StrEnum

from correlator.core.ingest.layouts import read_layout, render


class Framing(StrEnum):
    PLAIN = "plain"
    CRI = "cri"
    DOCKER = "docker"


_CRI = re.compile(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?(?:Z|[+-]\d\d:\d\d) (?:stdout|stderr) ([FP])(?:[:\w]*)(?: |$)")
_CRI_TEXT = re.compile(_CRI.pattern.decode())
_DOCKER = re.compile(r'\{\s*"log"\s*:\s*"')


def sniff_framing(head: str) -> Framing:
    """The framing of a file or stream from its first line(s)."""
    first = head.lstrip("\ufeff").split("\n", 1)[0]
    if _CRI_TEXT.match(first):
        return Framing.CRI
    if _DOCKER.match(first) and '"stream"' in first:
        return Framing.DOCKER
    return Framing.PLAIN


def is_cri(value: bytes) -> bool:
    return _CRI.match(value) is not None


class Unframer:
    """Strips one source's framing line by line, joining partial pieces; holds at most one open partial line.

    A partial piece left open when the input ends is released by :meth:`flush` as a line of its own: the text is
    kept, only the join with a piece that never came is lost.
    """

    __slots__ = ("framing", "layout_zone", "_partial")

    def __init__(self, framing: Framing, layout_zone: tzinfo | None = None) -> None:
        self.framing = framing
        self.layout_zone = layout_zone
        """Set when the lines inside are JSON layout records: they are rendered as text lines stamped in it."""
        self._partial: list[bytes] = []

    def block(self, data: bytes) -> bytes:
        """Complete framed lines (each ending in a newline) → the daemon's lines, each ending in a newline."""
        if self.framing is Framing.PLAIN and self.layout_zone is None:
            return data
        out: list[bytes] = []
        for line in data.split(b"\n")[:-1] if data.endswith(b"\n") else data.split(b"\n"):
            piece = self.line(line.removesuffix(b"\r"))
            if piece is not None:
                out.append(piece)
        return b"\n".join(out) + b"\n" if out else b""

    def line(self, framed: bytes) -> bytes | None:
        text = self._unframed(framed)
        if text is None or self.layout_zone is None or not text.startswith(b"{"):
            return text
        return render_line(text, self.layout_zone)

    def _unframed(self, framed: bytes) -> bytes | None:
        """One framed line → the daemon's line, or None while it is a partial piece (or not a framed line at all
        but an empty one). A line that does not carry the framing is passed through unchanged: a file that changed
        hands midway loses nothing."""
        if self.framing is Framing.CRI:
            m = _CRI.match(framed)
            if m is None:
                return self._complete(framed) if framed else None
            text = framed[m.end():]
            if m.group(1) == b"P":
                self._partial.append(text)
                return None
            return self._complete(text)
        if self.framing is Framing.DOCKER:
            log = _docker_log(framed)
            if log is None:
                return self._complete(framed) if framed.strip() else None
            if not log.endswith(b"\n"):
                self._partial.append(log)
                return None
            return self._complete(log[:-1])
        return framed

    def flush(self) -> bytes | None:
        """The open partial line at the end of input, if any."""
        if not self._partial:
            return None
        return self._complete(b"")

    def _complete(self, text: bytes) -> bytes:
        if self._partial:
            self._partial.append(text)
            text = b"".join(self._partial)
            self._partial = []
        return text


def _docker_log(framed: bytes) -> bytes | None:
    """The ``log`` field of one json-file line, as UTF-8 bytes (None when the line is not one)."""
    if not framed.lstrip().startswith(b"{"):
        return None
    try:
        record = json.loads(framed)
    except (ValueError, RecursionError):
        return None
    log = record.get("log") if isinstance(record, dict) else None
    if not isinstance(log, str):
        return None
    return log.encode("utf-8", errors="replace")


def render_line(text: bytes, zone: tzinfo) -> bytes:
    """A JSON layout record → its text lines (UTF-8); anything else is returned as it came."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return text
    record = read_layout(data) if isinstance(data, dict) else None
    return text if record is None else render(record, zone).encode("utf-8")


def layout_of(line: str) -> str | None:
    """The JSON layout a line is a record of (``ecs``, ``log4j2-json``, ``logstash``, ``gelf``), or None."""
    if not line.lstrip().startswith("{"):
        return None
    try:
        data = json.loads(line)
    except (ValueError, RecursionError):
        return None
    record = read_layout(data) if isinstance(data, dict) else None
    return record.layout if record else None


def unframe_text(text: str) -> str:
    """One shipped record's text with a CRI prefix removed (a shipper that forwarded the container file raw)."""
    m = _CRI_TEXT.match(text)
    return text[m.end():] if m else text


def unframe_records(values: Sequence[bytes], offsets: Sequence[int]) -> tuple[list[bytes], list[int]]:
    """A raw container file shipped line by line (kcat of a CRI file): the daemon's lines, partial pieces joined
    within the batch (a piece still open at the batch's end is kept as a line: its text is never dropped)."""
    unframer = Unframer(Framing.CRI)
    out_values: list[bytes] = []
    out_offsets: list[int] = []
    for value, offset in zip(values, offsets):
        line = unframer.line(value.rstrip(b"\r\n"))
        if line is not None:
            out_values.append(line)
            out_offsets.append(offset)
    rest = unframer.flush()
    if rest is not None:
        out_values.append(rest)
        out_offsets.append(offsets[-1])
    return out_values, out_offsets


_PLAIN = bytes(b for b in range(256) if b >= 32 or b in (9, 13))
"""Bytes a plain log line may hold; any other byte (a newline inside a value among them) sends a batch down the
record-by-record path."""


def plain_lines(values: Sequence[bytes], joined: bytes, max_line_bytes: int) -> bool:
    """Whether record values (``joined``: them, each ended by a newline) are plain one-line log lines that can be
    walked as a file block: no newline or control byte in a value, no JSON envelope, none too long."""
    return (joined.translate(None, _PLAIN) == b"\n" * len(values)  # one pass: no newline or control byte in a value
            and (b"{" not in joined or (joined[:1] != b"{" and b"\n{" not in joined))  # "{" alone is a memchr
            and (len(joined) <= max_line_bytes or max(map(len, values)) <= max_line_bytes))
