"""Early warning: a ``risk`` record when a job's completed checkpoints are heading for its checkpoint timeout.

Every completed checkpoint is logged with its duration and size. A job whose checkpoints creep toward the timeout
is heading for the restart loop a verdict explains only afterwards; the trend of the last completions says so
before. The rules keep it quiet: a rise must be steady (Mann–Kendall, one in a thousand for independent noise), and
the predicted expiry must lie no further ahead than the series reaches back, so a trend is never stretched beyond its
own evidence. A record is published only when the state changes: ``raised``; ``updated`` when the predicted expiry
moved by more than half a checkpoint's spacing and a tenth of the time left; then ``withdrawn`` (the rise no longer holds) or ``superseded`` (a checkpoint of the job failed:
its verdict takes over).

Like every part of the core it reads event time only, so a rerun over the same logs gives the same records.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, get_args

from correlator.core.events import (
    CheckpointCompleted,
    CheckpointExpired,
    CheckpointFailed,
    CheckpointTriggered,
    Event,
    FlinkSetting,
    iso_ms,
)
from correlator.core.explain.causes import Code
from correlator.core.explain.registry import cause as registry_entry
from correlator.core.explain.durations import HOUR_MS, clock, mib, secs, span
from correlator.core.explain.trend import Trend, theil_sen

RiskStatus = Literal["raised", "updated", "withdrawn", "superseded"]
RiskCause = Literal["state_growth", "duration_growth", "transaction_timeout"]
"""``transaction_timeout``: failing checkpoints bring an exactly-once Kafka sink's oldest open transaction near its
timeout (``core/explain/transactions.py``); the others are trends of completed checkpoints."""
TimeoutSource = Literal["expired_checkpoint", "job_configuration", "configuration", "checkpoint_interval",
                        "flink_default", "producer_configuration"]
"""Where the limit a trend is judged against came from, most exact first; ``checkpoint_interval``: no timeout was
shown, and the checkpoints are still shorter than their spacing, which a longer one would delay every later one
past; ``producer_configuration``: a Kafka transaction's timeout, as the sink's producer logged it."""

MIN_POINTS = 8
MAX_POINTS = 60
Z_RAISE = 3.09
"""One-sided p = 0.001: how steady a rise must be to raise a risk."""
Z_KEEP = 1.64
"""One-sided p = 0.05: a raised risk stays while its rise is still this likely (no flapping at the edge)."""
GROWTH = 1.5
"""The state counts as the cause when its fitted size rose by this factor over the window, steadily."""
FLINK_DEFAULT_TIMEOUT_MS = 600_000
TIMEOUT_KEY = "execution.checkpointing.timeout"
DUE: dict[str, str] = {"checkpoint_interval": "a checkpoint outgrows its spacing"}
"""What the predicted moment is, where it is not the first expiry."""
TRIGGERS_KEPT = 8


@dataclass(frozen=True, slots=True)
class Risk:
    """One state change of a job's early warning; ``risk_id`` stays the same from ``raised`` to its end."""

    risk_id: str
    status: RiskStatus
    cluster: str
    job_id: str
    as_of_ms: int
    cause: RiskCause
    headline: str
    advice: tuple[str, ...]
    timeout_ms: int
    timeout_source: TimeoutSource
    window_start_ms: int
    points: int
    duration_from_ms: int
    """Fitted at the window's start and at ``as_of_ms``: the trend's own values, not single noisy checkpoints."""
    duration_now_ms: int
    slope_ms_per_hour: float
    slope_low_ms_per_hour: float
    slope_high_ms_per_hour: float
    expiry_at_ms: int | None
    """When the first checkpoint should expire (see ``_expiry``); None when the trend no longer rises."""
    expiry_earliest_ms: int | None
    expiry_latest_ms: int | None
    """None when even a flat trend is within the slope's interval: no latest time can be given."""
    size_from_bytes: int | None
    size_now_bytes: int | None
    series: tuple[tuple[int, int, int | None], ...]
    """(time, duration ms, size bytes) of each completed checkpoint of the window: the chart's data (for a
    ``transaction_timeout``: each failed checkpoint, the age of the oldest open transaction then, no size)."""
    refs: tuple[str, ...]
    time_left_ms: int | None = None
    """``transaction_timeout``: from ``as_of_ms`` until the oldest open transaction's timeout."""
    failed_checkpoints: tuple[int, ...] = ()
    """``transaction_timeout``: the job's checkpoints that failed since its last completed one."""


