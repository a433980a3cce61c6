"""Deciding one case: link the write to DataNodes, rank the evidence, judge coverage, and write the verdict."""

from __future__ import annotations

import re
from dataclasses import dataclass

from correlator.core.cases import CaseSummary, path_ids
from correlator.core.events import (
    BlockWrite,
    CheckpointDeclined,
    CheckpointFailed,
    Event,
    HdfsClientSlow,
    TaskStatus,
    iso_ms,
)
from correlator.core.evidence import Interval, interval_of, reconcile_bursts, touches
from correlator.core.knowledge import remediation, scanner_issue
from correlator.core.ranking import MIN_SCORE, Candidate, Window, rank
from correlator.core.verdict import (
    Alternative,
    EvidenceItem,
    Failure,
    Recurrence,
    RootCause,
    SourceCoverage,
    Verdict,
    make_verdict_id,
)
from correlator.core.watermarks import SourceClock

BLOCK_ID = re.compile(r"blk_(-?\d+)")
DEFAULT_WINDOW_MS = 60_000


def block_id(block: str | None) -> str | None:
    m = BLOCK_ID.search(block or "")
    return m.group(1) if m else None


def ip_of(address: str) -> str:
    return address.lstrip("/").rsplit(":", 1)[0]


@dataclass(frozen=True, slots=True)
class Context:
    """Everything the engine knows that one decision needs, already cut at the decision time."""

    cluster: str
    job_id: str | None
    checkpoint_id: int | None
    summary: CaseSummary
    evidence: tuple[Event, ...]
    ip_hosts: dict[str, str]
    sources: dict[tuple[str, str], SourceClock]
    versions: dict[tuple[str, str], str]
    decided_at_ms: int
    skew_ms: int
    min_confidence: float = MIN_SCORE
    max_evidence: int = 12


def window_of(s: CaseSummary) -> Window:
    end = s.write_end_ms if s.write_end_ms is not None else s.failed_at_ms
    if s.started_at_ms is not None:
        start = s.started_at_ms
    else:
        start = s.failed_at_ms - (s.timeout_ms or DEFAULT_WINDOW_MS)
    return Window(min(start, end), max(start, end), s.timeout_ms)


def linked_client_slow(ctx: Context, window: Window) -> list[HdfsClientSlow]:
    """Client slow-ack lines of this write: by checkpoint path, else by TaskManager host and time."""
    out = []
    for e in ctx.evidence:
        if not isinstance(e, HdfsClientSlow):
            continue
        ids = path_ids(e.path)
        if ids is not None:
            if ids[1] == ctx.checkpoint_id and (ctx.job_id is None or ids[0] == ctx.job_id):
                out.append(e)
        elif (not ctx.summary.hosts or e.host in ctx.summary.hosts) and touches(
            e.ts_ms - e.duration_ms, e.ts_ms, window.start_ms, window.end_ms, ctx.skew_ms
        ):
            out.append(e)
    return out


@dataclass(frozen=True, slots=True)
class Stall:
    """A block write a DataNode received at the start of the stuck write and finished late (or not at all)."""

    receiving: BlockWrite
    finished_ms: int | None


