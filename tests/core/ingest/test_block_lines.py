"""A block's line numbers (the refs of its events) counted once as the walk goes, jumping back from anchors."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from correlator.core.ingest import line_numbers
from correlator.core.ingest.line_numbers import LineNumbers
from correlator.core.ingest.write_lines import StdlibWriteReader

NEWLINES = StdlibWriteReader().newlines


@settings(max_examples=300, deadline=None)
@given(lines=st.lists(st.integers(min_value=0, max_value=90), min_size=1, max_size=400),
       asks=st.lists(st.floats(min_value=0, max_value=1, exclude_max=True), min_size=1, max_size=60),
       first=st.integers(min_value=1, max_value=10_000))
def test_the_line_of_any_offset_asked_in_any_order_is_the_counted_one(lines: list[int], asks: list[float],
                                                                       first: int) -> None:
    """Offsets asked mostly ascending with jumps back (a write decided late points back at its Receiving line), over
    anchors a few hundred bytes apart so that every path is taken: each answer equals counting from the start."""
    block = b"".join(b"x" * n + b"\n" for n in lines)
    reader = LineNumbers(block, first, NEWLINES)
    original, line_numbers.ANCHOR_BYTES = line_numbers.ANCHOR_BYTES, 256
    try:
        for fraction in asks:
            at = int(fraction * len(block))
            assert reader.at(at) == first + block.count(b"\n", 0, at)
    finally:
        line_numbers.ANCHOR_BYTES = original


class _Counted(bytes):
    """A block that adds up the bytes its newline counts cover."""

    covered = 0

    def count(self, sub, start=None, end=None):  # type: ignore[no-untyped-def, override]
        _Counted.covered += (len(self) if end is None else end) - (start or 0)
        return super().count(sub, start, end)


def test_a_look_back_then_past_the_counted_part_recounts_no_more_than_an_anchor_spacing() -> None:
    """The walk's pattern on a slow day: ahead, far back to a write's Receiving line, then past everything counted so
    far. Each ask costs at most an anchor spacing beyond the bytes newly passed, never the distance back."""
    block = _Counted(b"".join(b"x" * (i % 90) + b"\n" for i in range(200_000)))
    reader = LineNumbers(block, 1, NEWLINES)
    _Counted.covered = 0
    step = len(block) // 20
    for at in range(step, len(block) - step, step):
        assert reader.at(at) == 1 + bytes.count(block, b"\n", 0, at)
        assert reader.at(at - step + 7) == 1 + bytes.count(block, b"\n", 0, at - step + 7)
    assert _Counted.covered <= len(block) + 40 * line_numbers.ANCHOR_BYTES
