"""Routine block writes are counted, not emitted: a DataNode's write lines decided at ingest, per source.

A busy DataNode logs ``Receiving <block> …`` when a write starts and the clienttrace ``op: HDFS_WRITE … bytes: …
duration(ns)`` when it ends — most of its lines. A replica copied in from another DataNode (re-replication, a
decommission, the balancer) ends with ``Received <block> … of size N`` instead: no clienttrace. A write that ended within ``slow_ms`` of its start is routine: it is
counted and its lines are never parsed. So is a longer one whose bytes needed the time: a write is a stall, not a big
block, when it moved fewer bytes than ``floor`` (bytes per ms) would in its time. What the correlation needs is
emitted (its lines handed back to be parsed):

* a write still open ``open_ms`` after it started (its ``Receiving`` line, when the source's clock passes that):
  the time a full block (``block_bytes``) takes at the floor rate, at least ``slow_ms``;
* the end of such a write, or of any write slower than both ``slow_ms`` and its bytes at the floor rate
  (clienttrace time − start, or its ``duration``);
* the first write line of each source (it tells the DataNode's ip:port, which links pipelines to hosts);
* at the end of the input, writes that never ended.

Time comes from the lines themselves (the ``yyyy-MM-dd HH:mm:ss,SSS`` stamp, read per source by ``write_stamps``); a
line whose stamp is not of that shape is simply handed back to be parsed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from correlator.core.ingest.records import Origin
from correlator.core.ingest.timestamps import LocalClock
from correlator.core.ingest.write_stamps import Stamps

FLOOR_BYTES_PER_MS = 32 * 1024 * 1024 // 1000
"""32 MiB/s. A healthy pipeline streams a block at its disks' and network's pace — a spinning disk writes 100-200 MB/s
sequentially, a 1 GbE link carries ~110 MB/s — so a write averaging under a third of the slowest of those is held up
by something, whatever its size; one above it is a big block, not a stall."""
CLOCK_STEP_BACK_MS = 30_000
"""A source's write lines are out of stamp order by a few seconds at most (threads stamp, then queue for the
appender); a jump back further than this is its clock stepping back, and the source's time restarts there — else
every write after the jump would look open since before it."""
BLOCK_BYTES = 128 * 1024 * 1024
"""``dfs.blocksize``'s default since Hadoop 2: the most one write moves."""
ASCII_SPACE = " \t\n\r\x0b\x0c"
"""What ``bytes.strip()`` strips: a number read from a decoded line and from its bytes must agree (``str.isdigit``
alone would also take digits such as "²", which ``int`` refuses)."""
OPEN_PHRASE = "Receiving BP-"
CLOSE_PHRASE = "op: HDFS_WRITE"
RECEIVED_PHRASE = "Received BP-"
"""The end of a replica transfer between DataNodes (its start is a ``Receiving`` line like a client's write): without
it every copy would stay open and read as a stalled write once ``open_ms`` passed."""


