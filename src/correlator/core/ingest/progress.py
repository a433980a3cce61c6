"""Each log source's own time, from every line (noise included), as cheap ``source_progress`` events.

Coverage ("does this log span the stuck write?") and watermarks must follow a log's lines, not only the few lines
that parse into findings. Per record this costs one slice and one compare: the stamp is parsed only when it enters
a new ``PROGRESS_EVERY_MS`` bucket (its first 18 characters change). A bucket change reports the first line of the
new bucket, and the last line of the previous one only when the new stamp is earlier (a clock stepped back): a
source's span is its earliest and latest time, which the later line already extends. So a source yields one event per
10 s of its log time, and a block read in bulk (a file's chunk, a batch of one source's records) passes on only
each source's earliest and latest (``thin``); the last line seen is reported when the input ends (``flush``). A
source whose role is not known yet keeps its earliest time pending until a parsed record tells the role.
"""

from __future__ import annotations

from typing import TypeVar

from correlator.core.events import Event, SourceProgress
from correlator.core.ingest.parse import SourceState
from correlator.core.ingest.records import Origin
from correlator.core.ingest.timestamps import LocalClock, TimestampError, to_epoch_ms

T = TypeVar("T")
PROGRESS_EVERY_MS = 10_000
_BUCKET = 18
_STAMP = 23


def local_stamp(line: str) -> bool:
    """A zone-less ``yyyy-MM-dd HH:mm:ss`` / ``yy/MM/dd HH:mm:ss`` stamp at the start (not GC logs' ISO stamps)."""
    return line[:2].isdigit() and ((line[4:5] == "-" and line[10:11] == " ") or (line[2:3] == "/" and line[8:9] == " "))


class Progress:
    def __init__(self, clock: LocalClock, default_cluster: str) -> None:
        self.clock = clock
        """The zone's clock: a stamp is read by the clock of its record's source (``clock.of``)."""
        self.default_cluster = default_cluster

    def line(self, line: str, origin: Origin, state: SourceState, ref: str, out: list[Event]) -> None:
        if not local_stamp(line):
            return
        stamp = line[:_STAMP]
        if stamp[:_BUCKET] == state.progress_bucket:
            state.progress_last = stamp
            return
        last = state.progress_last
        if last is not None and last != state.progress_sent and stamp < last:
            self._report(last, origin, state, ref, out)
        state.progress_bucket = stamp[:_BUCKET]
        state.progress_last = stamp
        self._report(stamp, origin, state, ref, out)

    def role_known(self, origin: Origin, state: SourceState, ref: str, out: list[Event]) -> None:
        """A parsed record told the source's role: report the time kept pending until now."""
        if state.progress_pending is not None and (origin.role or state.role):
            self._event(state.progress_pending, origin, state, ref, out)
            state.progress_pending = None

    def flush(self, origin: Origin, state: SourceState, ref: str, out: list[Event]) -> None:
        """End of input: the source's last line, if not reported yet."""
        if state.progress_last is not None and state.progress_last != state.progress_sent:
            self._report(state.progress_last, origin, state, ref, out)
        self.role_known(origin, state, ref, out)

    def _report(self, stamp: str, origin: Origin, state: SourceState, ref: str, out: list[Event]) -> None:
        state.progress_sent = stamp
        try:
            ts_ms = to_epoch_ms(stamp, self.clock.of(origin.key))
        except TimestampError:
            return
        if not (origin.role or state.role):
            pending = state.progress_pending
            state.progress_pending = ts_ms if pending is None else min(pending, ts_ms)
            return
        self.role_known(origin, state, ref, out)
        self._event(ts_ms, origin, state, ref, out)

    def _event(self, ts_ms: int, origin: Origin, state: SourceState, ref: str, out: list[Event]) -> None:
        out.append(SourceProgress(ts_ms=ts_ms, cluster=origin.cluster or self.default_cluster,
                                  host=origin.host or state.host or "unknown",
                                  role=origin.role or state.role or "unknown", ref=ref,
                                  host_guessed=origin.host_guessed))


def thin(out: list[T]) -> list[T]:
    """A block's outputs with each source's progress reports cut to its earliest and its latest.

    What a source's progress tells the engine is its span (the earliest and the latest time: coverage) and its latest
    time (the watermark); the reports between say nothing beyond those two once the block is read, and a block's
    outputs reach the engine together. A quiet log (a lab DataNode, a TaskManager) writes a few lines per 10 s, so
    a report per 10 s would be a large share of the events its log makes.
    """
    first: dict[tuple[str, str, str], tuple[int, int]] = {}
    last: dict[tuple[str, str, str], tuple[int, int]] = {}
    reports = 0
    for i, item in enumerate(out):
        if isinstance(item, SourceProgress):
            reports += 1
            key, at = (item.cluster, item.host, item.role), (item.ts_ms, i)
            if key not in first or item.ts_ms < first[key][0]:
                first[key] = at
            if key not in last or item.ts_ms >= last[key][0]:
                last[key] = at
    keep = {i for _, i in first.values()} | {i for _, i in last.values()}
    if len(keep) == reports:
        return out
    return [item for i, item in enumerate(out) if not isinstance(item, SourceProgress) or i in keep]