RISK_SCHEMA = "correlator.risk/v1"


def risk_to_dict(risk: Risk) -> dict[str, Any]:
    """The record as published: ``schema`` first (it tells a risk from a verdict in a mixed stream), then ``as_of``
    readable, then every field."""
    out: dict[str, Any] = {"schema": RISK_SCHEMA, "as_of": iso_ms(risk.as_of_ms), **asdict(risk)}
    out["advice"] = list(risk.advice)
    out["series"] = [list(p) for p in risk.series]
    out["refs"] = list(risk.refs)
    out["failed_checkpoints"] = list(risk.failed_checkpoints)
    return out


def risk_from_dict(data: dict[str, Any]) -> Risk:
    fields = {k: v for k, v in data.items() if k in Risk.__dataclass_fields__}
    if fields.get("status") not in get_args(RiskStatus) or fields.get("cause") not in get_args(RiskCause):
        raise ValueError(f"not a risk record: status {fields.get('status')!r}, cause {fields.get('cause')!r}")
    fields["advice"] = tuple(fields["advice"])
    fields["series"] = tuple((int(t), int(d), None if s is None else int(s)) for t, d, s in fields["series"])
    fields["refs"] = tuple(fields["refs"])
    fields["failed_checkpoints"] = tuple(int(c) for c in fields.get("failed_checkpoints", ()))
    return Risk(**fields)


def risk_text(risk: Risk) -> str:
    """A risk record as ``analyze --format text`` prints it beside the verdicts."""
    word = {"raised": "early warning", "updated": "early warning updated", "withdrawn": "warning withdrawn",
            "superseded": "warning superseded"}
    lines = [f"{word[risk.status]} for job {risk.job_id} at {iso_ms(risk.as_of_ms)} ({risk.risk_id})",
             f"  {risk.headline}"]
    if risk.advice:
        lines.append("  what to do:")
        lines += [f"    - {step}" for step in risk.advice]
    return "\n".join(lines)


@dataclass(slots=True)
class _Job:
    points: list[tuple[int, int, int | None, str]] = field(default_factory=list)
    """(time, duration, size, ref) of the last completions, oldest first."""
    last_id: int = -1
    timeout_ms: int | None = None
    """From an expired checkpoint of this job: exact for this job, whatever the cluster's default."""
    configured_ms: int | None = None
    """The job's own checkpoint timeout, from its REST checkpoint configuration (a timeout set in code included)."""
    raised: Risk | None = None
    triggers: dict[int, int] = field(default_factory=dict)


