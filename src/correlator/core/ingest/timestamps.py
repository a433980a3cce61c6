"""Log timestamps to UTC epoch milliseconds, one way for every parser: :func:`to_epoch_ms`.

An explicit offset (``Z``, ``+02:00``) wins; otherwise the stamp is wall time in the source's zone (a
:class:`LocalClock`), on a known date when the stamp is only a time of day. :func:`local_date` says which date a
stamp carries, so later time-only stamps of the same source can be dated.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

MIN_YEAR = 1990
MAX_YEAR = 2100
"""Outside these years a timestamp is taken as corrupt (a zeroed clock, a typo), not as the time of an event."""

_LOCAL = re.compile(
    r"(?:(?P<y>\d{4})-(?P<mo>\d\d)-(?P<d>\d\d)[ T]|(?P<yy>\d\d)/(?P<mo2>\d\d)/(?P<d2>\d\d) )?"
    r"(?P<h>\d\d):(?P<mi>\d\d):(?P<s>\d\d)(?:[,.](?P<ms>\d{3}))?"
)
_OFFSET = re.compile(
    r"(?P<y>\d{4})-(?P<mo>\d\d)-(?P<d>\d\d)[T ](?P<h>\d\d):(?P<mi>\d\d):(?P<s>\d\d)(?:[.,](?P<ms>\d{1,9}))?"
    r"(?:(?P<z>Z)|(?P<sign>[+-])(?P<oh>\d\d):?(?P<om>\d\d))?"
)
_ISO_TAIL = frozenset("Z+-.,0123456789")
"""What may follow a wall-clock match in an ISO stamp (an offset, more fraction digits): read those as ISO."""


class TimestampError(ValueError):
    """A timestamp that is malformed, out of the plausible years, or lacks a date that cannot be inferred."""


FOLD_TOLERANCE_MS = 10 * 60 * 1000
"""How far a source's stamps may run behind its newest before a wall time in the repeated DST hour is read as its
second pass: logs stay in order to within seconds; the fall-back jumps them back a whole hour."""


class LocalClock:
    """One source's wall clock in a zone: converts its zone-less stamps; caches the UTC epoch of each minute (logs
    are dense).

    The hour a DST fall-back repeats is ambiguous on the wall; a source's own order settles it: its log moves
    forward, so a wall time in that hour lying well behind the newest time the same source reached is the second
    pass. The source is fixed when the clock is made: ``LocalClock(tz)`` reads for the source ``""``, and :meth:`of`
    gives another source's clock of the same zone. The clocks of a zone share its minute cache, each source's newest
    time and :attr:`guessed`: the stamps in the repeated hour and in the hour a spring-forward skips, for the run to
    say.
    """

    __slots__ = ("_minutes", "_newest", "_source", "guessed", "zone")

    def __init__(self, tz: str) -> None:
        self.zone = ZoneInfo(tz)
        self._source = ""
        self.guessed: dict[str, int] = {}
        self._minutes: dict[tuple[int, int, int, int, int], tuple[int, int]] = {}
        self._newest: dict[str, int] = {}

    @property
    def source(self) -> str:
        """The source whose stamps this clock reads (whose newest time settles a repeated hour)."""
        return self._source

    def of(self, source: str) -> LocalClock:
        """The clock of ``source``: this zone's, sharing its minute cache, newest times and counts."""
        clock = LocalClock.__new__(LocalClock)
        clock.zone, clock.guessed, clock._minutes, clock._newest = self.zone, self.guessed, self._minutes, self._newest
        clock._source = source
        return clock

    def reading(self, y: int, mo: int, d: int, h: int, mi: int, s: int, ms: int) -> tuple[int, bool]:
        """The wall time's UTC epoch ms, and whether it names one instant: False in an hour a DST change repeats or
        skips, where the reading may depend on the source's order (a cache keyed by the wall time must not keep it)."""
        if not MIN_YEAR <= y <= MAX_YEAR:
            raise TimestampError(f"year {y} outside {MIN_YEAR}..{MAX_YEAR}")
        key = (y, mo, d, h, mi)
        bases = self._minutes.get(key)
        if bases is None:
            try:
                first = datetime(y, mo, d, h, mi, tzinfo=self.zone)
            except ValueError as exc:
                raise TimestampError(str(exc)) from exc
            bases = (int(first.timestamp()) * 1000, int(first.replace(fold=1).timestamp()) * 1000)
            if len(self._minutes) > 4096:
                self._minutes.clear()
            self._minutes[key] = bases
        if s > 60 or ms > 999:
            raise TimestampError("seconds or milliseconds out of range")
        first_ms, second_ms = bases[0] + s * 1000 + ms, bases[1] + s * 1000 + ms
        newest = self._newest.get(self._source)
        if first_ms == second_ms:
            result = first_ms
        elif second_ms < first_ms:  # a wall time the spring-forward skipped: read with the offset before it
            result = first_ms
            self.guessed["dst_gap"] = self.guessed.get("dst_gap", 0) + 1
        else:
            later = newest is not None and first_ms < newest - FOLD_TOLERANCE_MS
            result = second_ms if later else first_ms
            self.guessed["dst_repeated_hour"] = self.guessed.get("dst_repeated_hour", 0) + 1
        if newest is None or result > newest:
            self._newest[self._source] = result
        return result, first_ms == second_ms


