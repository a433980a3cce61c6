"""Deciding one case: link the write to DataNodes, rank the evidence, run the registry's detectors, judge coverage,
and write the verdict."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from correlator.core.correlate.context import Context, datanode_version, measured, window_of
from correlator.core.correlate.detectors import Detected, detect, write_link
from correlator.core.correlate.scene import Outcome, Reading, Scene
from correlator.core.correlate.evidence import Interval, reconcile_bursts, slow_runs
from correlator.core.correlate.explanation import explanation, title
from correlator.core.correlate.items import evidence_items
from correlator.core.correlate.objectstore import bucket_of, on_object_store, store_logged, store_uri
from correlator.core.correlate.pipeline import (
    Pipeline,
    Stopper,
    address_hosts,
    linked_client_slow,
    pipeline_of,
    resolve,
)
from correlator.core.correlate.ranking import Candidate, Window, rank
from correlator.core.correlate.silent import coverage, covering_datanodes, judged, point_at_silent, unjudged_text
from correlator.core.correlate.subtasks import subtask_reading
from correlator.core.events import OBJECT_STORE_ROLE, CheckpointDeclined, CheckpointFailed, Event, HdfsClientSlow
from correlator.core.explain.causes import Code
from correlator.core.explain.kinds import EvidenceKind
from correlator.core.explain.knowledge import (
    DatanodeTraits,
    KnownIssue,
    datanode_traits,
    remediation,
    scanner_issue,
    scanner_part,
)
from correlator.core.explain.verdict import (
    Alternative,
    CoverageReason,
    Failure,
    Recurrence,
    RootCause,
    SourceCoverage,
    Verdict,
    make_verdict_id,
)

SCANNER_POINTS = (EvidenceKind.SCAN_STATS, EvidenceKind.SCAN_RECONCILE)
LOCK_REPORT_KINDS = (EvidenceKind.SCANNER_LOCK, EvidenceKind.LOCK_HELD, EvidenceKind.SCANNER_WAIT,
                     EvidenceKind.LOCK_WAIT)
VICTIM_KINDS = (EvidenceKind.SCANNER_WAIT, EvidenceKind.LOCK_WAIT)
HOLD_KINDS = (EvidenceKind.LOCK_HELD, EvidenceKind.SCANNER_LOCK)
SUPPORTING_HOLD_MS = 1_000
"""A scanner lock hold this long lets the scanner's totals and reconcile lines support it (a short one does not)."""
HDFS_ONLY = (CoverageReason.NO_DATANODE_LOG, CoverageReason.NO_NAMENODE_LOG)
"""Coverage that only a checkpoint on HDFS needs: one on an object store has no DataNode or NameNode."""
ALTERNATIVE_SCORE = 0.1
"""A candidate this strong is named among the alternatives."""


@dataclass(frozen=True, slots=True)
class Write:
    """The stuck write as the logs link it to DataNodes: their addresses, the client's slow acks, the pipeline."""

    addresses: dict[str, str]
    client: list[HdfsClientSlow]
    pipe: Pipeline


def _write(ctx: Context, window: Window) -> Write:
    s = ctx.summary
    addresses = address_hosts(ctx.ip_hosts)
    client = linked_client_slow(ctx.evidence, window, ctx.job_id, ctx.checkpoint_id, s.hosts, ctx.skew_ms)
    pipe = pipeline_of(ctx.evidence, window, job_id=ctx.job_id, checkpoint_id=ctx.checkpoint_id, tm_hosts=s.hosts,
                       hosts=addresses, skew_ms=ctx.skew_ms, client=client,
                       logged=covering_datanodes(ctx.sources, window, ctx.skew_ms))
    return Write(addresses, client, pipe)


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
    return iv.kind == EvidenceKind.SCAN_RECONCILE or traits.totals_under_lock


def _stall_interval(stopper: Stopper, window: Window) -> Interval:
    end = max(window.end_ms, stopper.receiving_ms)
    return Interval(EvidenceKind.DN_STALL, stopper.receiving_ms, end, stopper.host, "datanode",
                    end - stopper.receiving_ms,
                    f"received {stopper.block} and neither finished it nor passed it on", stopper.receiving)


def _bad_links(pipe: Pipeline, addresses: dict[str, str], window: Window) -> list[Interval]:
    """A ``firstBadLink`` names the DataNode its upstream could not reach (unlike a timeout's ``remote=``)."""
    out = []
    for e in pipe.client_errors:
        if e.kind == "create_block_output_stream" and e.datanode and e.exception and "firstBadLink" in e.exception:
            host = resolve(e.datanode, addresses)
            start = min(window.start_ms, e.ts_ms)
            out.append(Interval(EvidenceKind.BAD_LINK, start, e.ts_ms, host, "datanode", e.ts_ms - start,
                                f"the pipeline's upstream DataNode could not reach {host} (firstBadLink)", e))
    return out