def pipeline_hosts(
    ctx: Context, window: Window, client: list[HdfsClientSlow]
) -> tuple[frozenset[str], str, list[Stall]]:
    """DataNodes of the write and how we know: client pipeline, block id, or stalled block writes."""
    hosts: set[str] = set()
    how: list[str] = []
    blocks = {block_id(c.block) for c in client} - {None}
    for c in client:
        for dn in c.datanodes:
            hosts.add(ctx.ip_hosts.get(ip_of(dn), ip_of(dn)))
    if hosts:
        how.append("the HDFS client's write pipeline")
    writes = [e for e in ctx.evidence if isinstance(e, BlockWrite) and e.role == "datanode"]
    by_block = {e.host for e in writes if block_id(e.block) in blocks}
    if by_block - hosts:
        how.append("DataNode lines for the same block")
    hosts |= by_block
    stall_ms = min(window.timeout_ms or window.duration_ms, window.duration_ms) // 2
    finished: dict[tuple[str, str | None], int] = {}
    for e in writes:
        if e.duration_ms is not None:
            key = (e.host, block_id(e.block))
            finished[key] = min(finished.get(key, e.ts_ms), e.ts_ms)
    stalls: list[Stall] = []
    for e in writes:
        if e.duration_ms is None and window.start_ms - ctx.skew_ms <= e.ts_ms <= window.start_ms + stall_ms:
            done = finished.get((e.host, block_id(e.block)))
            if done is None or done - e.ts_ms >= max(stall_ms, 1000):
                stalls.append(Stall(e, done))
    stalled = {st.receiving.host for st in stalls}
    if stalled - hosts:
        how.append("block writes that stalled on the DataNode")
    hosts |= stalled
    return frozenset(hosts), " and ".join(how), stalls


def coverage(
    ctx: Context, window: Window, pipeline: frozenset[str]
) -> tuple[list[SourceCoverage], list[SourceCoverage]]:
    """Sources whose logs span the stuck write (covered) and the ones that do not or are absent (missing)."""
    covered, missing = [], []
    for (host, role), clock in sorted(ctx.sources.items()):
        if clock.first_ts_ms > window.start_ms + ctx.skew_ms:
            missing.append(SourceCoverage(host, role, "log starts after the write began"))
        elif clock.max_ts_ms < window.end_ms - ctx.skew_ms:
            missing.append(SourceCoverage(host, role, "log ends before the write ended"))
        else:
            covered.append(SourceCoverage(host, role))
    known = {host for host, role in ctx.sources if role == "datanode"}
    for host in sorted(pipeline - known):
        missing.append(SourceCoverage(host, "datanode", "no log from this DataNode of the write pipeline"))
    roles = {role for _, role in ctx.sources}
    if "datanode" not in roles and not pipeline:
        missing.append(SourceCoverage("*", "datanode", "no DataNode log in the input"))
    if "namenode" not in roles:
        missing.append(SourceCoverage("*", "namenode", "no NameNode log in the input"))
    return covered, missing


def _seconds(ms: int) -> str:
    return f"{ms / 1000:.1f} s"


def _title(code: str, hosts: tuple[str, ...], ctx: Context, top: Interval | None) -> str:
    where = ", ".join(hosts) or "the cluster"
    chk = f"checkpoint {ctx.checkpoint_id}" if ctx.checkpoint_id is not None else "the checkpoint"
    size = _seconds(top.magnitude_ms) if top is not None and top.kind not in ("scan_stats", "scan_reconcile") else ""
    titles = {
        "HDFS_DIRECTORY_SCAN": f"The DirectoryScanner on {where} held the DataNode dataset lock"
        + (f" for {size}" if size else "") + f" while {chk} was being written",
        "HDFS_SLOW_DISK": f"Slow disk writes on DataNode {where} stalled {chk}",
        "HDFS_SLOW_PIPELINE": f"Slow mirror writes/acks between DataNodes ({where}) stalled {chk}",
        "DATANODE_JVM_PAUSE": f"DataNode {where} paused" + (f" for {size}" if size else "") + f" during {chk}",
        "NAMENODE_SLOW": f"The NameNode {where} was blocked" + (f" for {size}" if size else "") + f" during {chk}",
        "TASKMANAGER_JVM_PAUSE": f"TaskManager {where} paused" + (f" for {size}" if size else "") + f" during {chk}",
        "FLINK_TASK_ERROR": f"{chk[0].upper() + chk[1:]} failed inside Flink, not in storage",
        "UNEXPLAINED": f"The HDFS logs cover {chk} and show nothing abnormal",
        "INSUFFICIENT_DATA": f"The logs needed to explain {chk} are missing",
    }
    return titles[code]


