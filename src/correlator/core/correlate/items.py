"""A verdict's evidence: the lines it cites, each said in one sentence, in time order and once each."""

from __future__ import annotations

from collections.abc import Sequence

from correlator.core.correlate.cases import CaseSummary
from correlator.core.correlate.evidence import Interval, logged_span
from correlator.core.correlate.pipeline import Pipeline, Stall
from correlator.core.correlate.ranking import Candidate
from correlator.core.events import (
    CheckpointDeclined,
    CheckpointFailed,
    CheckpointSpan,
    Event,
    HdfsClientSlow,
    TaskStatus,
)
from correlator.core.explain.verdict import EvidenceItem

SPAN_PHASES = (("maxStartDelayMs", "start delay"), ("maxAlignmentMs", "alignment"), ("maxSyncMs", "sync part"),
               ("maxAsyncMs", "async part"), ("maxCheckpointStartDelayMs", "start delay"),
               ("maxAlignmentDurationMs", "alignment"), ("maxSyncCheckpointDurationMs", "sync part"),
               ("maxAsyncCheckpointDurationMs", "async part"))
"""Span attribute → its words: the REST statistics' names, then those of the 2.x trace span."""


def item(e: Event, summary: str, span: tuple[int, int] | None = None) -> EvidenceItem:
    """One line of evidence; ``span``: what it measured, when that is not what the event itself tells."""
    start, end = span or logged_span(e) or (None, None)
    return EvidenceItem(e.type, e.ts_ms, e.host, e.role, summary, e.ref, start, end)


def case_line(e: Event) -> str:
    """One line about a Flink case event, with the ids and the first words of its cause."""
    chk = getattr(e, "checkpoint_id", None)
    if isinstance(e, CheckpointFailed):
        return f"checkpoint {chk} failed ({e.kind})" + (f": {e.message[:160]}" if e.message else "")
    if isinstance(e, CheckpointDeclined):
        return f"checkpoint {chk} declined" + (f": {e.reason[:160]}" if e.reason else "")
    if isinstance(e, TaskStatus):
        return f"{e.task or 'task'} switched from {e.from_state} to {e.to_state}"
    return f"checkpoint {chk} " + e.type.removeprefix("checkpoint_").replace("_", " ")


def span_line(span: CheckpointSpan) -> str:
    """A checkpoint span as evidence: how far acknowledgements got, who never acknowledged, the longest phases."""
    phases = dict(span.phases)
    longest = ", ".join(f"{label} {phases[key]} ms" for key, label in SPAN_PHASES if key in phases)
    acked = (f"last acknowledgement {span.end_ms - span.start_ms} ms after the trigger" if span.end_ms > span.start_ms
             else "no acknowledgement")
    return (f"Flink's span of checkpoint {span.checkpoint_id} ({span.status}): {acked}, "
            f"{span.full_size or 0} bytes of state acknowledged"
            + (f"; never acknowledged by {', '.join(span.waiting_on)}" if span.waiting_on else "")
            + (f"; longest {longest}" if longest else ""))


def evidence_items(s: CaseSummary, best: Candidate | None, client: list[HdfsClientSlow], stalls: list[Stall],
                   pipe: Pipeline, victims: list[Interval], found: Sequence[EvidenceItem] = (),
                   max_evidence: int = 12) -> tuple[EvidenceItem, ...]:
    """The case's own lines, the write's, the leading cause's and its victims', and ``found``: the lines the
    detectors' findings cite (a lost TaskManager, the completions that show a growth)."""
    items: list[EvidenceItem] = []
    for traced in (e for e in s.refs if isinstance(e, CheckpointSpan)):  # the anatomy, whichever cause it confirms
        items.append(item(traced, span_line(traced)))
    items += found
    for e in s.refs[:4]:
        items.append(item(e, case_line(e)))
    for c in client[:2]:
        items.append(item(c, f"HDFS client {c.op} took {c.duration_ms} ms"))
    for a in pipe.allocations[:2]:
        items.append(item(a, f"NameNode allocated {a.block} on {', '.join(a.replicas)} for {a.path}"))
    for ce in pipe.client_errors[:3]:
        items.append(item(ce, f"HDFS client {ce.kind.replace('_', ' ')}"
                          + (f" {ce.datanode}" if ce.datanode else "") + (f": {ce.exception[:160]}" if ce.exception
                                                                          else "")))
    for de in pipe.dn_errors[:2]:
        items.append(item(de, f"DataNode {de.kind.replace('_', ' ')}"
                          + (f" from {de.peer}" if de.peer else "") + (f": {de.exception[:160]}" if de.exception
                                                                      else "")))
    for st in stalls[:2]:
        waited = "never finished" if st.finished_ms is None else \
            f"finished {st.finished_ms - st.receiving.ts_ms} ms later"
        span = None if st.finished_ms is None else (st.receiving.ts_ms, st.finished_ms)
        items.append(item(st.receiving, f"Receiving {st.receiving.block}: {waited}", span))
    if best is not None:
        for scored in best.scored[: max_evidence // 2]:
            iv = scored.interval
            items.append(item(iv.source, iv.summary, (iv.start_ms, iv.end_ms) if iv.end_ms > iv.start_ms else None))
    for v in victims:
        items.append(item(v.source, v.summary))
    return _once(items)


def _once(items: list[EvidenceItem]) -> tuple[EvidenceItem, ...]:
    """In time order, each line once (the first of its sentences by that order)."""
    seen: set[tuple[str, int, str, str]] = set()
    unique = []
    for it in sorted(items, key=lambda i: (i.at_ms, i.type, i.host, i.ref, i.summary)):
        key = (it.type, it.at_ms, it.host, it.ref)
        if key not in seen:
            seen.add(key)
            unique.append(it)
    return tuple(unique)