def _storage(ctx: Context, window: Window, write: Write,
             traits_of: Callable[[str], DatanodeTraits | None]) -> tuple[list[Interval], list[Candidate]]:
    """The evidence intervals of the case and the storage causes they rank, best first."""
    raw = list(measured(ctx))
    held = {o.host for o in raw if o.kind == EvidenceKind.SCANNER_LOCK and o.magnitude_ms >= SUPPORTING_HOLD_MS}
    reporting = {o.host for o in raw if o.kind in LOCK_REPORT_KINDS}
    raw = [iv for iv in raw if _counts(iv, held, reporting, traits_of)]
    if write.pipe.stopper is not None:
        raw.append(_stall_interval(write.pipe.stopper, window))
    raw += _bad_links(write.pipe, write.addresses, window)
    intervals = slow_runs([iv for iv in raw if iv.kind != EvidenceKind.SCAN_RECONCILE]) + reconcile_bursts(
        [iv for iv in raw if iv.kind == EvidenceKind.SCAN_RECONCILE]
    )
    candidates = rank(intervals, window, pipeline=write.pipe.hosts, tm_hosts=frozenset(ctx.summary.hosts),
                      skew_ms=ctx.skew_ms)
    return intervals, candidates


def _user_error(refs: tuple[Event, ...]) -> tuple[str, str] | None:
    for e in refs:
        if isinstance(e, CheckpointDeclined | CheckpointFailed) and e.user_exception and e.user_frame:
            return e.user_exception, e.user_frame
    return None


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


def _victims(intervals: list[Interval], hosts: tuple[str, ...], top: Interval | None, skew_ms: int) -> list[Interval]:
    """Lock waits on the cause's hosts during the leading lock hold: the holder's victims, the scanner's first."""
    if top is None or top.kind not in HOLD_KINDS:
        return []
    victims = [iv for iv in intervals if iv.kind in VICTIM_KINDS and iv.host in hosts
               and iv.start_ms <= top.end_ms + skew_ms and top.start_ms - skew_ms <= iv.end_ms]
    victims.sort(key=lambda iv: (iv.kind != EvidenceKind.SCANNER_WAIT, iv.start_ms))
    return victims[:2]


def _versions(ctx: Context, hosts: tuple[str, ...], pipe: Pipeline) -> tuple[str | None, str | None]:
    """The DataNode version the verdict speaks of (its first host's, else its pipeline's) and Flink's."""
    dn_version = datanode_version(ctx, hosts[0]) if hosts else None
    if dn_version is None and pipe.hosts:
        dn_version = next((v for h in sorted(pipe.hosts) if (v := datanode_version(ctx, h)) is not None), None)
    flink_version = next((v for (h, r), v in sorted(ctx.versions.items()) if r in ("jobmanager", "taskmanager")), None)
    return dn_version, flink_version


def decide(ctx: Context, recurrence: Recurrence | None = None) -> Verdict:
    """The verdict of one case: the storage causes its evidence ranks and the registry's detectors' candidates,
    judged against what its logs cover, with the words, evidence and steps of the cause it names."""
    s = ctx.summary
    window = window_of(s)
    write = _write(ctx, window)

    def traits_of(host: str) -> DatanodeTraits | None:
        return datanode_traits(datanode_version(ctx, host))

    intervals, storage = _storage(ctx, window, write, traits_of)
    scene = Scene(ctx, window, tuple(storage), any(c.score >= ctx.min_confidence for c in storage),
                  _user_error(s.refs))
    detected = detect(scene)
    covered, missing = coverage(ctx.sources, ctx.guessed, window, ctx.skew_ms, write.pipe.hosts, ctx.unread)
    store = on_object_store(ctx.evidence, ctx.job_id, s.refs, ctx.checkpoint_dir)
    wanted_store: str | None = None
    if store:
        covered, missing, wanted_store = _object_store_coverage(ctx, covered, missing)
    missing = point_at_silent(missing, write.pipe, write.client, ctx.evidence, write.addresses, window, ctx.skew_ms)
    outcome, confidence, hosts, waited = _judge(ctx, detected, covered, missing, write.pipe)
    readings = (*detected.readings(scene, outcome), subtask_reading(ctx, window, outcome.code))
    top = outcome.best.scored[0].interval if outcome.best is not None and outcome.best.scored else None
    dn_version, flink_version = _versions(ctx, hosts, write.pipe)
    holder = getattr(top.source, "holder", None) if top is not None else None
    issue = scanner_issue(dn_version, scanner_part(top.kind if top else None, holder)) \
        if outcome.code == Code.HDFS_DIRECTORY_SCAN else None
    victims = _victims(intervals, hosts, top, ctx.skew_ms)
    text = explanation(outcome.best, outcome.others, window, write.pipe.how, outcome.code,
                       opening=[t for r in readings for t in r.opening], aside=[t for r in readings for t in r.aside],
                       link="never" if store else write_link(outcome.code), traits=traits_of(hosts[0]) if hosts else None,
                       stopper=write.pipe.stopper, victims=victims,
                       named_by_client=_client_note(write.pipe, hosts, write.addresses))
    text = _said_after(text, readings, issue, outcome, hosts, missing, waited)
    return Verdict(
        verdict_id=make_verdict_id(ctx.cluster, ctx.job_id, ctx.checkpoint_id, s.failed_at_ms),
        cluster=ctx.cluster,
        job_id=ctx.job_id,
        checkpoint_id=ctx.checkpoint_id,
        failure=Failure(s.kind, s.failed_at_ms, s.started_at_ms, s.duration_ms, s.timeout_ms, s.operator, s.path,
                        s.hosts),
        root_cause=RootCause(outcome.code, title(outcome.code, hosts, ctx.checkpoint_id, top, scene.user,
                                                 silent=outcome.best is None and any(m.pointed_by for m in missing)),
                             confidence, hosts, issue.key if issue else None, text),
        alternatives=tuple(Alternative(c.code, c.score) for c in outcome.others[:4]),
        evidence=evidence_items(s, outcome.best, write.client,
                                [st for st in write.pipe.stalls if st.receiving.host in hosts], write.pipe, victims,
                                [e for r in readings for e in r.evidence], ctx.max_evidence),
        remediation=remediation(outcome.code, hosts=hosts, datanode_version=dn_version, flink_version=flink_version,
                                timeout_ms=s.timeout_ms, holder=holder, issue=issue,
                                missing=tuple(m.host for m in missing if m.role == "datanode" and m.host != "*"),
                                limit=getattr(top.source, "limit", None) if top is not None else None,
                                user_frame=scene.user[1] if scene.user is not None else None,
                                object_store=wanted_store),
        covered=tuple(covered),
        missing=tuple(missing),
        decided_at_ms=ctx.decided_at_ms,
        recurrence=recurrence,
    )