def _explain(best: Candidate | None, others: list[Candidate], window: Window, how: str, code: str,
             texts: tuple[str, ...] = ()) -> str:
    parts = []
    if best is not None and best.code == "FLINK_TASK_ERROR":
        parts.append("The failure's cause chain names no storage or I/O problem and no state file"
                     + (f": {texts[0][:240]}" if texts else "") + ".")
    elif best is not None and best.scored:
        top = best.scored[0].interval
        if top.kind in ("scan_stats", "scan_reconcile"):
            parts.append(
                f"{top.summary} on {top.host} at {iso_ms(top.end_ms)}, as the stuck write of "
                f"{_seconds(window.end_ms - window.start_ms)} ended (no lock warning in this Hadoop version; "
                "the totals are logged while the scan still holds the lock)."
            )
        else:
            parts.append(
                f"{top.summary} on {top.host} ({iso_ms(top.start_ms)} – {iso_ms(top.end_ms)}) overlaps the stuck "
                f"write of {_seconds(window.end_ms - window.start_ms)}"
                + (f" (timeout {_seconds(window.timeout_ms)})" if window.timeout_ms else "") + "."
            )
        symptoms = sorted({s.interval.kind for c in others for s in c.scored if s.symptom_of == code})
        if symptoms:
            parts.append(f"Same-host {', '.join(k.replace('_', ' ') for k in symptoms)} are its symptoms.")
    if how:
        parts.append(f"DataNodes of the write from {how}.")
    elif code != "FLINK_TASK_ERROR":
        parts.append("No identifier linked the write to DataNodes: matched by time across the cluster.")
    if others:
        parts.append("Ranked lower: " + ", ".join(f"{c.code} {c.score:.2f}" for c in others[:4]) + ".")
    return " ".join(parts)


def decide(ctx: Context, recurrence: Recurrence | None = None) -> Verdict:
    s = ctx.summary
    window = window_of(s)
    client = linked_client_slow(ctx, window)
    pipeline, how, stalls = pipeline_hosts(ctx, window, client)
    raw = [iv for iv in (interval_of(e) for e in ctx.evidence) if iv is not None]
    intervals = [iv for iv in raw if iv.kind != "scan_reconcile"] + reconcile_bursts(
        [iv for iv in raw if iv.kind == "scan_reconcile"]
    )
    candidates = rank(intervals, window, pipeline=pipeline, tm_hosts=frozenset(s.hosts), skew_ms=ctx.skew_ms)
    if not s.storage_related:
        candidates.append(Candidate("FLINK_TASK_ERROR", 0.85, s.hosts, ()))
        candidates.sort(key=lambda c: (-c.score, c.code))
    covered, missing = coverage(ctx, window, pipeline)
    best = candidates[0] if candidates and candidates[0].score >= ctx.min_confidence else None
    if best is not None:
        code, confidence, hosts = best.code, best.score, best.hosts
    else:
        dn_covered = {c.host for c in covered if c.role == "datanode"}
        judged = bool(dn_covered & pipeline) if pipeline else bool(dn_covered)
        code = "UNEXPLAINED" if judged else "INSUFFICIENT_DATA"
        confidence = 0.6 if judged else 0.5
        hosts = tuple(sorted(pipeline))
    others = [c for c in candidates if c is not best and c.score >= 0.1]
    top = best.scored[0].interval if best is not None and best.scored else None
    dn_version = ctx.versions.get((hosts[0], "datanode")) if hosts else None
    if dn_version is None and pipeline:
        dn_version = next((ctx.versions[(h, "datanode")] for h in sorted(pipeline) if (h, "datanode") in ctx.versions),
                          None)
    flink_version = next((v for (h, r), v in sorted(ctx.versions.items()) if r in ("jobmanager", "taskmanager")), None)
    issue = scanner_issue(dn_version) if code == "HDFS_DIRECTORY_SCAN" else None
    missing_hosts = tuple(m.host for m in missing if m.role == "datanode" and m.host != "*")
    steps = remediation(code, hosts=hosts, datanode_version=dn_version, flink_version=flink_version,
                        timeout_ms=s.timeout_ms, missing=missing_hosts)
    evidence = _evidence_items(ctx, s, best, client, [st for st in stalls if st.receiving.host in hosts])
    explanation = _explain(best, others, window, how, code, s.texts)
    if issue is not None:
        explanation += f" Known issue {issue.key}: {issue.summary}."
    if "unknown" in hosts:
        explanation += (" 'unknown' is a source whose records name no host (no key host:path, header, envelope field"
                        " or standard file name); its host is not guessed.")
    if best is None and code == "INSUFFICIENT_DATA":
        explanation = "No DataNode log covers the write" + (
            f" (pipeline: {', '.join(sorted(pipeline))})" if pipeline else "") + "; nothing can be ruled in or out."
    return Verdict(
        verdict_id=make_verdict_id(ctx.cluster, ctx.job_id, ctx.checkpoint_id, s.failed_at_ms),
        cluster=ctx.cluster,
        job_id=ctx.job_id,
        checkpoint_id=ctx.checkpoint_id,
        failure=Failure(s.kind, s.failed_at_ms, s.started_at_ms, s.duration_ms, s.timeout_ms, s.operator, s.path,
                        s.hosts),
        root_cause=RootCause(code, _title(code, hosts, ctx, top), confidence, hosts,
                             issue.key if issue else None, explanation),
        alternatives=tuple(Alternative(c.code, c.score) for c in others[:4]),
        evidence=evidence,
        remediation=steps,
        covered=tuple(covered),
        missing=tuple(missing),
        decided_at_ms=ctx.decided_at_ms,
        recurrence=recurrence,
    )


