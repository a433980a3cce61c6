"""The correlation engine: events in, one verdict per failed checkpoint out, decided on event time.

A case is decided once, when every source of its cluster has passed ``failure + lookahead`` (or went idle, or input
ended). Everything the decision reads is cut at that point in event time, so the verdict does not depend on how
sources were interleaved on arrival. State is plain data (``snapshot`` / ``restore``) and bounded by retention.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from correlator.core.correlate.awaiting import Awaiting
from correlator.core.correlate.cases import CaseKey, case_key_of, failure_at, is_failure_signal, summarize
from correlator.core.correlate.lost import aborted_after_loss
from correlator.core.correlate.context import Context
from correlator.core.correlate.decided import Decided, pack_decided, unpack_decided
from correlator.core.correlate.decision import decide
from correlator.core.correlate.evidence_store import EvidenceStore
from correlator.core.correlate.facts import Facts
from correlator.core.correlate.horizons import case_horizon, eviction_horizons
from correlator.core.correlate.growth import Completions
from correlator.core.correlate.packing import Packer, unpack
from correlator.core.correlate.watermarks import Watermarks
from correlator.core.events import (
    KAFKA_ROLE,
    BlockAllocated,
    BlockWrite,
    CheckpointChildSpan,
    CheckpointCompleted,
    CheckpointTriggered,
    DatanodeAddress,
    DatasetLockHeld,
    DatasetLockWait,
    DirectoryScanReconcile,
    DirectoryScanStats,
    DnWriteError,
    Event,
    HdfsClientError,
    HdfsClientSlow,
    HdfsRefusal,
    JvmPause,
    NameNodeLockHeld,
    SlowIo,
    LogUnread,
    ObjectStoreRequest,
    SourceProgress,
    TaskManagerLost,
)
from correlator.core.explain.recurrence import History
from correlator.core.explain.verdict import Recurrence, Verdict

EVIDENCE_TYPES = (
    CheckpointChildSpan,
    ObjectStoreRequest,
    DatasetLockHeld,
    DatasetLockWait,
    DirectoryScanStats,
    DirectoryScanReconcile,
    SlowIo,
    NameNodeLockHeld,
    JvmPause,
    HdfsClientSlow,
    HdfsClientError,
    DnWriteError,
    HdfsRefusal,
    TaskManagerLost,
    BlockAllocated,
    BlockWrite,
)
LATE_COUNTED = EVIDENCE_TYPES[:-2]
LINK_TYPES = (BlockWrite, BlockAllocated)
"""Lines only used to link a write to DataNodes: kept for ``link_retention_ms``."""
SNAPSHOT_VERSION = 1


@dataclass(frozen=True, slots=True)
class EngineConfig:
    """Timing of decisions (all event-time ms except ``idle_timeout_ms``, which is processing time)."""

    out_of_orderness_ms: int = 5_000
    lookahead_ms: int = 180_000
    """After a failure: long enough to see a DataNode lock released well after the checkpoint timeout."""
    idle_timeout_ms: int = 120_000
    clock_skew_ms: int = 2_000
    retention_ms: int = 1_800_000
    """Evidence older than this behind a cluster's newest event is dropped (longer than any checkpoint timeout)."""
    link_retention_ms: int = 1_200_000
    """Block-write lines (only used to link a write to DataNodes) are kept for a shorter time."""
    min_confidence: float = 0.35
    evict_every: int = 1024

    @property
    def link_gap_ms(self) -> int:
        """How much sooner than other evidence a link-only line goes."""
        return self.retention_ms - self.link_retention_ms


