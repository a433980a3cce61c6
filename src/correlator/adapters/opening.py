"""Opening a log file as a stream of its text, whatever compressed it: rotations are kept gzipped more often than not.

The compression is recognised by its magic bytes, not the name (logrotate's ``delaycompress`` and log4j's ``%i.gz``
both leave names that lie now and then). Every codec is read as a stream, so a multi-gigabyte rotation costs a
buffer, not its size in memory.
"""

from __future__ import annotations

import bz2
import io
import lzma
import zlib
from typing import Any, BinaryIO, cast

import zstandard

_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x1f\x8b", "gzip"),
    (b"BZh", "bzip2"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
)


def compression_of(head: bytes) -> str | None:
    """``gzip`` / ``bzip2`` / ``xz`` / ``zstd`` when ``head`` starts with that codec's magic bytes."""
    for magic, name in _MAGIC:
        if head.startswith(magic):
            return name
    return None


class Salvaging(io.RawIOBase):
    """A compressed file's text, read up to where the file is cut off or damaged instead of failing at it.

    A rotation truncated by a full disk or a copy cut short still holds every line before the cut (``zcat`` shows
    them); the library readers raise on the read that reaches the cut and lose what that read had decoded. This
    one hands back everything decoded, ends there, and keeps in ``damage`` what stopped it. Concatenated members
    (``cat a.gz b.gz``, pbzip2's streams) are read one after the other.
    """

    CHUNK = 1 << 16
    """Compressed bytes decoded per call. A codec whose decoder can be copied (gzip) decodes a damaged call again
    in small steps from the copy, losing nothing before the damage; the others lose that call's output."""

    def __init__(self, raw: BinaryIO, codec: str) -> None:
        self._raw = raw
        self._codec = codec
        self._decoder = _decoder(codec)
        self._pending = bytearray()
        self._done = False
        self._consumed = 0
        self._carry = b""
        self.damage: str | None = None
        """What stopped the reading before the file's end (``None``: read whole)."""

    def readable(self) -> bool:
        return True

    def read(self, size: int | None = -1) -> bytes:
        want = None if size is None or size < 0 else size
        while not self._done and (want is None or len(self._pending) < want):
            self._fill()
        n = len(self._pending) if want is None else min(want, len(self._pending))
        out = bytes(self._pending[:n])
        del self._pending[:n]
        return out

    def readinto(self, buffer: Any) -> int:
        want = len(buffer)
        while not self._done and len(self._pending) < want:
            self._fill()
        n = min(want, len(self._pending))
        with memoryview(self._pending) as pending:
            buffer[:n] = pending[:n]
        del self._pending[:n]
        return n

    def _fill(self) -> None:
        if self._decoder.eof:  # a member ended: what follows is the next member, zero padding or the end
            data, self._carry = self._carry, b""
            if not data.strip(b"\x00"):
                data = self._read_raw()
                if not data.strip(b"\x00"):
                    self._done = True
                    return
            self._decoder = _decoder(self._codec)
        else:
            data = self._read_raw()
            if not data:
                self._done = True
                self.damage = f"the {self._codec} stream ends early, after {self._consumed:,} compressed bytes"
                return
        self._decode(data)

    def _decode(self, data: bytes) -> None:
        before = self._decoder.copy() if hasattr(self._decoder, "copy") else None
        try:
            self._pending += self._decoder.decompress(data)
        except CORRUPT as exc:
            self._done = True
            self._pending += _up_to_error(before, data)
            self.damage = (f"the {self._codec} data is corrupt in compressed bytes {self._consumed - len(data):,}-"
                           f"{self._consumed:,} ({exc})")
            return
        if self._decoder.eof:
            self._carry = self._decoder.unused_data

    def _read_raw(self) -> bytes:
        data = self._raw.read(self.CHUNK)
        self._consumed += len(data)
        return data

    def close(self) -> None:
        self._raw.close()
        super().close()


def _up_to_error(decoder: Any, piece: bytes) -> bytes:
    """What ``decoder`` (a copy taken before ``piece``) decodes of ``piece`` in small steps until the error."""
    out = bytearray()
    if decoder is None:
        return bytes(out)
    for start in range(0, len(piece), 256):
        try:
            out += decoder.decompress(piece[start:start + 256])
        except CORRUPT:
            break
    return bytes(out)


def _decoder(codec: str) -> Any:
    """A fresh incremental decoder of one member/stream (``decompress``, ``eof``, ``unused_data``)."""
    if codec == "gzip":
        return zlib.decompressobj(wbits=31)
    if codec == "bzip2":
        return bz2.BZ2Decompressor()
    if codec == "xz":
        return lzma.LZMADecompressor()
    return zstandard.ZstdDecompressor().decompressobj()


def open_log(path: str) -> tuple[BinaryIO, str | None]:
    """The file's text as a binary stream, and the codec it was decompressed with (None for a plain file). A
    compressed file is read up to any damage (:class:`Salvaging`; its ``damage`` says what stopped it)."""
    raw = open(path, "rb")  # noqa: SIM115 - handed to the caller, who closes it
    codec = compression_of(raw.read(6))
    raw.seek(0)
    if codec is None:
        return raw, None
    return cast(BinaryIO, io.BufferedReader(Salvaging(raw, codec), 1 << 20)), codec


def damage_of(handle: BinaryIO) -> str | None:
    """What cut the reading of ``handle`` short, when :func:`open_log` gave a salvaging reader."""
    return getattr(getattr(handle, "raw", None), "damage", None)


CORRUPT = (OSError, EOFError, zlib.error, lzma.LZMAError, zstandard.ZstdError)
"""What reading a damaged compressed file raises."""
