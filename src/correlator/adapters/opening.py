"""Opening a log file as a stream of its text, whatever compressed it: rotations are kept gzipped more often than not.

The compression is recognised by its magic bytes, not the name (logrotate's ``delaycompress`` and log4j's ``%i.gz``
both leave names that lie now and then). Every codec is read as a stream, so a multi-gigabyte rotation costs a
buffer, not its size in memory.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import zlib
from typing import BinaryIO, cast

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


def open_log(path: str) -> tuple[BinaryIO, str | None]:
    """The file's text as a binary stream, and the codec it was decompressed with (None for a plain file)."""
    raw = open(path, "rb")  # noqa: SIM115 - handed to the caller, who closes it
    codec = compression_of(raw.read(6))
    raw.seek(0)
    if codec is None:
        return raw, None
    if codec == "zstd":
        return cast(BinaryIO, zstandard.ZstdDecompressor().stream_reader(raw, closefd=True)), codec
    raw.close()
    if codec == "gzip":
        return cast(BinaryIO, gzip.open(path, "rb")), codec
    if codec == "bzip2":
        return cast(BinaryIO, bz2.open(path, "rb")), codec
    return cast(BinaryIO, lzma.open(path, "rb")), codec


CORRUPT = (OSError, EOFError, zlib.error, lzma.LZMAError, zstandard.ZstdError)
"""What reading a damaged compressed file raises."""