def local_date(stamp: str) -> tuple[int, int, int] | None:
    """The calendar date written in a local stamp, if it has one (to date later time-only stamps)."""
    m = _LOCAL.match(stamp)
    if m is None:
        return None
    if m["y"]:
        return int(m["y"]), int(m["mo"]), int(m["d"])
    if m["yy"]:
        return 2000 + int(m["yy"]), int(m["mo2"]), int(m["d2"])
    return None


def to_epoch_ms(stamp: str, clock: LocalClock | None = None, *, date: tuple[int, int, int] | None = None) -> int:
    """``stamp`` → UTC epoch ms. Understood: ISO 8601 with an offset or ``Z`` (GC logs, shippers' ``@timestamp``);
    without one, ``yyyy-MM-dd HH:mm:ss,SSS`` (also ``T``, ``.SSS``, 1–9 fraction digits), ``yy/MM/dd HH:mm:ss`` or a
    time of day on ``date``, all read in ``clock``'s zone. Without a clock a zone-less stamp is an error."""
    return read_stamp(stamp, clock, date=date)[0]


def read_stamp(stamp: str, clock: LocalClock | None = None, *,
               date: tuple[int, int, int] | None = None) -> tuple[int, bool]:
    """``to_epoch_ms``, and whether the stamp names one instant whatever its source read before: False for a wall
    time in an hour a DST change repeats or skips (see :meth:`LocalClock.reading`)."""
    local = _LOCAL.match(stamp) if clock is not None else None
    if local is not None and clock is not None and stamp[local.end():local.end() + 1] not in _ISO_TAIL:
        return _wall_ms(local, clock, date)
    iso = _OFFSET.match(stamp)
    if iso is not None:
        return _iso_ms(iso, clock)
    if local is None or clock is None:
        raise TimestampError(f"unrecognised timestamp {stamp[:40]!r}")
    return _wall_ms(local, clock, date)


def _iso_ms(m: re.Match[str], clock: LocalClock | None) -> tuple[int, bool]:
    y = int(m["y"])
    if not MIN_YEAR <= y <= MAX_YEAR:
        raise TimestampError(f"year {y} outside {MIN_YEAR}..{MAX_YEAR}")
    parts = (y, int(m["mo"]), int(m["d"]), int(m["h"]), int(m["mi"]), int(m["s"]))
    ms = int((m["ms"] or "0").ljust(3, "0")[:3])
    if m["z"] or m["sign"]:
        offset = timedelta(0)
        if m["sign"]:
            offset = timedelta(hours=int(m["oh"]), minutes=int(m["om"]))
            if m["sign"] == "-":
                offset = -offset
        try:
            return int(datetime(*parts, tzinfo=timezone(offset)).timestamp()) * 1000 + ms, True
        except ValueError as exc:
            raise TimestampError(str(exc)) from exc
    if clock is None:
        raise TimestampError("timestamp without offset")
    return clock.reading(*parts, ms)


def _wall_ms(m: re.Match[str], clock: LocalClock, date: tuple[int, int, int] | None) -> tuple[int, bool]:
    if m["y"]:
        y, mo, d = int(m["y"]), int(m["mo"]), int(m["d"])
    elif m["yy"]:
        y, mo, d = 2000 + int(m["yy"]), int(m["mo2"]), int(m["d2"])
    elif date is not None:
        y, mo, d = date
    else:
        raise TimestampError("time of day without a date, and no date known for this source")
    return clock.reading(y, mo, d, int(m["h"]), int(m["mi"]), int(m["s"]), int(m["ms"] or 0))
