"""A log4j pattern the user names (``--layout``), compiled once into a reader that rewrites its lines into the
layout the parsers read: ``<stamp> LEVEL logger - message``.

Layouts that start with a date are recognised without help; this is for the rest (``%-5p [%t] %d{...} %c - %m%n``,
``%d{dd MMM yyyy HH:mm:ss,SSS}``, epoch stamps). Lines the pattern does not match (stack frames, banners) pass
unchanged, so multi-line records keep their shape. Conversion words: ``%d``/``%date`` with a SimpleDateFormat or
one of log4j's named formats, ``%p``/``%level``, ``%c``/``%logger``, ``%C``/``%class``, ``%m``/``%msg``/``%message``,
``%t``/``%thread``; the others (MDC, location, highlighting, padding) match whatever they printed. An unusable
pattern is refused when the run starts, with the reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone, tzinfo

_NAMED_DATES = {
    "ISO8601": "yyyy-MM-dd'T'HH:mm:ss,SSS", "ISO8601_BASIC": "yyyyMMdd'T'HHmmss,SSS",
    "ISO8601_OFFSET_DATE_TIME_HHMM": "yyyy-MM-dd'T'HH:mm:ss,SSSXX",
    "ISO8601_OFFSET_DATE_TIME_HHCMM": "yyyy-MM-dd'T'HH:mm:ss,SSSXXX",
    "ABSOLUTE": "HH:mm:ss,SSS", "DATE": "dd MMM yyyy HH:mm:ss,SSS", "DEFAULT": "yyyy-MM-dd HH:mm:ss,SSS",
    "COMPACT": "yyyyMMddHHmmssSSS",
}
_DATE_TOKENS = (
    ("yyyy", r"(?P<y>\d{4})"), ("yy", r"(?P<yy>\d\d)"), ("MMM", r"(?P<mon>[A-Za-z]{3})"), ("MM", r"(?P<mo>\d\d)"),
    ("dd", r"(?P<d>\d\d)"), ("HH", r"(?P<h>\d\d)"), ("M", r"(?P<mo>\d\d?)"), ("d", r"(?P<d>\d\d?)"),
    ("H", r"(?P<h>\d\d?)"), ("mm", r"(?P<mi>\d\d)"), ("ss", r"(?P<s>\d\d)"),
    ("SSSSSSSSS", r"(?P<ms>\d{3})\d{6}"), ("SSSSSS", r"(?P<ms>\d{3})\d{3}"), ("SSS", r"(?P<ms>\d{3})"),
    ("XXX", r"(?P<z>Z|[+-]\d\d:\d\d)"), ("XX", r"(?P<z>Z|[+-]\d{4})"), ("X", r"(?P<z>Z|[+-]\d\d)"),
    ("Z", r"(?P<z>[+-]\d{4})"), ("EEE", r"[A-Za-z]{3}"),
)
_MONTHS = {m: i for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov",
                                       "dec"), start=1)}
_WORDS = {
    "d": "date", "date": "date", "p": "level", "level": "level", "le": "level", "c": "logger", "logger": "logger",
    "lo": "logger", "C": "logger", "class": "logger", "m": "message", "msg": "message", "message": "message",
    "t": "thread", "thread": "thread", "tn": "thread", "threadName": "thread", "n": "end",
    "ex": "skip", "exception": "skip", "throwable": "skip", "xEx": "skip", "rEx": "skip", "wEx": "skip",
}
_GROUPS = {"level": r"(?P<level>[A-Za-z]+)", "logger": r"(?P<logger>[^\s\[\]()]+)", "thread": r"(?P<thread>.*?)",
           "message": r"(?P<message>.*)", "other": r".*?"}
_SPEC = re.compile(r"%(?P<mod>-?\d*(?:\.-?\d+)?)(?P<word>[A-Za-z]+|%)(?P<args>(?:\{[^{}]*(?:\{[^{}]*\}[^{}]*)*\})*)")


class PatternError(ValueError):
    """A ``--layout`` pattern this reader cannot follow; the message says which part."""


def _date_regex(fmt: str) -> str:
    out, i = [], 0
    while i < len(fmt):
        if fmt[i] == "'":
            end = fmt.find("'", i + 1)
            if end < 0:
                raise PatternError(f"unclosed quote in the date format {fmt!r}")
            out.append(re.escape(fmt[i + 1:end]) if end > i + 1 else "'")
            i = end + 1
            continue
        token = next((t for t, _ in _DATE_TOKENS if fmt.startswith(t, i)), None)
        if token is not None:
            out.append(dict(_DATE_TOKENS)[token])
            i += len(token)
        elif fmt[i].isalpha():
            raise PatternError(f"date format {fmt!r}: {fmt[i]!r} is not supported (use yyyy MM dd HH mm ss SSS)")
        else:
            out.append(re.escape(fmt[i]))
            i += 1
    regex = "".join(out)
    if "(?P<h>" not in regex or "(?P<mi>" not in regex:
        raise PatternError(f"date format {fmt!r} has no hours and minutes: its lines cannot be placed in time")
    return regex


def _date(args: str) -> str:
    first = args[1:args.index("}")] if args else "DEFAULT"
    if first in ("UNIX_MILLIS", "UNIX"):
        return rf"(?P<{'epoch_ms' if first == 'UNIX_MILLIS' else 'epoch_s'}>\d{{10,13}})"
    fmt = _NAMED_DATES.get(first, first)
    return _date_regex(fmt).replace("T", "[T ]") if first == "ISO8601" else _date_regex(fmt)


def _compile(pattern: str, seen: set[str]) -> str:
    out, at = [], 0
    for m in _SPEC.finditer(pattern):
        out.append(_literal(pattern[at:m.start()]))
        at = m.end()
        word, args = m["word"], m["args"]
        if word == "%":
            out.append("%")
            continue
        if word in ("highlight", "style", "black", "red", "green", "yellow", "blue", "magenta", "cyan", "white",
                    "notEmpty", "equals", "maxLen", "maxLength"):
            inner = args[1:args.index("}")] if args else ""
            out.append(_compile(inner, seen) if "%" in inner else "")
            continue
        kind = _WORDS.get(word, "other")
        if kind == "end":
            break
        if kind == "skip":
            continue
        if kind in seen and kind != "other":
            out.append(".*?")
            continue
        seen.add(kind)
        if m["mod"] and not m["mod"].startswith("-"):
            out.append(r"\s*")  # padded on the left
        out.append(_date(args) if kind == "date" else _GROUPS[kind])
        if m["mod"]:
            out.append(r"\s*")  # padded on the right, or cut
    out.append(_literal(pattern[at:].split("%n")[0]))
    return "".join(out)


def _literal(text: str) -> str:
    return r"\s+".join(re.escape(part) for part in text.split(" ")).replace(r"\s+\s+", r"\s+")


@dataclass(frozen=True, slots=True)
class TextLayout:
    """A compiled ``--layout``: :meth:`line` rewrites one line of it, :meth:`block` a block of whole lines."""

    pattern: str
    regex: re.Pattern[str]
    zone: tzinfo

    @classmethod
    def compile(cls, pattern: str, zone: tzinfo = timezone.utc) -> TextLayout:
        seen: set[str] = set()
        body = _compile(pattern, seen)
        missing = [k for k in ("date", "message") if k not in seen]
        if missing:
            raise PatternError(f"layout {pattern!r} has no {' and no '.join('%' + k[0] for k in missing)}: "
                               "its records cannot be read")
        try:
            return cls(pattern, re.compile(body + "$", re.S), zone)
        except re.error as exc:
            raise PatternError(f"layout {pattern!r} could not be compiled: {exc}") from exc

    def line(self, line: str) -> str:
        m = self.regex.match(line)
        if m is None:
            return line
        level = (m["level"] if "level" in self.regex.groupindex else "INFO").upper()
        logger = m["logger"] if "logger" in self.regex.groupindex and m["logger"] else "-"
        return f"{self._stamp(m)} {'WARN' if level == 'WARNING' else level:<5} {logger} - {m['message']}"

    def block(self, data: bytes) -> bytes:
        lines = data.decode("utf-8", errors="surrogateescape").split("\n")
        return "\n".join(self.line(ln) for ln in lines).encode("utf-8", errors="surrogateescape")

    def _stamp(self, m: re.Match[str]) -> str:
        names = self.regex.groupindex
        if "epoch_ms" in names or "epoch_s" in names:
            raw = m["epoch_ms"] if "epoch_ms" in names else m["epoch_s"]
            epoch = int(raw) if "epoch_ms" in names else int(raw) * 1000
            return _wall(datetime.fromtimestamp(epoch // 1000, self.zone), epoch % 1000)
        ms = m["ms"] if "ms" in names else "000"
        clock = f"{m['h']:0>2}:{m['mi']}:{m['s'] if 's' in names else '00'},{ms}"
        if "y" not in names and "yy" not in names:
            return clock
        year = m["y"] if "y" in names else f"20{m['yy']}"
        month = f"{_MONTHS.get(m['mon'].lower(), 0):02d}" if "mon" in names else f"{m['mo']:0>2}"
        if "z" in names and m["z"]:
            when = datetime.fromisoformat(f"{year}-{month}-{m['d']:0>2}T{clock.replace(',', '.')}"
                                          f"{_offset(m['z'])}")
            return _wall(when.astimezone(self.zone), int(ms))
        return f"{year}-{month}-{m['d']:0>2} {clock}"


def _offset(z: str) -> str:
    if z == "Z":
        return "+00:00"
    return z if ":" in z else f"{z[:3]}:{z[3:] or '00'}"


def _wall(when: datetime, ms: int) -> str:
    return f"{when:%Y-%m-%d %H:%M:%S},{ms:03d}"


__all__ = ["PatternError", "TextLayout"]