@dataclass(frozen=True, slots=True)
class WriteRules:
    """What makes a write evidence, decided once: the tracker and a block's plan judge by the same object."""

    slow_ms: int = 1000
    """A write that ended within this of its start is routine."""
    open_ms: int = 1000
    """A write still open this long after it started is evidence at once."""
    floor: int | None = None
    """Bytes per ms: a slower write that moved at least this many bytes per ms of its time is a big block, routine
    (``None``: none is excused)."""
    max_open: int = 0
    """Open writes kept per source; the oldest is emitted beyond it (0, for a plan: writes crossing the block's edges
    are the tracker's steps)."""
    seconds_per_pair: float = 0.25
    """A block whose write lines span more seconds than this per pair to judge has about as many second changes as
    pairs: bisecting for its runs of one second costs more than reading each pair's two stamps natively. Either way
    decides the same (a property test holds both at the extremes); only the cost differs."""

    @classmethod
    def of(cls, slow_ms: int, floor_bytes_per_ms: int, block_bytes: int, max_open: int) -> WriteRules:
        floor = max(1, floor_bytes_per_ms)
        return cls(slow_ms, max(slow_ms, -(-block_bytes // floor)), floor, max_open)


@dataclass(frozen=True, slots=True)
class Line:
    """A line handed back to be parsed as a record of its own."""

    text: str
    ref: str
    origin: Origin


Materialise = Callable[[int], tuple[str, str]]
"""The line at a byte offset of the block being read, with its ref."""


@dataclass(slots=True)
class SourceWrites:
    """One source's writes as the tracker keeps them (a block's walk hands it back to the tracker's steps)."""

    origin: Origin
    stamps: Stamps
    addressed: bool = False
    clock_ms: int | None = None
    open: dict[str, tuple[int, str | None, str | None, int]] = field(default_factory=dict)
    """block id → (start ms, Receiving line, ref, byte offset), oldest first; none emitted yet. Line and ref are
    ``None`` while the line still sits in the block being read (made only if needed, see ``Materialise``)."""
    stalled: dict[str, int] = field(default_factory=dict)
    """block id → start ms of writes whose ``Receiving`` was emitted because they stayed open too long."""
    touched_ms: int | None = None
    """Processing time of the source's last write line (streaming only)."""


class WriteTracker:
    """Open writes per source; returns the lines that must become events, counts the rest."""

    def __init__(self, clock: LocalClock, slow_ms: int = 1000, max_open: int = 5_000, *,
                 floor_bytes_per_ms: int = FLOOR_BYTES_PER_MS, block_bytes: int = BLOCK_BYTES) -> None:
        self.clock = clock
        self.rules = WriteRules.of(slow_ms, floor_bytes_per_ms, block_bytes, max_open)
        """How long a write may stay open before it is evidence (``open_ms``): a full block's time at the floor rate."""
        self.routine = 0
        self.steps_back = 0
        """Times a source's clock jumped back by more than ``CLOCK_STEP_BACK_MS`` (an NTP step, a DST fall-back)."""
        self._sources: dict[str, SourceWrites] = {}
        self._minutes: dict[str, int] = {}
        self._byte_minutes: dict[bytes, int] = {}

    def line(self, origin: Origin, text: str, ref: str, now_ms: int | None, out: list[Line],
             materialise: Materialise | None = None) -> None:
        """One write line (it holds ``OPEN_PHRASE`` or ``CLOSE_PHRASE``) of the source ``origin`` names; ``now_ms``
        processing time. ``materialise`` makes the text of open writes still in the block being read (their lines
        were not decoded)."""
        source = self._sources.get(origin.key)
        if source is None:
            source = self._sources[origin.key] = SourceWrites(origin, self.stamps(origin.key))
        source.touched_ms = now_ms
        ts = source.stamps.stamp_ms(text)
        block = _block_id(text)
        if ts is None or block is None:
            out.append(Line(text, ref, origin))
            return
        if not source.addressed:
            source.addressed = True
            out.append(Line(text, ref, origin))
            if OPEN_PHRASE in text:
                source.stalled[block] = ts
            return
        opening = OPEN_PHRASE in text
        self.decide(source, ts, block, opening, 0 if opening else _duration_ms(text), (text, ref, 0), out, materialise)

    def stamps(self, key: str) -> Stamps:
        """How the write lines of source ``key`` are timed: by its own clock, through the tracker's minute caches."""
        return Stamps(self.clock.of(key), self._minutes, self._byte_minutes)

    def addressed(self, key: str) -> SourceWrites | None:
        """The source, if its address is already known (then its routine writes can take the fast path)."""
        source = self._sources.get(key)
        return source if source is not None and source.addressed else None

    def decide(self, source: SourceWrites, ts: int, block: str, opening: bool, duration_ms: int,
               line: tuple[str | None, str | None, int], out: list[Line], materialise: Materialise | None) -> None:
        """One write line, already taken apart: ``line`` is (text, ref, byte offset), text and ref possibly ``None``."""
        self.observe(source, ts, out, materialise)
        if opening:
            if len(source.open) >= self.rules.max_open:
                self._emit_oldest(source, out, materialise)
            source.open[block] = (ts, *line)
            return
        opened = source.open.pop(block, None)
        if opened is not None:
            took = max(ts - opened[0], duration_ms)
            if took < self.rules.slow_ms or self._sized(took, line, materialise):
                self.routine += 1
                return
            out.append(_line(source, opened[1:], materialise))
        elif block not in source.stalled and (duration_ms < self.rules.slow_ms or self._sized(duration_ms, line, materialise)):
            self.routine += 1
            return
        source.stalled.pop(block, None)
        out.append(_line(source, line, materialise))

    def open_starts(self, source: SourceWrites) -> dict[str, int]:
        """Block id → start ms of the source's open writes, oldest first: what a block's plan starts from."""
        return {block: opened[0] for block, opened in source.open.items()}

    def planned(self, source: SourceWrites, routine: int, closed: list[str], now_ms: int | None) -> None:
        """A block's plan decided ``routine`` writes (counted here) at processing time ``now_ms``; the open writes it
        saw end fast (``WritePlan.closed``, among its routine ones) leave now."""
        self.routine += routine
        source.touched_ms = now_ms
        for block in closed:
            del source.open[block]

    def still_open(self, source: SourceWrites, writes: list[tuple[str, int, int]]) -> None:
        """Writes a block's plan left open at its end (``WritePlan.opened``: block id, start ms, byte offset), in line
        order; their text and ref are made by ``settle``."""
        for block, ts, at in writes:
            source.open[block] = (ts, None, None, at)

    def _sized(self, took_ms: int, line: tuple[str | None, str | None, int], materialise: Materialise | None) -> bool:
        """Whether a write that took ``took_ms`` (under ``open_ms``) moved bytes that needed that long at the floor
        rate: a big block, not a stall. The end line's text is made only here, for the few slow writes."""
        if took_ms >= self.rules.open_ms:
            return False
        text = line[0]
        if text is None:
            if materialise is None:
                return False
            text = materialise(line[2])[0]
        return took_ms * (self.rules.floor or 1) <= _bytes(text)

    def observe(self, source: SourceWrites, ts_ms: int, out: list[Line], materialise: Materialise | None = None, *,
                read: bool = True) -> None:
        """The source's log reached ``ts_ms``: writes open longer than ``open_ms`` by then are emitted. ``read``: the
        time is a line's stamp (a deadline the clock is known to have passed only moves it forward)."""
        if source.clock_ms is None or ts_ms > source.clock_ms:
            source.clock_ms = ts_ms
        elif read and ts_ms < source.clock_ms - CLOCK_STEP_BACK_MS:  # the clock stepped back: time runs from here
            source.clock_ms = ts_ms
            self.steps_back += 1
        while source.open:
            start = next(iter(source.open.values()))[0]
            if start + self.rules.open_ms > source.clock_ms:
                return
            self._emit_oldest(source, out, materialise)

    def settle(self, key: str, materialise: Materialise) -> None:
        """The block being read ends: open writes whose line is still in it get their text and ref now."""
        source = self._sources.get(key)
        if source is None:
            return
        for block, (ts, text, ref, at) in list(source.open.items()):
            if text is None:
                text, ref = materialise(at)
                source.open[block] = (ts, text, ref, at)

    def observe_key(self, key: str, ts_ms: int, out: list[Line], materialise: Materialise | None = None) -> None:
        source = self._sources.get(key)
        if source is not None:
            self.observe(source, ts_ms, out, materialise)

    def clock_ms(self, key: str) -> int | None:
        """The latest time a write line of this source carried (its log's progress)."""
        source = self._sources.get(key)
        return source.clock_ms if source is not None else None

    def restart_idle(self, now_ms: int) -> None:
        """After an outage open writes wait a full idle bound again (their end may be in a backlog not read yet)."""
        for source in self._sources.values():
            if source.touched_ms is not None:
                source.touched_ms = now_ms

    def flush_idle(self, now_ms: int, idle_ms: int, out: list[Line]) -> None:
        """A source silent for ``idle_ms`` of processing time may be stuck: its open writes are emitted."""
        for source in self._sources.values():
            if source.open and source.touched_ms is not None and now_ms - source.touched_ms > max(idle_ms, self.rules.slow_ms):
                while source.open:
                    self._emit_oldest(source, out)

    def flush_all(self, out: list[Line]) -> None:
        """End of the input: writes still open never ended as far as these logs tell."""
        for source in self._sources.values():
            while source.open:
                self._emit_oldest(source, out)

    def _emit_oldest(self, source: SourceWrites, out: list[Line], materialise: Materialise | None = None) -> None:
        block, (start, text, ref, at) = next(iter(source.open.items()))
        del source.open[block]
        if len(source.stalled) >= self.rules.max_open:
            del source.stalled[next(iter(source.stalled))]
        source.stalled[block] = start
        out.append(_line(source, (text, ref, at), materialise))

    def snapshot(self) -> dict[str, Any]:
        return {
            "routine": self.routine,
            "sources": {
                key: {"origin": s.origin.as_dict(), "addressed": s.addressed, "clock_ms": s.clock_ms,
                      "touched_ms": s.touched_ms,
                      "open": [[b, ts, text, ref] for b, (ts, text, ref, _) in s.open.items()],
                      "stalled": list(s.stalled.items())}
                for key, s in self._sources.items()
            },
        }

    def restore(self, data: Mapping[str, Any]) -> None:
        self.routine = int(data.get("routine", 0))
        for key, s in dict(data.get("sources", {})).items():
            self._sources[key] = SourceWrites(
                Origin.from_dict(s["origin"]), self.stamps(key), bool(s["addressed"]), s["clock_ms"],
                {str(b): (int(ts), str(text), str(ref), 0) for b, ts, text, ref in s["open"]},
                {str(b): int(ts) for b, ts in s["stalled"]}, s.get("touched_ms"),
            )


def _line(source: SourceWrites, line: tuple[str | None, str | None, int], materialise: Materialise | None) -> Line:
    text, ref, at = line
    if text is None or ref is None:
        text, ref = materialise(at) if materialise is not None else ("", "")
    return Line(text, ref, source.origin)


def block_at(data: bytes, start: int, end: int) -> str | None:
    """``_block_id`` of the line ``data[start:end]``."""
    at = data.find(b"blk_", start, end)
    if at < 0:
        return None
    stop = data.find(b"_", at + 4, end)
    return data[at:stop].decode("ascii", errors="replace") if stop > 0 else None


def duration_at(data: bytes, start: int, end: int) -> int:
    """``_duration_ms`` of the line ``data[start:end]``."""
    at = data.rfind(b"duration", start, end)
    if at < 0:
        return 0
    digits = data[data.find(b":", at, end) + 1:end].strip()
    return int(digits) // 1_000_000 if digits.isdigit() else 0


def bytes_at(data: bytes, start: int) -> int:
    """``_bytes`` of the line starting at ``start`` of ``data``, read from its bytes."""
    end = data.find(b"\n", start)
    end = len(data) if end < 0 else end
    at = data.find(b"bytes: ", start, end)
    if at < 0:
        return 0
    comma = data.find(b",", at, end)
    digits = data[at + 7:end if comma < 0 else comma].strip()
    return int(digits) if digits.isdigit() else 0


def _block_id(text: str) -> str | None:
    """``blk_<id>`` without the generation stamp (a recovery bumps it between start and end)."""
    at = text.find("blk_")
    if at < 0:
        return None
    end = text.find("_", at + 4)
    return text[at:end] if end > 0 else None


def _bytes(text: str) -> int:
    """The clienttrace's ``bytes: N``, or a received replica's ``of size N`` (0 if absent)."""
    at = text.find("bytes: ")
    if at < 0:
        at = text.rfind(" of size ")
        digits = text[at + 9:].strip(ASCII_SPACE) if at >= 0 else ""
        return int(digits) if digits.isascii() and digits.isdigit() else 0
    end = text.find(",", at)
    digits = text[at + 7:end if end > 0 else None].strip(ASCII_SPACE)
    return int(digits) if digits.isascii() and digits.isdigit() else 0


def _duration_ms(text: str) -> int:
    """The clienttrace's own duration (ns, labelled ``duration(ns)`` or, before 2.9, ``duration``); 0 if absent."""
    at = text.rfind("duration")
    if at < 0:
        return 0
    digits = text[text.find(":", at) + 1:].strip(ASCII_SPACE)
    return int(digits) // 1_000_000 if digits.isascii() and digits.isdigit() else 0
