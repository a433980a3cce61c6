"""When a DataNode's write lines happened: the stamp each starts with, read per source with a per-minute cache.

A busy DataNode writes thousands of lines a minute, all stamped ``yyyy-MM-dd HH:mm:ss,SSS``: a line's time is its
minute's epoch plus its seconds and milliseconds. A minute is read by the source's own clock and kept for every source,
unless a DST change repeats or skips it (then its reading depends on the source's order, and is read each time).
"""

from __future__ import annotations

from correlator.core.ingest.timestamps import LocalClock, TimestampError, read_stamp


class Stamps:
    """How one source's write lines are timed: the ``yyyy-MM-dd HH:mm:ss,SSS`` stamp they start with, read with a
    per-minute cache. The caches are the tracker's, shared by its sources: a minute is kept there only when it names
    one instant; one in a repeated or skipped DST hour is read each time by the source's own clock."""

    __slots__ = ("_byte_minutes", "_minutes", "clock")

    def __init__(self, clock: LocalClock, minutes: dict[str, int], byte_minutes: dict[bytes, int]) -> None:
        self.clock = clock
        self._minutes = minutes
        self._byte_minutes = byte_minutes

    def stamp_ms(self, text: str) -> int | None:
        """The time of a line that starts with a stamp of that shape, else None."""
        if len(text) < 23 or text[19] not in ",." or text[10] != " ":
            return None
        minute = text[:16]
        base = self._minutes.get(minute)
        if base is None:
            try:
                base, sure = read_stamp(minute + ":00", self.clock)
            except TimestampError:
                return None
            if len(self._minutes) > 4096:
                self._minutes.clear()
            if sure:  # a minute of a repeated DST hour depends on the source's order
                self._minutes[minute] = base
        seconds, millis = text[17:19], text[20:23]
        if not (seconds.isdigit() and millis.isdigit()):
            return None
        return base + int(seconds) * 1000 + int(millis)

    def stamp_at(self, data: bytes, at: int) -> int | None:
        """``stamp_ms`` of the line starting at byte ``at`` of ``data``, without decoding the line."""
        if len(data) < at + 23 or data[at + 10] != 32 or data[at + 19] not in (44, 46):  # " ", "," or "."
            return None
        minute = data[at:at + 16]
        base = self._byte_minutes.get(minute)
        if base is None:
            try:
                base, sure = read_stamp(minute.decode("ascii") + ":00", self.clock)
            except (TimestampError, UnicodeDecodeError):
                return None
            if len(self._byte_minutes) > 4096:
                self._byte_minutes.clear()
            if sure:
                self._byte_minutes[minute] = base
        try:
            seconds, millis = int(data[at + 17:at + 19]), int(data[at + 20:at + 23])
        except ValueError:
            return None
        if seconds < 0 or millis < 0:
            return None
        return base + seconds * 1000 + millis

    def second_ms_at(self, data: bytes, at: int) -> int | None:
        """When the second of the line at ``at`` began, if its minute's time is already known for sure (read before,
        not in a repeated DST hour): every line that begins with the same 19 bytes is ``stamp_at`` that plus its
        milliseconds, whatever the clock learns in between."""
        base = self._byte_minutes.get(data[at:at + 16])
        seconds = data[at + 17:at + 19]
        if base is None or len(seconds) != 2 or not seconds.isdigit():
            return None
        return base + int(seconds) * 1000
