"""Deciding one case: link the write to DataNodes, rank the evidence, judge coverage, and write the verdict."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from correlator.core.correlate.anatomy import HeldBeforeUpload, held_before_upload
from correlator.core.correlate.budget import budget, budget_sentence
from correlator.core.correlate.cases import CaseSummary
from correlator.core.correlate.evidence import Interval, interval_of, logged_span, reconcile_bursts, slow_runs, touches
from correlator.core.correlate.explanation import explanation, title
from correlator.core.correlate.growth import Growth, state_growth
from correlator.core.correlate.lost import HEARTBEAT_KEY, Lost, lost_taskmanager
from correlator.core.correlate.pipeline import (
    Pipeline,
    Stall,
    Stopper,
    address_hosts,
    linked_client_slow,
    pipeline_of,
    resolve,
)
from correlator.core.correlate.silent import coverage, covering_datanodes, judged, point_at_silent, unjudged_text
from correlator.core.correlate.ranking import CONTRIBUTING_SCORE, MIN_SCORE, Candidate, Window, rank
from correlator.core.correlate.watermarks import SourceClock
from correlator.core.events import (
    CheckpointCompleted,
    CheckpointSpan,
    CLIENT_ROLE,
    CheckpointDeclined,
    CheckpointFailed,
    Event,
    HdfsClientSlow,
    TaskStatus,
)
from correlator.core.explain.causes import Code
from correlator.core.explain.knowledge import (
    DatanodeTraits,
    datanode_traits,
    remediation,
    scanner_issue,
    scanner_part,
)
from correlator.core.explain.verdict import (
    Alternative,
    EvidenceItem,
    Failure,
    Recurrence,
    RootCause,
    SourceCoverage,
    Verdict,
    make_verdict_id,
)

DEFAULT_WINDOW_MS = 60_000
USER_ERROR_SCORE = 0.9
FLINK_ERROR_SCORE = 0.85
SPAN_PHASES = (("maxStartDelayMs", "start delay"), ("maxAlignmentMs", "alignment"), ("maxSyncMs", "sync part"),
               ("maxAsyncMs", "async part"))
GROWTH_SCORE = 0.6
"""State growth's and backpressure's score, given only when no storage cause reached the confidence floor."""
LOST_SCORE = 0.9
"""A lost TaskManager's score, on the same condition: the JobManager states the failover that aborted the
checkpoint, a stronger word than a cause chain that merely names no storage."""
SCANNER_POINTS = ("scan_stats", "scan_reconcile")
LOCK_REPORT_KINDS = ("scanner_lock", "lock_held", "scanner_wait", "lock_wait")
SUPPORTING_HOLD_MS = 1_000
"""A scanner lock hold this long lets the scanner's totals and reconcile lines support it (a short one does not)."""


@dataclass(frozen=True, slots=True)
class Context:
    """Everything the engine knows that one decision needs, already cut at the decision time."""

    cluster: str
    job_id: str | None
    checkpoint_id: int | None
    summary: CaseSummary
    evidence: tuple[Event, ...]
    ip_hosts: dict[str, str]
    """DataNode ``ip:port`` (or bare IP from older lines) → host, as the DataNodes' own lines told it."""
    sources: dict[tuple[str, str], SourceClock]
    versions: dict[tuple[str, str], str]
    decided_at_ms: int
    skew_ms: int
    min_confidence: float = MIN_SCORE
    max_evidence: int = 12
    guessed: frozenset[tuple[str, str]] = frozenset()
    """Sources whose host was guessed (a folder's or a pod-like file name): coverage says so."""
    unread: dict[tuple[str, str], str] = field(default_factory=dict)
    """Sources whose log could not be read to its end (damaged, cut off, not opened), and why."""
    completions: tuple[CheckpointCompleted, ...] = ()
    """The job's last completed checkpoints up to the failure: whether its state outgrew the timeout."""
    settings: dict[str, int] = field(default_factory=dict)
    """The cluster's Flink duration settings (key → ms) as its JobManager logged them at start."""