class RiskWatch:
    """Per job, the trend of its completed checkpoints against its timeout; ``observe`` returns the records due."""

    def __init__(self) -> None:
        self._jobs: dict[tuple[str, str], _Job] = {}
        self._settings: dict[str, int] = {}
        """Cluster → the checkpoint timeout its JobManager's configuration logged."""

    def observe(self, event: Event) -> list[Risk]:
        if isinstance(event, FlinkSetting):
            if event.key == TIMEOUT_KEY and event.job_id is not None:
                self._jobs.setdefault((event.cluster, event.job_id), _Job()).configured_ms = event.value_ms
            elif event.key == TIMEOUT_KEY:
                self._settings[event.cluster] = event.value_ms
            return []
        job_id = getattr(event, "job_id", None)
        if not job_id:
            return []
        job = self._jobs.setdefault((event.cluster, job_id), _Job())
        if isinstance(event, CheckpointTriggered):
            job.triggers[event.checkpoint_id] = event.trigger_ts_ms or event.ts_ms
            for old in sorted(job.triggers)[:-TRIGGERS_KEPT]:
                del job.triggers[old]
            return []
        if isinstance(event, CheckpointCompleted):
            return self._completed(job, event)
        if isinstance(event, CheckpointExpired | CheckpointFailed):
            return self._failed(job, event)
        return []

    def _completed(self, job: _Job, event: CheckpointCompleted) -> list[Risk]:
        if event.checkpoint_id <= job.last_id or event.duration_ms is None:
            return []
        job.last_id = event.checkpoint_id
        job.points.append((event.ts_ms, event.duration_ms, event.size_bytes, event.ref))
        del job.points[:-MAX_POINTS]
        if len(job.points) < MIN_POINTS or job.points[-1][0] <= job.points[0][0]:
            return []
        return self._judge(job, event)

    def _failed(self, job: _Job, event: CheckpointExpired | CheckpointFailed) -> list[Risk]:
        started = job.triggers.get(event.checkpoint_id)
        if isinstance(event, CheckpointExpired) and started is not None and event.ts_ms > started:
            job.timeout_ms = round((event.ts_ms - started) / 1000) * 1000 or event.ts_ms - started
        elif isinstance(event, CheckpointFailed) and event.timeout_ms:
            job.timeout_ms = event.timeout_ms
        raised, job.raised, job.points = job.raised, None, []
        if raised is None:
            return []
        return [_ended(raised, "superseded", event.ts_ms,
                       f"Checkpoint {event.checkpoint_id} of job {raised.job_id} failed at "
                       f"{clock(event.ts_ms, raised.as_of_ms)}: its verdict takes over from the warning of "
                       f"{clock(raised.as_of_ms, event.ts_ms)}"
                       + (f", which predicted the first expiry at {clock(raised.expiry_at_ms, event.ts_ms)}."
                          if raised.expiry_at_ms is not None else "."))]

    def _timeout(self, job: _Job, cluster: str, spacing: int, fitted_now: float) -> tuple[int, TimeoutSource]:
        """The limit to judge against. With no timeout shown, a job still checkpointing faster than its spacing is
        judged against the spacing: a checkpoint longer than its interval delays every later one, whatever the
        timeout set in its code (which no log shows); past that, Flink's default is assumed and said to be."""
        if job.timeout_ms is not None:
            return job.timeout_ms, "expired_checkpoint"
        if job.configured_ms is not None:
            return job.configured_ms, "job_configuration"
        if cluster in self._settings:
            return self._settings[cluster], "configuration"
        if fitted_now < spacing < FLINK_DEFAULT_TIMEOUT_MS:
            return spacing, "checkpoint_interval"
        return FLINK_DEFAULT_TIMEOUT_MS, "flink_default"

    def _judge(self, job: _Job, event: CheckpointCompleted) -> list[Risk]:
        """Steadiness from the whole window, pace from its recent two thirds: the test keeps noise out, the recent
        slope follows a rise that speeds up (a client's ack queue growing with the state) or starts late."""
        start, now = job.points[0][0], job.points[-1][0]
        xs, ys = [t - start for t, *_ in job.points], [d for _, d, *_ in job.points]
        whole = theil_sen(xs, ys)
        recent_n = max(MIN_POINTS, -(-2 * len(xs) // 3))
        pace = theil_sen(xs[-recent_n:], ys[-recent_n:])
        fitted_now = pace.at(now - start)
        gaps = sorted(b[0] - a[0] for a, b in zip(job.points, job.points[1:], strict=False))
        spacing = gaps[len(gaps) // 2]
        timeout, source = self._timeout(job, event.cluster, spacing, fitted_now)
        if source == "flink_default" and job.raised is not None and job.raised.timeout_source == "checkpoint_interval":
            timeout, source = job.raised.timeout_ms, "checkpoint_interval"  # a raised warning keeps its limit
        expiry = _expiry(now, timeout - fitted_now, pace.slope, spacing // 2)
        reach = now - start
        if job.raised is None:
            if whole.z >= Z_RAISE and expiry is not None and expiry - now <= reach:
                job.raised = self._risk(job, event, whole, pace, timeout, source, spacing, "raised")
                return [job.raised]
            return []
        if whole.z < Z_KEEP or expiry is None or expiry - now > 2 * reach:
            raised, job.raised = job.raised, None
            return [_ended(raised, "withdrawn", event.ts_ms,
                           f"The checkpoint duration of job {raised.job_id} no longer rises toward its "
                           f"{secs(raised.timeout_ms)} timeout (now {secs(max(0.0, fitted_now))}): the warning of "
                           f"{clock(raised.as_of_ms)} is withdrawn.")]
        said = job.raised.expiry_at_ms
        if said is not None and abs(said - expiry) > max(spacing / 2, (said - now) / 10):
            job.raised = self._risk(job, event, whole, pace, timeout, source, spacing, "updated",
                                    job.raised.risk_id)
            return [job.raised]
        return []

    def _risk(self, job: _Job, event: CheckpointCompleted, whole: Trend, durations: Trend, timeout: int,
              source: TimeoutSource, spacing: int, status: RiskStatus, risk_id: str | None = None) -> Risk:
        points = job.points
        start, now = points[0][0], points[-1][0]
        fitted_from, fitted_now = whole.at(0), durations.at(now - start)
        until = timeout - fitted_now

        def at(slope: float, after: int) -> int | None:
            return _expiry(now, until, slope, after)

        sizes = [(t - start, s) for t, _, s, _ in points if s is not None]
        size_from = size_now = None
        grown = False
        if len(sizes) >= MIN_POINTS and sizes[-1][0] > sizes[0][0]:
            growth = theil_sen([t for t, _ in sizes], [float(s) for _, s in sizes])
            size_from, size_now = max(0, int(growth.at(0))), max(0, int(growth.at(now - start)))
            grown = growth.z >= Z_RAISE and size_now >= GROWTH * max(1, size_from)
        cause: RiskCause = "state_growth" if grown else "duration_growth"
        # a duration's noise around the crossing moves the failing checkpoint by noise / slope either way
        xs = [t - start for t, *_ in points][-len(points) * 2 // 3 or None:]
        ys = [d for _, d, *_ in points][-len(xs):]
        noise = 2 * 1.4826 * _median_abs([y - durations.at(x) for x, y in zip(xs, ys, strict=True)])
        drift = int(noise / durations.slope) if durations.slope > 0 else 0
        expiry = at(durations.slope, spacing // 2)
        latest = at(durations.low, spacing + drift)
        headline = (f"Checkpoint duration of job {event.job_id} rose from {secs(max(0.0, fitted_from))} to "
                    f"{secs(fitted_now)} over {span(now - start)} ({_timeout_words(timeout, source)}); at this rate "
                    f"{DUE.get(source, 'the first expiry is due')} at about {clock(expiry or now, now)}")
        earliest = at(durations.high, -drift)
        first, last = clock(earliest or now, now), clock(latest, now) if latest is not None else None
        if last is None:
            headline += f" (from {first} on; the rise is too uneven to say how late)."
        else:
            headline += f" (between {first} and {last})." if first != last else "."
        if grown and size_from is not None and size_now is not None:
            headline += (f" The checkpointed state grew {size_now / max(1, size_from):.1f} times over the same "
                         f"{span(now - start)} ({mib(size_from)} to {mib(size_now)}).")
        identity = f"{event.cluster}\x00{event.job_id}\x00{start}".encode()
        return Risk(
            risk_id=risk_id or "risk-" + hashlib.sha256(identity).hexdigest()[:16], status=status, cluster=event.cluster,
            job_id=event.job_id, as_of_ms=now, cause=cause, headline=headline,
            advice=_advice(cause, timeout, source, fitted_now), timeout_ms=timeout, timeout_source=source,
            window_start_ms=start, points=len(points), duration_from_ms=int(fitted_from),
            duration_now_ms=int(fitted_now), slope_ms_per_hour=durations.slope * HOUR_MS,
            slope_low_ms_per_hour=durations.low * HOUR_MS, slope_high_ms_per_hour=durations.high * HOUR_MS,
            expiry_at_ms=expiry, expiry_earliest_ms=earliest, expiry_latest_ms=latest,
            size_from_bytes=size_from, size_now_bytes=size_now,
            series=tuple((t, d, s) for t, d, s, _ in points), refs=(points[0][3], points[-1][3]),
        )

    # --- state -------------------------------------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        return {
            "settings": dict(self._settings),
            "jobs": [[cluster, job_id, [list(p) for p in j.points], j.last_id, j.timeout_ms,
                      risk_to_dict(j.raised) if j.raised else None, [[k, v] for k, v in j.triggers.items()]]
                     for (cluster, job_id), j in self._jobs.items()],
        }

    @classmethod
    def restore(cls, data: dict[str, Any]) -> RiskWatch:
        watch = cls()
        watch._settings = {str(k): int(v) for k, v in data.get("settings", {}).items()}
        for cluster, job_id, points, last_id, timeout, raised, triggers in data.get("jobs", []):
            watch._jobs[(cluster, job_id)] = _Job(
                points=[(int(t), int(d), None if s is None else int(s), str(r)) for t, d, s, r in points],
                last_id=int(last_id), timeout_ms=timeout, raised=risk_from_dict(raised) if raised else None,
                triggers={int(k): int(v) for k, v in triggers},
            )
        return watch


def _median_abs(values: list[float]) -> float:
    ordered = sorted(abs(v) for v in values)
    return ordered[len(ordered) // 2] if ordered else 0.0


def _expiry(now: int, until: float, slope: float, after: int) -> int | None:
    """When a checkpoint first expires: the fitted duration reaches the timeout (``until`` ms more of it at ``slope``),
    and the next checkpoint triggered then fails a timeout later, ``after`` ms past the crossing (half a spacing on
    average, up to a whole one; in completion time the crossing is where a checkpoint ending then took the timeout)."""
    return int(now + max(0.0, until) / slope) + after if slope > 0 else None


def _ended(raised: Risk, status: RiskStatus, at_ms: int, headline: str) -> Risk:
    return Risk(**{**{f: getattr(raised, f) for f in Risk.__dataclass_fields__},
                   "status": status, "as_of_ms": at_ms, "headline": headline, "advice": ()})


def _timeout_words(timeout: int, source: TimeoutSource) -> str:
    if source == "expired_checkpoint":
        return f"timeout {secs(timeout)}, as an expired checkpoint of the job showed"
    if source == "job_configuration":
        return f"timeout {secs(timeout)}, from the job's checkpoint configuration (REST)"
    if source == "checkpoint_interval":
        return (f"timeout unknown, so judged against the checkpoints' {secs(timeout)} spacing: a checkpoint longer "
                "than its interval delays every later one")
    if source == "configuration":
        return f"timeout {secs(timeout)}, from the JobManager's configuration"
    return (f"timeout assumed {secs(timeout)}, Flink's default: no configuration line or expired checkpoint "
            "showed the job's own")


def _advice(cause: RiskCause, timeout: int, source: TimeoutSource, fitted_now: float) -> tuple[str, ...]:
    raise_timeout = (f"To gain time now, set `{TIMEOUT_KEY}` well above the current {secs(fitted_now)} "
                     f"(it is {secs(timeout)}); this postpones the expiry, it does not stop the rise.")
    if source == "checkpoint_interval":
        raise_timeout = (f"To gain time now, check that the job's checkpoint timeout is well above the current "
                         f"{secs(fitted_now)} and give the checkpoints more room between them "
                         "(execution.checkpointing.min-pause); this postpones the trouble, it does not stop the rise.")
    if cause == "state_growth":  # the steps of the cause this warning foretells, as its verdict will give them
        steps = [f"{step.text}." for step in registry_entry(Code.FLINK_STATE_GROWTH).steps]
    else:
        steps = ["The state did not grow while checkpoints slowed down: look for backpressure (barrier alignment "
                 "and start delay in Flink's checkpoint statistics) and at the HDFS writes of the checkpoint "
                 "directory."]
    steps.append(raise_timeout)
    if source == "flink_default":
        steps.append("The timeout is assumed: if the job sets its own, this prediction is off by the difference.")
    if source in ("flink_default", "checkpoint_interval"):
        steps.append("Make the timeout known: run `correlator flink-stats --follow` beside the worker (it reads each "
                     "job's checkpoint configuration), or set execution.checkpointing.timeout in the Flink "
                     "configuration instead of in the job's code.")
    return tuple(steps)