class Engine:
    def __init__(self, config: EngineConfig = EngineConfig()) -> None:
        self.config = config
        self._marks = Watermarks(config.out_of_orderness_ms, config.idle_timeout_ms)
        self._triggers: dict[CaseKey, CheckpointTriggered] = {}
        self._cases: dict[CaseKey, list[Event]] = {}
        self._evidence = EvidenceStore()
        self._ip_hosts: dict[tuple[str, str], tuple[str, int]] = {}
        self._guessed: set[tuple[str, str, str]] = set()
        """Sources (cluster, host, role) whose host was guessed: the verdicts covering them say so."""
        self._unread: dict[tuple[str, str, str], str] = {}
        """Sources (cluster, host, role) whose log could not be read to its end, and why."""
        self._facts = Facts()
        self._decided: dict[CaseKey, Decided] = {}
        self._awaiting = Awaiting()
        self._history = History()
        self._completions = Completions()
        self._counts = {"events": 0, "late_evidence": 0, "late_case_events": 0, "decided": 0, "revised": 0,
                        "evicted": 0}
        self._packer = Packer()
        """The snapshots' packed events, each packed once while held (not state: a restored engine packs anew)."""

    # --- input ----------------------------------------------------------------------------------------------

    def feed(self, event: Event) -> list[Verdict]:
        self._counts["events"] += 1
        if event.role == KAFKA_ROLE:  # a sink's broker, not a checkpoint's storage: no case waits on its log
            return self._decide_ready()
        if isinstance(event, LogUnread):  # says how far a log was read, not that its source's time moved on
            self._unread[(event.cluster, event.host, event.role)] = event.why
            return self._decide_ready()
        self._marks.observe((event.cluster, event.host, event.role), event.ts_ms)
        if self._awaiting and event.role == "datanode":
            self._source_arrived(event.cluster, event.host)
        self._route(event)
        if self._counts["events"] % self.config.evict_every == 0:
            self._evict()
        return self._decide_ready()

    def advance(self, now_ms: int) -> list[Verdict]:
        self._marks.tick(now_ms)
        return self._decide_ready()

    def restart_idle(self, now_ms: int) -> None:
        """See :meth:`Watermarks.restart_idle`: after an outage no source counts as idle until it is silent anew."""
        self._marks.restart_idle(now_ms)

    def restart_warm_up(self) -> None:
        """See :meth:`Watermarks.restart_warm_up`: a reloaded engine decides nothing before it has warmed up anew."""
        self._marks.restart_warm_up()

    def finish(self) -> list[Verdict]:
        self._marks.finish()
        return self._decide_ready()

    def _route(self, event: Event) -> None:
        if isinstance(event, CheckpointTriggered):
            self._triggers[(event.cluster, event.job_id, event.checkpoint_id)] = event
            return
        if isinstance(event, CheckpointCompleted):
            self._triggers.pop((event.cluster, event.job_id, event.checkpoint_id), None)
            self._completions.observe(event)
            return
        if isinstance(event, DatanodeAddress):
            self._learn_address(event, event.address)
            return
        if isinstance(event, SourceProgress) and event.host_guessed:
            self._guessed.add((event.cluster, event.host, event.role))
            return
        if self._facts.learn(event):
            return
        if isinstance(event, EVIDENCE_TYPES):
            own = event.dest if isinstance(event, BlockWrite) else getattr(event, "local", None)
            if own and event.role == "datanode":
                self._learn_address(event, own)
            if isinstance(event, LATE_COUNTED) and self._is_late(event):
                self._counts["late_evidence"] += 1
            self._evidence.add(event)
            return
        case = case_key_of(event, after_loss=aborted_after_loss(event, self._evidence.events))
        if case is None:
            return
        if case in self._decided:
            self._counts["late_case_events"] += 1
            return
        if case[1] == "":
            case = self._job_for(case)
        self._cases.setdefault(case, []).append(event)

    def _source_arrived(self, cluster: str, node: str) -> None:
        """A line of a DataNode some decided verdicts lacked: each of them is judged again (see ``awaiting.py``)."""
        for key in self._awaiting.arrived(cluster, node):
            if (d := self._decided.get(key)) is not None:
                d.late += 1

    def _learn_address(self, event: Event, address: str) -> None:
        """A DataNode's own ``ip:port`` (its earliest telling wins: the same address may move to a new host later)."""
        if self._awaiting:
            self._source_arrived(event.cluster, address)
        key = (event.cluster, address.lstrip("/"))
        known = self._ip_hosts.get(key)
        if known is None or event.ts_ms < known[1]:
            self._ip_hosts[key] = (event.host, event.ts_ms)

    def _job_for(self, key: CaseKey) -> CaseKey:
        """A line naming no job joins the one open case or trigger with the same checkpoint id, if unambiguous."""
        cluster, _, chk = key
        jobs = sorted({k[1] for k in self._cases if k[0] == cluster and k[2] == chk and k[1]}
                      | {k[1] for k in self._triggers if k[0] == cluster and k[2] == chk})
        return (cluster, jobs[0], chk) if len(jobs) == 1 else key

    def _is_late(self, event: Event) -> bool:
        """Whether ``event`` falls in the window of a case already decided; each such case is marked for review."""
        late = False
        for k, d in self._decided.items():
            if k[0] == event.cluster and d.window_start_ms - self.config.clock_skew_ms <= event.ts_ms <= d.deadline_ms:
                d.late += 1
                late = True
        return late

    # --- decisions ------------------------------------------------------------------------------------------

    def _deadline(self, events: list[Event]) -> int:
        at = failure_at(events)
        return (at if at is not None else min(e.ts_ms for e in events)) + self.config.lookahead_ms

    def _decide_ready(self) -> list[Verdict]:
        out: list[Verdict] = []
        if not self._marks.warmed_up():
            return out
        order = sorted(self._cases, key=lambda k: (self._deadline(self._cases[k]), k))
        for key in order:
            events = self._cases.get(key)
            if not events:
                continue
            deadline = self._deadline(events)
            if not all(self._marks.has_passed(src, deadline) for src in self._marks.sources(key[0])):
                break
            verdict = self._decide(key, deadline)
            if verdict is not None:
                out.append(verdict)
        return out + self._revise_ready()

    def _revise_ready(self) -> list[Verdict]:
        """Decided cases that late evidence reached, judged again once every source has passed their deadline; a
        revision is published only when the cause (code, hosts, known issue) changed."""
        out: list[Verdict] = []
        if not any(d.late for d in self._decided.values()):
            return out
        for key, d in sorted(self._decided.items(), key=lambda kd: (kd[1].deadline_ms, kd[0])):
            if not d.late or d.verdict is None or \
                    not all(self._marks.has_passed(src, d.deadline_ms) for src in self._marks.sources(key[0])):
                continue
            late, d.late = d.late, 0
            old = d.verdict
            new = self._judge(key[0], old.job_id or "", key[2], d.events, d.trigger, d.deadline_ms, old.recurrence)
            self._awaiting.register(key, new)
            was, now = old.root_cause, new.root_cause
            if (now.code, now.hosts, now.known_issue) == (was.code, was.hosts, was.known_issue):
                continue
            d.verdict = replace(new, revision=old.revision + 1, revision_reason=(
                f"{late} late line(s) (evidence, or a DataNode log it lacked) changed the cause from {was.code} on "
                f"{', '.join(was.hosts) or '-'} "
                f"to {now.code} on {', '.join(now.hosts) or '-'}"))
            self._counts["revised"] += 1
            out.append(d.verdict)
        return out

    def _decide(self, key: CaseKey, deadline: int) -> Verdict | None:
        cluster, job, chk = key
        events = [e for e in self._cases.pop(key) if e.ts_ms <= deadline]
        if not job:
            merged = sorted(k for k in self._cases if k[0] == cluster and k[2] == chk and k[1])
            if merged:
                self._cases[merged[0]].extend(events)
                return None
            if any(k[0] == cluster and k[2] == chk for k in self._decided):
                self._counts["late_case_events"] += len(events)
                return None
        else:
            orphan = self._cases.pop((cluster, "", chk), [])
            events += [e for e in orphan if e.ts_ms <= deadline]
        if not events or not any(is_failure_signal(e) for e in events):
            return None
        trigger = self._triggers.pop(key, None) if job else self._unique_trigger(cluster, chk)
        if not job and trigger is not None:
            job = trigger.job_id
        summary = summarize(events, trigger, [])
        window_start = summary.started_at_ms if summary.started_at_ms is not None else summary.failed_at_ms
        verdict = self._judge(cluster, job, chk, events, trigger, deadline)
        self._decided[key] = Decided(min(window_start, summary.failed_at_ms), deadline, events, trigger, verdict)
        self._awaiting.register(key, verdict)
        self._counts["decided"] += 1
        return verdict

    def _judge(self, cluster: str, job: str, chk: int, events: list[Event], trigger: CheckpointTriggered | None,
               deadline: int, recurrence: Recurrence | None = None) -> Verdict:
        """The verdict on one case from what is known now; ``recurrence`` given when revising (counted once)."""
        summary = summarize(events, trigger, [])
        since = case_horizon([*events, *([trigger] if trigger is not None else [])], self.config.retention_ms)
        evidence, measured = self._evidence.up_to(cluster, deadline, since, LINK_TYPES, since + self.config.link_gap_ms)
        client = [
            e for e in evidence if isinstance(e, HdfsClientSlow) and e.path and f"/chk-{chk}/" in e.path
            and (not job or job in e.path)
        ]
        if client:
            summary = summarize(events, trigger, client)
        ctx = Context(
            cluster=cluster,
            job_id=job or None,
            checkpoint_id=chk,
            summary=summary,
            evidence=evidence,
            measured=measured,
            ip_hosts={ip: host for (c, ip), (host, ts) in self._ip_hosts.items() if c == cluster and ts <= deadline},
            sources={(h, r): clock for (c, h, r) in self._marks.sources(cluster)
                     if (clock := self._marks.clock((c, h, r))) is not None and clock.first_ts_ms <= deadline},
            guessed=frozenset((h, r) for c, h, r in self._guessed if c == cluster),
            unread={(h, r): why for (c, h, r), why in self._unread.items() if c == cluster},
            versions=self._facts.versions(cluster, deadline),
            settings=self._facts.settings(cluster, deadline),
            checkpoint_dir=self._facts.storage(cluster, deadline),
            placements=self._facts.placements(cluster, min(deadline, summary.started_at_ms or deadline)),
            decided_at_ms=deadline,
            skew_ms=self.config.clock_skew_ms,
            min_confidence=self.config.min_confidence,
            completions=self._completions.before(cluster, job, summary.failed_at_ms),
        )
        draft = decide(ctx, recurrence)
        if recurrence is None:
            recurrence = self._history.record(cluster, job or None, draft.root_cause.code, summary.failed_at_ms)
            return decide(ctx, recurrence) if recurrence is not None else draft
        return draft

    def _unique_trigger(self, cluster: str, chk: int) -> CheckpointTriggered | None:
        found = [t for k, t in sorted(self._triggers.items()) if k[0] == cluster and k[2] == chk]
        return found[0] if len(found) == 1 else None

    # --- state ----------------------------------------------------------------------------------------------

    def _evict(self) -> None:
        """Drop evidence, triggers and decided marks older than each cluster's horizon (see ``horizons``)."""
        retention = self.config.retention_ms
        held = self._awaiting.waiting() | {k for k, d in self._decided.items() if d.late}
        horizons = eviction_horizons(self._marks, self._cases, self._decided, held, retention)
        link_gap = self.config.link_gap_ms
        clusters = self._evidence.clusters  # from the newest horizon of theirs on, every event is kept
        surely = max(horizons[c] for c in clusters) + max(link_gap, 0) if clusters and clusters <= horizons.keys() \
            else None
        self._counts["evicted"] += self._evidence.keep(
            lambda e: e.ts_ms >= horizons.get(e.cluster, e.ts_ms) + (link_gap if isinstance(e, LINK_TYPES) else 0),
            surely)
        self._triggers = {k: t for k, t in self._triggers.items() if t.ts_ms >= horizons.get(k[0], t.ts_ms)}
        self._decided = {k: d for k, d in self._decided.items() if d.deadline_ms >= horizons.get(k[0], d.deadline_ms)}
        self._awaiting.keep_only(self._decided)
        self._history.evict(horizons)

    @property
    def stats(self) -> dict[str, int]:
        return {
            **self._counts,
            "open_cases": len(self._cases),
            "evidence_held": len(self._evidence.events),
            "triggers_held": len(self._triggers),
            "sources": self._marks.count(),
        }

    def snapshot(self) -> dict[str, Any]:
        try:
            return self._snapshot(self._packer)
        finally:
            self._packer.round_done()

    def _snapshot(self, pack: Packer) -> dict[str, Any]:
        return {
            "version": SNAPSHOT_VERSION,
            "watermarks": self._marks.snapshot(),
            "triggers": [pack(t) for _, t in sorted(self._triggers.items())],
            "cases": [[list(k), pack.many(evs)] for k, evs in sorted(self._cases.items())],
            "evidence": pack.many(self._evidence.events),
            "ip_hosts": [[c, ip, h, ts] for (c, ip), (h, ts) in sorted(self._ip_hosts.items())],
            **self._facts.snapshot(),
            "decided": [[list(k), pack_decided(d, pack)] for k, d in sorted(self._decided.items())],
            "history": self._history.snapshot(),
            "completions": self._completions.snapshot(),
            "counts": dict(self._counts),
            "guessed": sorted(list(k) for k in self._guessed),
            "unread": [[c, h, r, why] for (c, h, r), why in sorted(self._unread.items())],
        }

    @classmethod
    def restore(cls, config: EngineConfig, data: dict[str, Any]) -> Engine:
        if data.get("version") != SNAPSHOT_VERSION:
            raise ValueError(f"unsupported engine snapshot version {data.get('version')!r}")
        engine = cls(config)
        engine._marks = Watermarks.restore(config.out_of_orderness_ms, config.idle_timeout_ms, data["watermarks"])
        for d in data["triggers"]:
            t = unpack(d)
            assert isinstance(t, CheckpointTriggered)
            engine._triggers[(t.cluster, t.job_id, t.checkpoint_id)] = t
        for key, evs in data["cases"]:
            engine._cases[(key[0], key[1], key[2])] = [unpack(e) for e in evs]
        engine._evidence = EvidenceStore.of(unpack(e) for e in data["evidence"])
        engine._ip_hosts = {(c, ip): (h, ts) for c, ip, h, ts in data["ip_hosts"]}
        engine._facts = Facts.restore(data)
        engine._decided = {(k[0], k[1], k[2]): unpack_decided(d) for k, d in data["decided"]}
        for key, d in engine._decided.items():
            if d.verdict is not None:
                engine._awaiting.register(key, d.verdict)
        engine._history = History.restore(data["history"])
        engine._completions = Completions.restore(data.get("completions", []))
        engine._counts.update(data["counts"])
        engine._counts.setdefault("revised", 0)
        engine._guessed = {(c, h, r) for c, h, r in data.get("guessed", ())}
        engine._unread = {(c, h, r): why for c, h, r, why in data.get("unread", ())}
        return engine
