"""What failing checkpoints cost an exactly-once Kafka sink: a warning before its open transactions time out, and a
record of each one the broker aborted.

The sink commits a checkpoint's transaction when the checkpoint completes; the transaction was opened when the
previous checkpoint's barrier passed the sink, so while checkpoints keep failing, the oldest open transaction has been
open since the last completed checkpoint was triggered. Once that age reaches the producer's
``transaction.timeout.ms`` (its configuration dump says it), the broker rolls the transaction back and its records are
lost: the commit that follows fails. A ``risk`` record (cause ``transaction_timeout``) is raised once half the timeout
has gone by, with the time left; it is withdrawn when a checkpoint completes in time, superseded when the broker
aborts. Each abort (or, without the broker's log, each failed commit) becomes a :class:`TransactionLoss`.

Like every part of the core it reads event time only: a rerun over the same logs gives the same records.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

from correlator.core.events import (
    CheckpointCompleted,
    CheckpointExpired,
    CheckpointFailed,
    CheckpointTriggered,
    Event,
    JobStatus,
    TransactionAborted,
    TransactionCommitFailed,
    TransactionSetting,
    iso_ms,
    sink_checkpoint,
    sink_prefix,
)
from correlator.core.explain.durations import clock, secs, span
from correlator.core.explain.risk import Risk, RiskStatus, risk_from_dict, risk_to_dict

RAISE_SHARE = 0.5
"""The warning is raised once the oldest open transaction has used this share of its timeout."""
BROKER_CHECK_MS = 10_000
"""How often a broker looks for timed-out transactions by default
(``transaction.abort.timed.out.transaction.cleanup.interval.ms``): an abort comes up to this long after the timeout."""
TIMEOUT_KEY = "transaction.timeout.ms"
LOSS_SCHEMA = "correlator.loss/v1"
LossEvidence = Literal["broker_abort", "commit_failed"]
FAILED_KEPT = 200
TRIGGERS_KEPT = 64
"""Trigger times kept per job: a transaction of checkpoint N was opened at checkpoint N-1's trigger."""


@dataclass(frozen=True, slots=True)
class TransactionLoss:
    """Records an exactly-once Kafka sink lost: the broker aborted a transaction that outlived its timeout (or the
    sink's committer could not commit one). ``line`` is the log line that shows it (untrusted text)."""

    loss_id: str
    cluster: str
    job_id: str | None
    as_of_ms: int
    evidence: LossEvidence
    transactional_id: str | None
    checkpoint_id: int | None
    """The checkpoint whose completion would have committed it (from the sink's transactional id), where known."""
    failed_checkpoints: tuple[int, ...]
    """The job's checkpoints that failed from the last completed one until the loss."""
    opened_at_ms: int | None
    """When the transaction was opened: the trigger of the job's last completed checkpoint before the failures."""
    timeout_ms: int | None
    headline: str
    advice: tuple[str, ...]
    line: str
    refs: tuple[str, ...]

    def caused_by(self, cluster: str, job_id: str | None, checkpoint_id: int | None) -> bool:
        """Whether that failed checkpoint is one of those that left the transaction uncommitted (its job's)."""
        return (cluster, job_id) == (self.cluster, self.job_id) and checkpoint_id in self.failed_checkpoints


def loss_to_dict(loss: TransactionLoss) -> dict[str, Any]:
    """The record as published: ``schema`` first (it tells a loss from a risk or a verdict in a mixed stream)."""
    out: dict[str, Any] = {"schema": LOSS_SCHEMA, "as_of": iso_ms(loss.as_of_ms), **asdict(loss)}
    for name in ("failed_checkpoints", "advice", "refs"):
        out[name] = list(out[name])
    return out


def loss_from_dict(data: dict[str, Any]) -> TransactionLoss:
    fields = {k: v for k, v in data.items() if k in TransactionLoss.__dataclass_fields__}
    if fields.get("evidence") not in ("broker_abort", "commit_failed"):
        raise ValueError(f"not a loss record: evidence {fields.get('evidence')!r}")
    for name in ("failed_checkpoints", "advice", "refs"):
        fields[name] = tuple(fields[name])
    return TransactionLoss(**fields)


