"""Evidence intervals: each HDFS/JVM event as the time span it measures, on its host.

Nearly everything is logged at the *end* of what it measures (lock released, flush done, pause over), so an event at
``ts`` with a duration ``d`` covers ``[ts - d, ts]``. Point evidence (scanner totals, reconcile warnings) is a
zero-width interval; reconcile warnings of one DataNode close together form one burst.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from correlator.core.events import (
    PIPELINE_STEPS,
    DatasetLockHeld,
    DatasetLockWait,
    DirectoryScanReconcile,
    DirectoryScanStats,
    DnWriteError,
    Event,
    HdfsClientSlow,
    HdfsRefusal,
    JvmPause,
    NameNodeLockHeld,
    RefusalKind,
    SlowIo,
)
from correlator.core.explain.kinds import EvidenceKind
from correlator.core.explain.knowledge import is_scanner_holder, is_scanner_stack

BURST_GAP_MS = 5_000
WRITE_PATH_CLASSES = ("FsDatasetImpl.", "FsVolumeImpl.", "BlockReceiver.", "DataXceiver.", "BlockPoolSlice.",
                      "ReplicaMap.", "FsVolumeList.", "BlockSender.", "BPOfferService.", "BPServiceActor.", "DataNode.")
"""Holders from the DataNode's own write path: their long holds are usually a slow disk or a pause underneath."""
REFUSED: Mapping[RefusalKind, EvidenceKind] = {
    "xceiver_limit": EvidenceKind.REFUSED_XCEIVER_LIMIT,
    "no_datanodes": EvidenceKind.REFUSED_NO_DATANODES,
    "pipeline_exhausted": EvidenceKind.REFUSED_NO_DATANODES,
    "safe_mode": EvidenceKind.REFUSED_SAFE_MODE,
    "directory_items": EvidenceKind.REFUSED_DIRECTORY_ITEMS,
    "space_quota": EvidenceKind.REFUSED_SPACE_QUOTA,
    "namespace_quota": EvidenceKind.REFUSED_NAMESPACE_QUOTA,
    "disk_full": EvidenceKind.REFUSED_DISK_FULL,
    "token_expired": EvidenceKind.REFUSED_TOKEN_EXPIRED,
}
"""The evidence each refusal is: the client running out of DataNodes to replace a failed one is no DataNode left."""


@dataclass(frozen=True, slots=True)
class Interval:
    """One piece of evidence: ``kind`` names what it shows (not yet which root cause)."""

    kind: EvidenceKind
    start_ms: int
    end_ms: int
    host: str
    role: str
    magnitude_ms: int
    summary: str
    source: Event
    count: int = 1
    """Warnings it stands for (a burst the ingest held together)."""

    @property
    def duration_ms(self) -> int:
        return self.end_ms - self.start_ms


PAUSE_KINDS: Mapping[str, EvidenceKind] = {"datanode": EvidenceKind.DN_PAUSE, "namenode": EvidenceKind.NN_PAUSE}
"""A JVM pause by the role that paused (any other: a TaskManager's)."""


def overlap_ms(a_start: int, a_end: int, b_start: int, b_end: int, skew_ms: int = 0) -> int:
    """Length of the overlap of two intervals when either may be shifted by up to ``skew_ms`` (clock skew)."""
    return max(0, min(a_end, b_end + skew_ms) - max(a_start, b_start - skew_ms))


def touches(a_start: int, a_end: int, b_start: int, b_end: int, skew_ms: int = 0) -> bool:
    """Whether two closed intervals meet within the skew margin (zero-width intervals included)."""
    return a_start <= b_end + skew_ms and b_start - skew_ms <= a_end


def is_write_path_holder(holder: str) -> bool:
    return holder.startswith(WRITE_PATH_CLASSES)


