"""Where a failed checkpoint's time went, from what the logs show of its phases.

A checkpoint's tasks write their state to HDFS once their barrier has arrived and their synchronous snapshot is
done: the NameNode allocates a block under ``chk-N`` for each file. When the NameNode's log covers an expired
checkpoint and shows no block for it, while it does for the job's checkpoints before, no task began its upload: the
time went before the upload — barriers waiting behind buffered records (backpressure) or the synchronous part of the
snapshot — and storage is not to blame. Flink's span of the failed checkpoint (1.19+, when a trace reporter logs it)
says how far acknowledgements got.
"""

from __future__ import annotations

from dataclasses import dataclass

from correlator.core.correlate.cases import CaseSummary, path_ids
from correlator.core.correlate.ranking import Window
from correlator.core.correlate.watermarks import SourceClock
from correlator.core.events import BlockAllocated, CheckpointSpan, Event

EARLIER_SHOWN = 3


@dataclass(frozen=True, slots=True)
class HeldBeforeUpload:
    earlier: tuple[int, ...]
    """The job's last checkpoints the NameNode allocated blocks for (most recent last)."""
    span: CheckpointSpan | None
    """Flink's span of the failed checkpoint, when a trace reporter logged it."""

    @property
    def last_ack_ms(self) -> int | None:
        return None if self.span is None else self.span.end_ms - self.span.start_ms


def held_before_upload(summary: CaseSummary, window: Window, evidence: tuple[Event, ...], job_id: str | None,
                       checkpoint_id: int | None, sources: dict[tuple[str, str], SourceClock],
                       skew_ms: int) -> HeldBeforeUpload | None:
    """An expired checkpoint no task began to upload, when the NameNode's log shows it; else ``None``."""
    if summary.kind != "expired" or job_id is None or checkpoint_id is None:
        return None
    if not any(role == "namenode" and clock.first_ts_ms <= window.start_ms and clock.max_ts_ms >= window.end_ms
               for (_, role), clock in sources.items()):
        return None  # (a span alone does not say the upload never began: a stuck write also leaves tasks waiting)
    mine: set[int] = set()
    for e in evidence:
        if isinstance(e, BlockAllocated) and e.ts_ms <= window.end_ms + skew_ms:
            ids = path_ids(e.path)
            if ids is not None and ids[0] == job_id:
                mine.add(ids[1])
    span = next((e for e in summary.refs if isinstance(e, CheckpointSpan) and e.checkpoint_id == checkpoint_id
                 and e.waiting_on), None) or next(
        (e for e in summary.refs if isinstance(e, CheckpointSpan) and e.checkpoint_id == checkpoint_id), None)
    if checkpoint_id in mine:
        return None
    earlier = sorted(c for c in mine if c < checkpoint_id)[-EARLIER_SHOWN:]
    if not earlier and (span is None or not span.waiting_on):
        return None  # nothing shows the job's checkpoints write files at all (state kept inline, or no NN lines)
    return HeldBeforeUpload(tuple(earlier), span)