def _case_line(e: Event) -> str:
    """One line about a Flink case event, with the ids and the first words of its cause."""
    chk = getattr(e, "checkpoint_id", None)
    if isinstance(e, CheckpointFailed):
        return f"checkpoint {chk} failed ({e.kind})" + (f": {e.message[:160]}" if e.message else "")
    if isinstance(e, CheckpointDeclined):
        return f"checkpoint {chk} declined" + (f": {e.reason[:160]}" if e.reason else "")
    if isinstance(e, TaskStatus):
        return f"{e.task or 'task'} switched from {e.from_state} to {e.to_state}"
    return f"checkpoint {chk} " + e.type.removeprefix("checkpoint_").replace("_", " ")


def _item(e: Event, summary: str) -> EvidenceItem:
    return EvidenceItem(e.type, e.ts_ms, e.host, e.role, summary, e.ref)


def _evidence_items(ctx: Context, s: CaseSummary, best: Candidate | None, client: list[HdfsClientSlow],
                    stalls: list[Stall]) -> tuple[EvidenceItem, ...]:
    items: list[EvidenceItem] = []
    for e in s.refs[:4]:
        items.append(_item(e, _case_line(e)))
    for c in client[:2]:
        items.append(_item(c, f"HDFS client {c.op} took {c.duration_ms} ms"))
    for st in stalls[:2]:
        waited = "never finished" if st.finished_ms is None else \
            f"finished {st.finished_ms - st.receiving.ts_ms} ms later"
        items.append(_item(st.receiving, f"Receiving {st.receiving.block}: {waited}"))
    if best is not None:
        for scored in best.scored[: ctx.max_evidence // 2]:
            items.append(_item(scored.interval.source, scored.interval.summary))
    seen: set[tuple[str, int, str, str]] = set()
    unique = []
    for it in sorted(items, key=lambda i: (i.at_ms, i.type, i.host, i.ref, i.summary)):
        key = (it.type, it.at_ms, it.host, it.ref)
        if key not in seen:
            seen.add(key)
            unique.append(it)
    return tuple(unique)