def loss_text(loss: TransactionLoss) -> str:
    """A loss record as ``analyze --format text`` prints it."""
    lines = [f"records lost by an exactly-once Kafka sink at {iso_ms(loss.as_of_ms)} ({loss.loss_id})",
             f"  {loss.headline}", f"  line: {loss.line}"]
    if loss.advice:
        lines.append("  what to do:")
        lines += [f"    - {step}" for step in loss.advice]
    return "\n".join(lines)


@dataclass(slots=True)
class _Job:
    triggers: dict[int, int] = field(default_factory=dict)
    completed_trigger_ms: int | None = None
    """When the last completed checkpoint was triggered: the oldest open transaction was opened then."""
    completed_id: int | None = None
    running_ms: int | None = None
    """When the job last switched to RUNNING: a restarted sink opens its transactions anew."""
    ended: tuple[int | None, tuple[int, ...], str] | None = None
    """The streak of failures the last completed checkpoint ended: (opened, failed checkpoints, first failure's ref),
    for a commit that fails as that checkpoint completes."""
    failed: list[tuple[int, int, str]] = field(default_factory=list)
    """(checkpoint, time, ref) of each failure since the last completed checkpoint."""
    raised: Risk | None = None


class TransactionWatch:
    """Per cluster, the transaction timeout its sinks' producers logged; per job, how long its checkpoints have been
    failing. ``observe`` returns the risk records due; ``take_losses`` the loss records found since it was last
    called."""

    def __init__(self) -> None:
        self._timeouts: dict[str, dict[str, int]] = {}
        """Cluster → transactional id prefix → the shortest timeout its producers logged."""
        self._jobs: dict[tuple[str, str], _Job] = {}
        self._lost: set[tuple[str, str, int | None]] = set()
        """(cluster, transactional id, when it was opened) of every loss recorded (a restarted sink reuses ids)."""
        self._due: list[TransactionLoss] = []

    def take_losses(self) -> list[TransactionLoss]:
        due, self._due = self._due, []
        return due

    def observe(self, event: Event) -> list[Risk]:
        if isinstance(event, TransactionSetting):
            prefixes = self._timeouts.setdefault(event.cluster, {})
            prefix = event.prefix or sink_prefix(event.transactional_id)
            prefixes[prefix] = min(event.timeout_ms, prefixes.get(prefix, event.timeout_ms))
            return []
        if isinstance(event, TransactionAborted):
            return self._aborted(event)
        if isinstance(event, TransactionCommitFailed):
            self._commit_failed(event)
            return []
        job_id = getattr(event, "job_id", None)
        if not job_id or not isinstance(event, CheckpointTriggered | CheckpointCompleted | CheckpointExpired
                                        | CheckpointFailed | JobStatus):
            return []
        job = self._jobs.setdefault((event.cluster, job_id), _Job())
        if isinstance(event, JobStatus):
            if event.to_state == "RUNNING":
                job.running_ms = event.ts_ms
            return []
        if isinstance(event, CheckpointTriggered):
            job.triggers[event.checkpoint_id] = event.trigger_ts_ms or event.ts_ms
            for old in sorted(job.triggers)[:-TRIGGERS_KEPT]:
                del job.triggers[old]
            return self._judge(job, event, job_id) if job.failed else []
        if isinstance(event, CheckpointCompleted):
            return self._completed(job, event, job_id)
        if all(c != event.checkpoint_id for c, _, _ in job.failed):
            job.failed.append((event.checkpoint_id, event.ts_ms, event.ref))
            del job.failed[:-FAILED_KEPT]
        return self._judge(job, event, job_id)

    def _timeout(self, cluster: str) -> int | None:
        """The shortest transaction timeout the cluster's producers logged (the producer's dump names no job)."""
        known = self._timeouts.get(cluster)
        return min(known.values()) if known else None

    def _opened(self, job: _Job) -> int | None:
        """When the oldest open transaction was opened: at the last completed checkpoint's trigger, or when the job
        last started running if that was later (a restart reopens them), or else at the first failure."""
        known = [t for t in (job.completed_trigger_ms, job.running_ms) if t is not None]
        if known:
            return max(known)
        first = job.triggers.get(job.failed[0][0]) if job.failed else None
        return first if first is not None else (job.failed[0][1] if job.failed else None)

    def _completed(self, job: _Job, event: CheckpointCompleted, job_id: str) -> list[Risk]:
        if job.failed:
            job.ended = (self._opened(job), tuple(c for c, _, _ in job.failed), job.failed[0][2])
        raised, job.raised = job.raised, None
        job.completed_trigger_ms = job.triggers.get(event.checkpoint_id, job.completed_trigger_ms)
        job.completed_id = event.checkpoint_id
        job.failed = []
        if raised is None or raised.expiry_at_ms is None:
            return []
        if event.ts_ms >= raised.expiry_at_ms:  # too late, and no broker's line (yet) to say it: the commit will
            return [_ended(raised, "superseded", event.ts_ms,
                           f"Checkpoint {event.checkpoint_id} of job {job_id} completed at {clock(event.ts_ms)}, after "
                           f"the oldest open Kafka transaction's timeout at {clock(raised.expiry_at_ms, event.ts_ms)}: "
                           "the broker has aborted it if it looked in time; the sink's committer says whether its "
                           "records were lost.")]
        return [_ended(raised, "withdrawn", event.ts_ms,
                       f"Checkpoint {event.checkpoint_id} of job {job_id} completed at {clock(event.ts_ms)}, "
                       f"{secs(raised.expiry_at_ms - event.ts_ms)} before the oldest open Kafka transaction's "
                       "timeout: its transactions commit, the warning is withdrawn.")]

    def _judge(self, job: _Job, event: Event, job_id: str) -> list[Risk]:
        timeout, opened = self._timeout(event.cluster), self._opened(job)
        if job.raised is not None or timeout is None or opened is None:
            return []
        age = event.ts_ms - opened
        if age < RAISE_SHARE * timeout or age >= timeout:
            return []
        job.raised = self._risk(job, event, job_id, timeout, opened)
        return [job.raised]

    def _risk(self, job: _Job, event: Event, job_id: str, timeout: int, opened: int) -> Risk:
        now, expiry = event.ts_ms, opened + timeout
        failed = [c for c, _, _ in job.failed]
        headline = (f"Checkpoints of job {job_id} have failed since checkpoint {failed[0]} ({len(failed)} in a row): "
                    f"the exactly-once Kafka sink's oldest open transaction, opened at {clock(opened, now)}, has been "
                    f"open {span(now - opened)} of its {span(timeout)} {TIMEOUT_KEY}. The broker aborts it at about "
                    f"{clock(expiry, now)}, in {secs(expiry - now)}, and its records are lost unless a checkpoint "
                    "completes before then.")
        advice = (
            "Make a checkpoint complete before then: the failures' verdicts say what holds them.",
            f"Where the broker allows it (transaction.max.timeout.ms), raise the sink's {TIMEOUT_KEY} well above the "
            "longest outage of checkpoints you want to survive; it is read when the job starts.",
            "Restart the job from its last completed checkpoint or savepoint if the records are lost: that replays "
            "them.",
        )
        identity = f"{event.cluster}\x00{job_id}\x00{opened}\x00transactions".encode()
        refs = (job.failed[0][2], event.ref)
        return Risk(
            risk_id="risk-" + hashlib.sha256(identity).hexdigest()[:16], status="raised", cluster=event.cluster,
            job_id=job_id, as_of_ms=now, cause="transaction_timeout", headline=headline, advice=advice,
            timeout_ms=timeout, timeout_source="producer_configuration", window_start_ms=opened,
            points=len(failed), duration_from_ms=0, duration_now_ms=now - opened, slope_ms_per_hour=0.0,
            slope_low_ms_per_hour=0.0, slope_high_ms_per_hour=0.0, expiry_at_ms=expiry,
            expiry_earliest_ms=expiry, expiry_latest_ms=expiry + BROKER_CHECK_MS, size_from_bytes=None,
            size_now_bytes=None, series=tuple((t, t - opened, None) for _, t, _ in job.failed), refs=refs,
            time_left_ms=expiry - now, failed_checkpoints=tuple(failed),
        )

    def _streak(self, job: _Job, at_ms: int) -> tuple[int | None, tuple[int, ...], tuple[str, ...]]:
        """The job's failures the loss belongs to: (opened, failed checkpoints, first failure's ref); the streak the
        last completed checkpoint ended when none is running (the committer fails as that checkpoint completes)."""
        if job.failed:
            return self._opened(job), tuple(c for c, t, _ in job.failed if t <= at_ms), (job.failed[0][2],)
        if job.ended is not None:
            return job.ended[0], job.ended[1], (job.ended[2],)
        return None, (), ()

    def _failing_job(self, cluster: str, at_ms: int) -> tuple[str, _Job] | None:
        """The job of the cluster whose checkpoints have been failing longest at ``at_ms`` (the transaction's job: no
        line of the broker or the client names it), else the one whose streak of failures ended last."""
        failing = [(opened, job_id, job) for (c, job_id), job in self._jobs.items()
                   if c == cluster and job.failed and (opened := self._opened(job)) is not None and opened <= at_ms]
        if failing:
            _, job_id, job = min(failing, key=lambda f: (f[0], f[1]))
            return job_id, job
        ended = [(job.ended[0] or 0, job_id, job) for (c, job_id), job in self._jobs.items()
                 if c == cluster and job.ended is not None]
        if not ended:
            return None
        _, job_id, job = max(ended, key=lambda f: (f[0], f[1]))
        return job_id, job

    def _aborted(self, event: TransactionAborted) -> list[Risk]:
        found = self._failing_job(event.cluster, event.ts_ms)
        out: list[Risk] = []
        job_id, job = found if found is not None else (None, None)
        if job is not None and job.raised is not None:
            raised, job.raised = job.raised, None
            out.append(_ended(raised, "superseded", event.ts_ms,
                              f"The broker aborted transaction {event.transactional_id} at "
                              f"{clock(event.ts_ms, raised.as_of_ms)} ({TIMEOUT_KEY} passed) and discarded its "
                              f"records: the loss record takes over from the warning of "
                              f"{clock(raised.as_of_ms, event.ts_ms)}."))
        self._lose(event, "broker_abort", event.transactional_id, job_id, job, event.line)
        # the committer's later failure of the same transaction is the same loss
        return out

    def _commit_failed(self, event: TransactionCommitFailed) -> None:
        tid = event.transactional_id
        if any(c == event.cluster and (tid is None or t == tid) for c, t, _ in self._lost):
            return  # the broker's abort of it is recorded already (an unnamed one: any of the cluster's)
        found = self._failing_job(event.cluster, event.ts_ms)
        job_id, job = found if found is not None else (None, None)
        self._lose(event, "commit_failed", tid, job_id, job, event.message)

    def _lose(self, event: Event, evidence: LossEvidence, tid: str | None, job_id: str | None, job: _Job | None,
              line: str) -> None:
        opened, failed, first = self._streak(job, event.ts_ms) if job is not None else (None, (), ())
        checkpoint = sink_checkpoint(tid) if tid else None
        if job is not None and checkpoint is not None:
            opened, failed = _own(job, checkpoint, event.ts_ms, opened, failed)
        key = (event.cluster, tid or str(event.ts_ms), opened)
        if key in self._lost:
            return
        self._lost.add(key)
        timeout = self._timeout(event.cluster)
        if isinstance(event, TransactionCommitFailed) and event.timeout_ms is not None:
            timeout = event.timeout_ms
        self._due.append(TransactionLoss(
            loss_id="loss-" + hashlib.sha256(f"{key[0]}\x00{key[1]}\x00{opened}".encode()).hexdigest()[:16],
            cluster=event.cluster, job_id=job_id, as_of_ms=event.ts_ms, evidence=evidence, transactional_id=tid,
            checkpoint_id=checkpoint, failed_checkpoints=failed, opened_at_ms=opened, timeout_ms=timeout,
            headline=_loss_headline(event, evidence, tid, job_id, checkpoint, failed, opened, timeout),
            advice=_LOSS_ADVICE, line=line, refs=(event.ref, *first),
        ))

    # --- state -------------------------------------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        return {
            "timeouts": self._timeouts,
            "jobs": [[cluster, job_id, [[k, v] for k, v in j.triggers.items()],
                      [j.completed_trigger_ms, j.completed_id],
                      [list(f) for f in j.failed], risk_to_dict(j.raised) if j.raised else None, j.running_ms,
                      [j.ended[0], list(j.ended[1]), j.ended[2]] if j.ended else None]
                     for (cluster, job_id), j in self._jobs.items()],
            "lost": [list(k) for k in sorted(self._lost, key=str)],
        }

    @classmethod
    def restore(cls, data: dict[str, Any]) -> TransactionWatch:
        watch = cls()
        watch._timeouts = {str(c): {str(p): int(t) for p, t in v.items()} for c, v in data.get("timeouts", {}).items()}
        for cluster, job_id, triggers, completed, failed, raised, running, ended in data.get("jobs", []):
            watch._jobs[(cluster, job_id)] = _Job(
                ended=(ended[0], tuple(int(c) for c in ended[1]), str(ended[2])) if ended else None,
                triggers={int(k): int(v) for k, v in triggers}, completed_trigger_ms=completed[0],
                completed_id=completed[1], running_ms=running,
                failed=[(int(c), int(t), str(r)) for c, t, r in failed],
                raised=risk_from_dict(raised) if raised else None)
        watch._lost = {(str(c), str(t), None if o is None else int(o)) for c, t, o in data.get("lost", [])}
        return watch