def _object_store_coverage(ctx: Context, covered: list[SourceCoverage], missing: list[SourceCoverage]) -> tuple[
        list[SourceCoverage], list[SourceCoverage], str | None]:
    """Coverage of a checkpoint on an object store: no HDFS log is wanted, the store's access log is. Such a log
    becomes events only where a request mattered, each stamped when it was received and delivered in no order, so
    its events' span is not where it starts or ends: it covers the case when it is there at all. Also the bucket
    whose log is wanted, when none was read."""
    missing = [m for m in missing if m.reason not in HDFS_ONLY]
    covered = covered + [SourceCoverage(m.host, m.role) for m in missing if m.role == OBJECT_STORE_ROLE]
    missing = [m for m in missing if m.role != OBJECT_STORE_ROLE]
    if store_logged(ctx.evidence, ctx.job_id):
        return covered, missing, None
    bucket = bucket_of(store_uri(ctx.summary.refs)) or bucket_of(ctx.checkpoint_dir) or "*"
    missing.append(SourceCoverage(bucket, OBJECT_STORE_ROLE, CoverageReason.NO_STORE_LOG))
    return covered, missing, bucket if bucket != "*" else "the checkpoint bucket"


def _judge(ctx: Context, detected: Detected, covered: list[SourceCoverage], missing: list[SourceCoverage],
           pipe: Pipeline) -> tuple[Outcome, float, tuple[str, ...], tuple[str, ...]]:
    """The verdict's code and the candidate it names, its confidence, hosts, and the hosts that waited on a silent
    DataNode: the best candidate when it reaches the confidence floor and coverage lets it stand."""
    candidates = detected.candidates
    best = candidates[0] if candidates and candidates[0].score >= ctx.min_confidence else None
    code, confidence, hosts, waited = judged(best, covered, missing, pipe.hosts)
    if best is not None and code != best.code:
        best = None
    others = tuple(c for c in candidates if c is not best and c.score >= ALTERNATIVE_SCORE)
    return Outcome(code, best, others), confidence, hosts, waited


def _said_after(text: str, readings: tuple[Reading, ...], issue: KnownIssue | None, outcome: Outcome,
                hosts: tuple[str, ...], missing: list[SourceCoverage], waited: tuple[str, ...]) -> str:
    """The explanation with what follows it: the findings' closing words, the known issue, an unnamed host, and
    what coverage says (all of it for a verdict that names no cause; the silent DataNode beside one that does)."""
    for closing in (t for r in readings for t in r.closing):
        text += " " + closing
    if issue is not None:
        text += f" It matches known issue {issue.key}: {issue.summary}."
    if "unknown" in hosts:
        text += (" 'unknown' is a source whose records name no host (no key host:path, header, envelope field"
                 " or standard file name); its host is not guessed.")
    if outcome.best is None:
        return " ".join(t for t in (unjudged_text(outcome.code, hosts, missing, waited), text) if t)
    if any(m.pointed_by for m in missing):
        text += " " + unjudged_text(Code.INSUFFICIENT_DATA, (), missing, ())
    return text