def interval_of(event: Event) -> Interval | None:
    """The interval an evidence event measures, or ``None`` for events that are not evidence by themselves."""
    ts = event.ts_ms
    if isinstance(event, DatasetLockHeld):
        scanner = is_scanner_holder(event.holder) or is_scanner_stack(event.stack)
        kind = EvidenceKind.SCANNER_LOCK if scanner else EvidenceKind.LOCK_HELD
        return Interval(kind, ts - event.held_ms, ts, event.host, event.role, event.held_ms,
                        f"dataset lock held {event.held_ms} ms by {event.holder}", event)
    if isinstance(event, DatasetLockWait):
        if is_scanner_holder(event.waiter) or is_scanner_stack(event.stack):
            frame = next((f for f in (event.waiter, *event.stack) if is_scanner_holder(f)), event.waiter)
            return Interval(EvidenceKind.SCANNER_WAIT, ts - event.wait_ms, ts, event.host, event.role, event.wait_ms,
                            f"the DirectoryScanner ({frame}) waited {event.wait_ms} ms for the dataset lock "
                            "(a victim of the holder, not the cause)", event)
        return Interval(EvidenceKind.LOCK_WAIT, ts - event.wait_ms, ts, event.host, event.role, event.wait_ms,
                        f"{event.waiter} waited {event.wait_ms} ms for the dataset lock", event)
    if isinstance(event, DnWriteError):
        if event.kind != "slow_nn_commands" or not event.duration_ms:
            return None
        return Interval(EvidenceKind.SLOW_COMMANDS, ts - event.duration_ms, ts, event.host, event.role,
                        event.duration_ms, f"took {event.duration_ms} ms to process commands from the NameNode", event)
    if isinstance(event, DirectoryScanStats):
        diffs = event.missing_meta + event.missing_block + event.missing_memory + event.mismatched
        if diffs == 0:
            return None
        return Interval(EvidenceKind.SCAN_STATS, ts, ts, event.host, event.role, diffs,
                        f"DirectoryScanner totals for {event.block_pool}: {event.total_blocks} blocks, "
                        f"{diffs} differences", event)
    if isinstance(event, DirectoryScanReconcile):
        if event.count > 1:
            return Interval(EvidenceKind.SCAN_RECONCILE, event.start_ts_ms or ts, ts, event.host, event.role,
                            event.count, f"{event.count} DirectoryScanner reconcile warnings", event, event.count)
        return Interval(EvidenceKind.SCAN_RECONCILE, ts, ts, event.host, event.role, 1,
                        f"DirectoryScanner reconcile: {event.action}", event)
    if isinstance(event, SlowIo):
        kind = EvidenceKind.SLOW_PIPELINE if event.kind in PIPELINE_STEPS else EvidenceKind.SLOW_DISK
        start = event.start_ts_ms if event.start_ts_ms is not None else ts - event.duration_ms
        if event.count > 1:
            return Interval(kind, start, ts, event.host, event.role, event.duration_ms,
                            f"{event.count} slow {event.kind.replace('_', ' ')} warnings, the longest "
                            f"{event.duration_ms} ms", event, event.count)
        return Interval(kind, start, ts, event.host, event.role, event.duration_ms,
                        f"slow {event.kind.replace('_', ' ')} took {event.duration_ms} ms", event)
    if isinstance(event, NameNodeLockHeld):
        return Interval(EvidenceKind.NN_LOCK, ts - event.held_ms, ts, event.host, event.role, event.held_ms,
                        f"FSNamesystem {event.kind} lock held {event.held_ms} ms"
                        + (f" ({event.op})" if event.op else ""), event)
    if isinstance(event, JvmPause):
        kind = PAUSE_KINDS.get(event.role, EvidenceKind.TM_PAUSE)
        what = "GC pause" if event.gc else "JVM/host pause (no GC)"
        return Interval(kind, ts - event.pause_ms, ts, event.host, event.role, event.pause_ms,
                        f"{what} of {event.pause_ms} ms", event)
    if isinstance(event, HdfsRefusal):
        return Interval(REFUSED[event.kind], ts, ts, event.host, event.role, event.limit or 0,
                        f"HDFS refused the write: {event.detail}", event)
    if isinstance(event, HdfsClientSlow):
        return Interval(EvidenceKind.CLIENT_SLOW, ts - event.duration_ms, ts, event.host, event.role,
                        event.duration_ms, f"HDFS client {event.op} took {event.duration_ms} ms", event)
    return None


def _runs(items: list[Interval], gap_ms: int) -> list[list[Interval]]:
    """Intervals of one host and kind that follow each other within ``gap_ms``, grouped in runs."""
    groups: dict[tuple[str, EvidenceKind], list[Interval]] = {}
    for iv in items:
        groups.setdefault((iv.host, iv.kind), []).append(iv)
    out: list[list[Interval]] = []
    for key in sorted(groups):
        run: list[Interval] = []
        end = 0
        for iv in sorted(groups[key], key=lambda i: (i.start_ms, i.end_ms)):
            if run and iv.start_ms - end > gap_ms:
                out.append(run)
                run = []
            end = iv.end_ms if not run else max(end, iv.end_ms)
            run.append(iv)
        if run:
            out.append(run)
    return out


def reconcile_bursts(points: list[Interval]) -> list[Interval]:
    """Merge reconcile warnings of one host that follow each other within a few seconds into one burst."""
    return [_burst(run) for run in _runs(points, BURST_GAP_MS)]


def _burst(run: list[Interval]) -> Interval:
    first, last = run[0], run[-1]
    count = sum(i.count for i in run)
    return Interval(EvidenceKind.SCAN_RECONCILE, first.start_ms, max(i.end_ms for i in run), first.host, first.role,
                    count, f"{count} DirectoryScanner reconcile warnings", first.source, count)


DURATION_FIELDS = ("held_ms", "wait_ms", "pause_ms", "duration_ms")
"""Field names by which an event says how long the thing it reports lasted; any event type that has one is a span."""


def logged_span(event: Event) -> tuple[int, int] | None:
    """``(start, end)`` of what an event measured, for known and future event types alike; ``None`` for a point."""
    known = interval_of(event)
    if known is not None:
        return (known.start_ms, known.end_ms) if known.end_ms > known.start_ms else None
    for name in DURATION_FIELDS:
        value = getattr(event, name, None)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return event.ts_ms - value, event.ts_ms
    return None


RUN_GAP_MS = 1_500
RUN_KINDS = (EvidenceKind.SLOW_DISK, EvidenceKind.SLOW_PIPELINE)


def slow_runs(intervals: list[Interval]) -> list[Interval]:
    """Back-to-back slow-IO warnings of one host and kind (one per packet) as one run: they stall one write together."""
    others = [iv for iv in intervals if iv.kind not in RUN_KINDS]
    return others + [_run(run) for run in _runs([iv for iv in intervals if iv.kind in RUN_KINDS], RUN_GAP_MS)]


def _run(run: list[Interval]) -> Interval:
    if len(run) == 1 and run[0].count == 1:
        return run[0]
    longest = max(run, key=lambda i: i.magnitude_ms)
    start, end = min(i.start_ms for i in run), max(i.end_ms for i in run)
    what = longest.kind.replace("_", " ")
    count = sum(i.count for i in run)
    return Interval(longest.kind, start, end, longest.host, longest.role, end - start,
                    f"{count} {what} warnings over {(end - start) / 1000:.1f} s (longest {longest.magnitude_ms} ms)",
                    longest.source, count)