def window_of(s: CaseSummary) -> Window:
    end = s.write_end_ms if s.write_end_ms is not None else s.failed_at_ms
    if s.started_at_ms is not None:
        start = s.started_at_ms
    else:
        start = s.failed_at_ms - (s.timeout_ms or DEFAULT_WINDOW_MS)
    return Window(min(start, end), max(start, end), s.timeout_ms)


def datanode_version(ctx: Context, host: str) -> str | None:
    """A DataNode's version from its banner; else the NameNode's (a DataNode started without one prints none)."""
    own = ctx.versions.get((host, "datanode"))
    if own is not None:
        return own
    return next((v for (h, r), v in sorted(ctx.versions.items()) if r == "namenode"), None)


def _counts(iv: Interval, held: set[str], reporting: set[str],
            traits_of: Callable[[str], DatanodeTraits | None]) -> bool:
    """Scanner totals and reconcile warnings are a cause only where the version logs no lock reports.

    Where lock reports exist, a scanner that held the lock long says so itself (``scanner_lock``; ``held``: the hosts
    where one did); then its totals and reconcile lines support it. A DataNode of unknown version that logged any lock
    report (``reporting``: those hosts) has them. Where the totals are logged after the lock's release, only reconcile
    work (which takes the lock per block) can have stalled a writer. The host sets are built once per case, so a
    dense window does not search the whole interval list again for every point.
    """
    if iv.kind not in SCANNER_POINTS:
        return True
    if iv.host in held:
        return True
    traits = traits_of(iv.host)
    if traits is None:
        return iv.host not in reporting
    if traits.lock_reports:
        return False
    return iv.kind == "scan_reconcile" or traits.totals_under_lock


def _stall_interval(stopper: Stopper, window: Window) -> Interval:
    end = max(window.end_ms, stopper.receiving_ms)
    return Interval("dn_stall", stopper.receiving_ms, end, stopper.host, "datanode", end - stopper.receiving_ms,
                    f"received {stopper.block} and neither finished it nor passed it on", stopper.receiving)


def _bad_links(pipe: Pipeline, addresses: dict[str, str], window: Window) -> list[Interval]:
    """A ``firstBadLink`` names the DataNode its upstream could not reach (unlike a timeout's ``remote=``)."""
    out = []
    for e in pipe.client_errors:
        if e.kind == "create_block_output_stream" and e.datanode and e.exception and "firstBadLink" in e.exception:
            host = resolve(e.datanode, addresses)
            start = min(window.start_ms, e.ts_ms)
            out.append(Interval("bad_link", start, e.ts_ms, host, "datanode", e.ts_ms - start,
                                f"the pipeline's upstream DataNode could not reach {host} (firstBadLink)", e))
    return out


def _user_error(refs: tuple[Event, ...]) -> tuple[str, str] | None:
    for e in refs:
        if isinstance(e, CheckpointDeclined | CheckpointFailed) and e.user_exception and e.user_frame:
            return e.user_exception, e.user_frame
    return None


def _sole_taskmanager(ctx: Context) -> tuple[str, ...]:
    """When only the JobManager logged the failure, the one TaskManager of the cluster (if there is one)."""
    tms = sorted({h for h, r in ctx.sources if r == "taskmanager"})
    return tuple(tms) if len(tms) == 1 else ()


def _client_note(pipe: Pipeline, hosts: tuple[str, ...], addresses: dict[str, str]) -> str | None:
    """What the HDFS client's own errors name, and why a timeout's ``remote=`` is not taken as the culprit."""
    notes = []
    excluded = sorted({resolve(e.datanode, addresses) for e in pipe.client_errors
                       if e.kind == "exclude_datanode" and e.datanode})
    if excluded:
        notes.append(f"The HDFS client excluded {', '.join(excluded)} from the pipeline.")
    remote = sorted({resolve(e.datanode, addresses) for e in pipe.client_errors
                     if e.kind == "create_block_output_stream" and e.datanode and e.exception
                     and "remote=" in e.exception})
    if remote and set(remote) - set(hosts):
        notes.append(f"The client's timeout names {', '.join(remote)} (remote=), the first DataNode of the "
                     "pipeline, which waits on the DataNodes behind it.")
    return " ".join(notes) or None


