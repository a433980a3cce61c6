"""The first line of a record, split into timestamp, level, logger and message, whatever the log4j/logback layout."""

from __future__ import annotations

import re
from dataclasses import dataclass

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
