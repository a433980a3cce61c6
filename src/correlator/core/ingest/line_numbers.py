"""Line numbers of a block's offsets, each part of the block counted about once.

A block's walk skips noise without counting it, yet every event's ref needs its line's number, and a write decided
late points back at its ``Receiving`` line far behind. Counting from the block's start each time would read a 4 MiB
block once per event; counting from anchors does not.
"""

from __future__ import annotations

from collections.abc import Callable

ANCHOR_BYTES = 64 * 1024
"""Line-number anchors' spacing: a look back counts at most this many bytes."""

Newlines = Callable[[bytes, int, int], int]
"""The newlines of ``block[start:end]`` (a ``WriteReader``'s, native where built)."""


class LineNumbers:
    """The number of the line holding each offset asked, from the nearest known point at or below it: the offset
    asked last, or the anchor (a line number recorded at every ``ANCHOR_BYTES`` boundary the count passes)."""

    def __init__(self, block: bytes, first_line: int, newlines: Newlines) -> None:
        self._block = block
        self._newlines = newlines
        self._counted = (0, first_line)
        self._anchors = [first_line]
        """The line number at each ``ANCHOR_BYTES`` boundary counted past so far."""

    def at(self, offset: int) -> int:
        """A write decided late points back at its ``Receiving`` line: that ask and the next one past it each count
        from an anchor, never again from the start or from the look back."""
        since, number = self._counted
        anchors = self._anchors
        nearest = min(offset // ANCHOR_BYTES, len(anchors) - 1)  # past the counted part: its last anchor
        if offset < since or nearest * ANCHOR_BYTES > since:
            since, number = nearest * ANCHOR_BYTES, anchors[nearest]
        edge = len(anchors) * ANCHOR_BYTES
        while edge <= offset:
            number += self._newlines(self._block, since, edge)
            anchors.append(number)
            since, edge = edge, edge + ANCHOR_BYTES
        number += self._newlines(self._block, since, offset)
        self._counted = (offset, number)
        return number