def _own(job: _Job, checkpoint: int, at_ms: int, opened: int | None,
         failed: tuple[int, ...]) -> tuple[int | None, tuple[int, ...]]:
    """When the sink's transaction of ``checkpoint`` was opened (the previous checkpoint's trigger, or the job's
    restart after it) and the failures that left it uncommitted (its checkpoint's and the later ones')."""
    before = job.completed_trigger_ms if job.completed_id == checkpoint - 1 else job.triggers.get(checkpoint - 1)
    if before is not None:
        restarted = job.running_ms if job.running_ms is not None and before < job.running_ms <= at_ms else None
        opened = restarted or before
    return opened, tuple(c for c in failed if c >= checkpoint) or failed


_LOSS_ADVICE = (
    "Replay the lost records: restart the job from a checkpoint or savepoint taken before the transaction was opened "
    "(the source re-reads from there); downstream read_committed consumers never saw them.",
    f"Raise the sink's {TIMEOUT_KEY} (up to the broker's transaction.max.timeout.ms) above the longest time "
    "checkpoints may fail in a row, and fix what failed them (their verdicts).",
)


def _loss_headline(event: Event, evidence: LossEvidence, tid: str | None, job_id: str | None,
                   checkpoint: int | None, failed: tuple[int, ...], opened: int | None, timeout: int | None) -> str:
    what = f"transaction {tid}" if tid else "a transaction"
    if checkpoint is not None:
        what += f" (checkpoint {checkpoint})"
    how = ("The broker aborted " if evidence == "broker_abort" else "The Kafka sink's committer could not commit ")
    text = f"{how}{what} at {clock(event.ts_ms, opened if opened is not None else event.ts_ms)}"
    if timeout is not None:
        text += f": it outlived its {span(timeout)} {TIMEOUT_KEY}"
    if opened is not None:
        text += f", open since {clock(opened, event.ts_ms)}"
    text += ". Its records were discarded"
    if job_id is not None and failed:
        shown = ", ".join(str(c) for c in failed[:12]) + (", …" if len(failed) > 12 else "")
        text += f": checkpoints of job {job_id} failed in a row ({shown}), so none committed it"
    if evidence == "commit_failed":
        return text + "; a later checkpoint completed without them, so they are lost."
    return text + ("; they are lost unless the job restarts from its last completed checkpoint (the one before the "
                   "failures) before another completes: a checkpoint completing after the abort cannot commit it.")


def _ended(raised: Risk, status: RiskStatus, at_ms: int, headline: str) -> Risk:
    return replace(raised, status=status, as_of_ms=at_ms, headline=headline, advice=(),
                   time_left_ms=None if raised.expiry_at_ms is None else raised.expiry_at_ms - at_ms)
