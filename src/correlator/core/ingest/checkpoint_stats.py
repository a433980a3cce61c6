"""The JobManager's REST checkpoint statistics (``/jobs/:id/checkpoints/details/:n`` and its ``subtasks/:vertex``)
as a checkpoint span: for versions and deployments whose logs carry no span, ``correlator flink-stats`` polls them.

Pure: the poller hands in the decoded JSON. The span says what the logs cannot: which tasks never acknowledged a failed
checkpoint (its barriers never got through them, or their snapshot never finished) and, from the subtasks'
summaries, the longest start delay, alignment, synchronous and asynchronous part of each checkpoint.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from correlator.core.events import CheckpointSpan

FINAL = ("COMPLETED", "FAILED")
PHASES = (("maxStartDelayMs", ("start_delay",)), ("maxAlignmentMs", ("alignment", "duration")),
          ("maxSyncMs", ("checkpoint_duration", "sync")), ("maxAsyncMs", ("checkpoint_duration", "async")))
"""Span attribute ← the path of a subtasks summary's statistic (its ``max`` is taken)."""


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0 else None


def _max_of(summary: Mapping[str, Any], path: tuple[str, ...]) -> int | None:
    node: Any = summary
    for key in path:
        node = node.get(key) if isinstance(node, Mapping) else None
    return _int(node.get("max")) if isinstance(node, Mapping) else None


def span_of(job_id: str, names: Mapping[str, str], details: Mapping[str, Any],
            subtasks: Mapping[str, Mapping[str, Any]], *, cluster: str, host: str, ref: str) -> CheckpointSpan | None:
    """The span of one checkpoint in a final state; ``None`` for one still running or a response of another shape."""
    status = details.get("status")
    chk, trigger = _int(details.get("id")), _int(details.get("trigger_timestamp"))
    if status not in FINAL or chk is None or trigger is None:
        return None
    last_ack = _int(details.get("latest_ack_timestamp"))
    ended = _int(details.get("failure_timestamp")) if status == "FAILED" else None
    found = details.get("tasks")
    tasks: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    waiting = sorted(names.get(v, v) for v, t in tasks.items() if isinstance(t, Mapping)
                     and (_int(t.get("num_acknowledged_subtasks")) or 0) < (_int(t.get("num_subtasks")) or 0))
    phases: list[tuple[str, int]] = []
    for attribute, path in PHASES:
        values = [m for s in subtasks.values() if isinstance(s.get("summary"), Mapping)
                  and (m := _max_of(s["summary"], path)) is not None]
        if values:
            phases.append((attribute, max(values)))
    unacked = 0
    for t in tasks.values():
        if isinstance(t, Mapping):
            unacked += max(0, (_int(t.get("num_subtasks")) or 0) - (_int(t.get("num_acknowledged_subtasks")) or 0))
    phases.append(("unacknowledgedSubtasks", unacked))
    return CheckpointSpan(
        ts_ms=ended or last_ack or trigger, cluster=cluster, host=host, role="jobmanager", ref=ref, job_id=job_id,
        checkpoint_id=chk, status=str(status), start_ms=trigger, end_ms=last_ack if last_ack else trigger,
        full_size=_int(details.get("state_size")), checkpointed_size=_int(details.get("checkpointed_size")),
        phases=tuple(phases), waiting_on=tuple(waiting),
    )
