"""Compressed rotations read up to their damage: every line before a cut or a corrupt byte, and what stopped it."""

from __future__ import annotations

import bz2
import gzip
import lzma
from pathlib import Path

import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from correlator.adapters.opening import damage_of, open_log

CODECS = {"gzip": gzip.compress, "bzip2": bz2.compress, "xz": lzma.compress,
          "zstd": zstandard.ZstdCompressor().compress}
LINES = b"".join(b"2026-12-03 16:00:%02d,000 INFO DataNode: line %d\n" % (i % 60, i) for i in range(20_000))


def _read(path: Path) -> tuple[bytes, str | None, str | None]:
    handle, codec = open_log(str(path))
    with handle:
        return handle.read(), codec, damage_of(handle)


@settings(max_examples=30, deadline=None)
@given(text=st.binary(max_size=5_000), codec=st.sampled_from(sorted(CODECS)), members=st.integers(1, 3))
def test_a_whole_file_reads_as_the_library_decodes_it(tmp_path_factory, text: bytes, codec: str,
                                                      members: int) -> None:
    """Concatenated members (``cat a.gz b.gz``, pbzip2) included: the same bytes, no damage."""
    path = tmp_path_factory.mktemp("whole") / "x.log.z"
    path.write_bytes(b"".join(CODECS[codec](text) for _ in range(members)))
    assert _read(path) == (text * members, codec, None)


def test_a_cut_gzip_gives_every_line_before_the_cut(tmp_path: Path) -> None:
    packed = gzip.compress(LINES)
    path = tmp_path / "dn.log.1.gz"
    path.write_bytes(packed[: len(packed) // 2])
    data, codec, damage = _read(path)
    assert codec == "gzip" and LINES.startswith(data) and data.count(b"\n") > 5_000
    assert damage == f"the gzip stream ends early, after {len(packed) // 2:,} compressed bytes"


def test_a_cut_xz_gives_what_its_blocks_decode(tmp_path: Path) -> None:
    packed = lzma.compress(LINES)
    path = tmp_path / "dn.log.xz"
    path.write_bytes(packed[: len(packed) * 3 // 4])
    data, _, damage = _read(path)
    assert LINES.startswith(data) and data and damage is not None and "ends early" in damage


def test_corrupt_bytes_end_the_reading_there_and_say_so(tmp_path: Path) -> None:
    """A block whose header is garbage stops the reading at it; the lines decoded before it are kept."""
    packed = bytearray(gzip.compress(LINES))
    packed[len(packed) // 2: len(packed) // 2 + 64] = b"\xff" * 64
    path = tmp_path / "dn.log.gz"
    path.write_bytes(bytes(packed))
    data, _, damage = _read(path)
    assert LINES.startswith(data) and data.count(b"\n") > 1_000  # decoded up to the bad block, not lost with it
    assert damage is not None and damage.startswith("the gzip data is corrupt in compressed bytes 0-")


def test_a_plain_file_is_not_wrapped(tmp_path: Path) -> None:
    path = tmp_path / "dn.log"
    path.write_bytes(LINES[:1000])
    assert _read(path) == (LINES[:1000], None, None)