def decide(ctx: Context, recurrence: Recurrence | None = None) -> Verdict:
    s = ctx.summary
    window = window_of(s)
    addresses = address_hosts(ctx.ip_hosts)
    client = linked_client_slow(ctx.evidence, window, ctx.job_id, ctx.checkpoint_id, s.hosts, ctx.skew_ms)
    pipe = pipeline_of(ctx.evidence, window, job_id=ctx.job_id, checkpoint_id=ctx.checkpoint_id, tm_hosts=s.hosts,
                       hosts=addresses, skew_ms=ctx.skew_ms, client=client,
                       logged=covering_datanodes(ctx.sources, window, ctx.skew_ms))

    def traits_of(host: str) -> DatanodeTraits | None:
        return datanode_traits(datanode_version(ctx, host))

    raw = [iv for iv in (interval_of(e) for e in ctx.evidence) if iv is not None]
    held = {o.host for o in raw if o.kind == "scanner_lock" and o.magnitude_ms >= SUPPORTING_HOLD_MS}
    reporting = {o.host for o in raw if o.kind in LOCK_REPORT_KINDS}
    raw = [iv for iv in raw if _counts(iv, held, reporting, traits_of)]
    if pipe.stopper is not None:
        raw.append(_stall_interval(pipe.stopper, window))
    raw += _bad_links(pipe, addresses, window)
    intervals = slow_runs([iv for iv in raw if iv.kind != "scan_reconcile"]) + reconcile_bursts(
        [iv for iv in raw if iv.kind == "scan_reconcile"]
    )
    candidates = rank(intervals, window, pipeline=pipe.hosts, tm_hosts=frozenset(s.hosts), skew_ms=ctx.skew_ms)
    stalled = any(c.score >= ctx.min_confidence for c in candidates)
    user = _user_error(s.refs)
    task_hosts = s.hosts or _sole_taskmanager(ctx)
    lost = lost_taskmanager(s, window, ctx.evidence, ctx.skew_ms, ctx.sources,
                            ctx.settings.get(HEARTBEAT_KEY)) if user is None else None
    if user is not None:
        candidates.append(Candidate("FLINK_TASK_ERROR", USER_ERROR_SCORE, task_hosts, ()))
    elif not s.storage_related and lost is None:  # a lost TaskManager's failover is no error inside Flink
        candidates.append(Candidate("FLINK_TASK_ERROR", FLINK_ERROR_SCORE, task_hosts, ()))
    # Flink-side causes only where no storage cause is strong enough on its own, but for state growth when the job's
    # own trend predicts more of the checkpoint's time than the stall took (the time budget)
    growth = state_growth(ctx.completions, s.timeout_ms, window.start_ms) if user is None else None
    storage = max((c for c in candidates if c.scored and c.score >= CONTRIBUTING_SCORE), key=lambda c: c.score,
                  default=None)
    spent = budget(growth, storage, window) if growth is not None and storage is not None else None
    if growth is not None and (not stalled or (spent is not None and spent.growth_leads)):
        # the job's state, not a host's doing: no host is named; above the stall when the budget says so
        score = max(c.score for c in candidates) + 0.01 if stalled else GROWTH_SCORE
        candidates.append(Candidate("FLINK_STATE_GROWTH", min(score, 1.0), (), ()))
    before_upload = held_before_upload(s, window, ctx.evidence, ctx.job_id, ctx.checkpoint_id, ctx.sources,
                                       ctx.skew_ms) if user is None and growth is None and not stalled else None
    if before_upload is not None:
        candidates.append(Candidate("FLINK_BACKPRESSURE", GROWTH_SCORE, (), ()))
    if lost is not None and not stalled:
        candidates.append(Candidate("FLINK_TASKMANAGER_LOST", LOST_SCORE, (lost.where,), ()))
    candidates.sort(key=lambda c: (-c.score, c.code))
    covered, missing = coverage(ctx.sources, ctx.guessed, window, ctx.skew_ms, pipe.hosts, ctx.unread)
    missing = point_at_silent(missing, pipe, client, ctx.evidence, addresses, window, ctx.skew_ms)
    best = candidates[0] if candidates and candidates[0].score >= ctx.min_confidence else None
    code, confidence, hosts, waited = judged(best, covered, missing, pipe.hosts)
    if best is not None and code != best.code:
        best = None
    others = [c for c in candidates if c is not best and c.score >= 0.1]
    top = best.scored[0].interval if best is not None and best.scored else None
    dn_version = datanode_version(ctx, hosts[0]) if hosts else None
    if dn_version is None and pipe.hosts:
        dn_version = next((v for h in sorted(pipe.hosts) if (v := datanode_version(ctx, h)) is not None), None)
    flink_version = next((v for (h, r), v in sorted(ctx.versions.items()) if r in ("jobmanager", "taskmanager")), None)
    holder = getattr(top.source, "holder", None) if top is not None else None
    issue = scanner_issue(dn_version, scanner_part(top.kind if top else None, holder)) \
        if code == Code.HDFS_DIRECTORY_SCAN else None
    missing_hosts = tuple(m.host for m in missing if m.role == "datanode" and m.host != "*")
    steps = remediation(code, hosts=hosts, datanode_version=dn_version, flink_version=flink_version,
                        timeout_ms=s.timeout_ms, missing=missing_hosts, holder=holder, issue=issue,
                        limit=getattr(top.source, "limit", None) if top is not None else None,
                        user_frame=user[1] if user is not None and code == Code.FLINK_TASK_ERROR else None)
    victims = [iv for iv in intervals if iv.kind in ("scanner_wait", "lock_wait") and iv.host in hosts
               and top is not None and top.kind in ("lock_held", "scanner_lock")
               and iv.start_ms <= top.end_ms + ctx.skew_ms and top.start_ms - ctx.skew_ms <= iv.end_ms]
    victims.sort(key=lambda iv: (iv.kind != "scanner_wait", iv.start_ms))
    said_budget = budget_sentence(spent) if spent is not None and (
        code == Code.FLINK_STATE_GROWTH or (storage is not None and code == storage.code)) else None
    growth = growth if code == Code.FLINK_STATE_GROWTH else None
    before_upload = before_upload if code == Code.FLINK_BACKPRESSURE else None
    lost = lost if code == Code.FLINK_TASKMANAGER_LOST or (
        code == Code.TASKMANAGER_JVM_PAUSE and lost is not None and lost.pause is not None) else None
    evidence = _evidence_items(ctx, s, best, client, [st for st in pipe.stalls if st.receiving.host in hosts], pipe,
                               victims[:2], growth, before_upload, lost)
    text = explanation(best, others, window, pipe.how, code, texts=s.texts, growth=growth, held=before_upload,
                       traits=traits_of(hosts[0]) if hosts else None, stopper=pipe.stopper, victims=victims[:2],
                       user=user, named_by_client=_client_note(pipe, hosts, addresses), lost=lost)
    if said_budget is not None:
        text += " " + said_budget
    if issue is not None:
        text += f" It matches known issue {issue.key}: {issue.summary}."
    if "unknown" in hosts:
        text += (" 'unknown' is a source whose records name no host (no key host:path, header, envelope field"
                 " or standard file name); its host is not guessed.")
    if best is None:
        text = " ".join(t for t in (unjudged_text(code, hosts, missing, waited), text) if t)
    elif any(m.pointed_by for m in missing):
        text += " " + unjudged_text(Code.INSUFFICIENT_DATA, (), missing, ())
    return Verdict(
        verdict_id=make_verdict_id(ctx.cluster, ctx.job_id, ctx.checkpoint_id, s.failed_at_ms),
        cluster=ctx.cluster,
        job_id=ctx.job_id,
        checkpoint_id=ctx.checkpoint_id,
        failure=Failure(s.kind, s.failed_at_ms, s.started_at_ms, s.duration_ms, s.timeout_ms, s.operator, s.path,
                        s.hosts),
        root_cause=RootCause(code, title(code, hosts, ctx.checkpoint_id, top, user,
                                         silent=best is None and any(m.pointed_by for m in missing)),
                             confidence, hosts,
                             issue.key if issue else None, text),
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


def _item(e: Event, summary: str, span: tuple[int, int] | None = None) -> EvidenceItem:
    start, end = span or logged_span(e) or (None, None)
    return EvidenceItem(e.type, e.ts_ms, e.host, e.role, summary, e.ref, start, end)


def _span_line(span: CheckpointSpan) -> str:
    """A checkpoint span as evidence: how far acknowledgements got, who never acknowledged, the longest phases."""
    phases = dict(span.phases)
    longest = ", ".join(f"{label} {phases[key]} ms" for key, label in SPAN_PHASES if key in phases)
    acked = (f"last acknowledgement {span.end_ms - span.start_ms} ms after the trigger" if span.end_ms > span.start_ms
             else "no acknowledgement")
    return (f"Flink's span of checkpoint {span.checkpoint_id} ({span.status}): {acked}, "
            f"{span.full_size or 0} bytes of state acknowledged"
            + (f"; never acknowledged by {', '.join(span.waiting_on)}" if span.waiting_on else "")
            + (f"; longest {longest}" if longest else ""))


def _evidence_items(ctx: Context, s: CaseSummary, best: Candidate | None, client: list[HdfsClientSlow],
                    stalls: list[Stall], pipe: Pipeline, victims: list[Interval],
                    growth: Growth | None = None, held: HeldBeforeUpload | None = None,
                    lost: Lost | None = None) -> tuple[EvidenceItem, ...]:
    items: list[EvidenceItem] = []
    for traced in (e for e in s.refs if isinstance(e, CheckpointSpan)):  # the anatomy, whichever cause it confirms
        items.append(_item(traced, _span_line(traced)))
    if growth is not None:
        for done in (growth.first, growth.last):
            items.append(_item(done, f"checkpoint {done.checkpoint_id} completed: "
                                     f"{(done.size_bytes or 0) / 1048576:.1f} MiB in {(done.duration_ms or 0) / 1000:.1f} s"))
    for e in s.refs[:4]:
        items.append(_item(e, _case_line(e)))
    if lost is not None:
        items.append(_item(lost.event, f"the JobManager lost TaskManager {lost.event.taskmanager_id}: "
                                       "its heartbeat timed out"))
    for c in client[:2]:
        items.append(_item(c, f"HDFS client {c.op} took {c.duration_ms} ms"))
    for a in pipe.allocations[:2]:
        items.append(_item(a, f"NameNode allocated {a.block} on {', '.join(a.replicas)} for {a.path}"))
    for ce in pipe.client_errors[:3]:
        items.append(_item(ce, f"HDFS client {ce.kind.replace('_', ' ')}"
                           + (f" {ce.datanode}" if ce.datanode else "") + (f": {ce.exception[:160]}" if ce.exception
                                                                           else "")))
    for de in pipe.dn_errors[:2]:
        items.append(_item(de, f"DataNode {de.kind.replace('_', ' ')}"
                           + (f" from {de.peer}" if de.peer else "") + (f": {de.exception[:160]}" if de.exception
                                                                       else "")))
    for st in stalls[:2]:
        waited = "never finished" if st.finished_ms is None else \
            f"finished {st.finished_ms - st.receiving.ts_ms} ms later"
        span = None if st.finished_ms is None else (st.receiving.ts_ms, st.finished_ms)
        items.append(_item(st.receiving, f"Receiving {st.receiving.block}: {waited}", span))
    if best is not None:
        for scored in best.scored[: ctx.max_evidence // 2]:
            iv = scored.interval
            items.append(_item(iv.source, iv.summary, (iv.start_ms, iv.end_ms) if iv.end_ms > iv.start_ms else None))
    for v in victims:
        items.append(_item(v.source, v.summary))
    seen: set[tuple[str, int, str, str]] = set()
    unique = []
    for it in sorted(items, key=lambda i: (i.at_ms, i.type, i.host, i.ref, i.summary)):
        key = (it.type, it.at_ms, it.host, it.ref)
        if key not in seen:
            seen.add(key)
            unique.append(it)
    return tuple(unique)
