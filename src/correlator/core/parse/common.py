"""Shared pieces of the parsers: the header of a record, the parse context, and identifier extraction."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from correlator.core.events import Event

_THREAD = r"\[(?:[^\[\]]|\[[^\]]*\])*\]"
HEADER = re.compile(
    r"(?:\[(?P<bts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d[,.]\d{3})\]\s+)?"
    r"(?:(?P<ts>\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[,.]\d{3})?|\d\d/\d\d/\d\d \d\d:\d\d:\d\d|\d\d:\d\d:\d\d[,.]\d{3})"
    r"\s+)?"
    r"(?:\d+\s+)?"
    rf"(?:{_THREAD}\s+)?"
    r"\[?(?P<level>TRACE|DEBUG|INFO|WARN|WARNING|ERROR|FATAL)\]?\s+"
    rf"(?:{_THREAD}\s+)?"
    r"(?P<logger>[A-Za-z_$][\w$.]*)"
    r"(?::(?:\d+|\?))?"
    r"(?:\s+\((?:[^()]|\([^()]*\))*\))?"
    r"\s*(?:\[[^\]]*\]\s*)?"
    r"(?:- |: ?)"
    r"(?P<msg>.*)",
    re.DOTALL,
)
_BARE_LOGGER = re.compile(r"(?P<logger>org\.apache\.hadoop\.[\w$.]+): (?P<msg>.*)", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Header:
    """The first line of a record, split into its fields; ``stamp`` is None for layouts without a timestamp."""

    stamp: str | None
    level: str | None
    logger: str
    message: str

    @property
    def segment(self) -> str:
        """The logger's class name, which survives abbreviation (``o.a.f.r.c.CheckpointCoordinator``)."""
        return self.logger.rsplit(".", 1)[-1]


def parse_header(line: str) -> Header | None:
    m = HEADER.match(line)
    if m is not None:
        return Header(m["ts"] or m["bts"], m["level"], m["logger"], m["msg"])
    m = _BARE_LOGGER.match(line)
    if m is not None:
        return Header(None, None, m["logger"], m["msg"])
    return None


@dataclass(slots=True)
class Emit:
    """Builds events that share the record's common fields; ``role`` may be overridden per event."""

    ts_ms: int
    cluster: str
    host: str
    role: str
    ref: str
    out: list[Event]

    def __call__(self, cls: type[Event], *, role: str | None = None, ts_ms: int | None = None, **fields: Any) -> None:
        self.out.append(
            cls(
                ts_ms=self.ts_ms if ts_ms is None else ts_ms,
                cluster=self.cluster,
                host=self.host,
                role=role or self.role,
                ref=self.ref,
                **fields,
            )
        )


JOB_ID = r"[0-9a-f]{32}"
_CHK_PATH = re.compile(r"/(" + JOB_ID + r")/chk-(\d+)(?:/|$)")
_DATANODE_INFO = re.compile(r"DatanodeInfoWithStorage\[([^,\]]+)")
_HOST_PORT = re.compile(r"([\w*.-]+:\d+)")
_FRAME_CALL = re.compile(r"([\w$.<>]+)\(")


def job_and_checkpoint_from_path(path: str | None) -> tuple[str | None, int | None]:
    """``…/<job-id>/chk-<n>/…`` names the job and the checkpoint even when the line itself does not."""
    if not path:
        return None, None
    m = _CHK_PATH.search(path)
    return (m[1], int(m[2])) if m else (None, None)


def datanodes(text: str) -> tuple[str, ...]:
    """Pipeline DataNode addresses (``ip:port``) from ``DatanodeInfoWithStorage[…]`` lists or plain 2.6 lists."""
    found = _DATANODE_INFO.findall(text)
    if not found:
        found = _HOST_PORT.findall(text)
    return tuple(found)


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


def ms(text: str | None) -> int | None:
    return None if text is None else int(text)
