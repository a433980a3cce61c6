"""Java stack traces inside a record: the exception it starts with, and frames shortened to ``Class.method``."""

from __future__ import annotations

import re
from collections.abc import Sequence

_FRAME_CALL = re.compile(r"([\w$.<>]+)\(")


def short_frame(frame: str) -> str | None:
    """``org.x.DirectoryScanner.scan(DirectoryScanner.java:395)`` → ``DirectoryScanner.scan``."""
    frame = frame.strip()
    if frame.startswith("at "):
        frame = frame[3:]
    m = _FRAME_CALL.match(frame)
    if m is None:
        return None
    parts = m[1].split(".")
    return ".".join(parts[-2:]) if len(parts) >= 2 else parts[0]


def is_util_frame(frame: str) -> bool:
    frame = frame.strip().removeprefix("at ")
    return frame.startswith(("java.lang.Thread.getStackTrace", "org.apache.hadoop.util."))


def first_exception(lines: Sequence[str]) -> str | None:
    """The first line after the header that is not a frame: the exception a record's stack starts with."""
    for line in lines[1:]:
        text = line.strip()
        if text and not text.startswith(("at ", "...", "Caused by:")):
            return text[:500]
    return None
