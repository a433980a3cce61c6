"""The JobManager's REST checkpoint statistics (``/jobs/:id/checkpoints/details/:n`` and its ``subtasks/:vertex``)
as a checkpoint span: for versions and deployments whose logs carry no span, ``correlator flink-stats`` polls them.

Pure: the poller hands in the decoded JSON. The span says what the logs cannot: which tasks never acknowledged a failed
checkpoint (its barriers never got through them, or their snapshot never finished) and, from the subtasks'
summaries, the longest start delay, alignment, synchronous and asynchronous part of each checkpoint.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from correlator.core.events import CheckpointChildSpan, CheckpointSpan, TaskDeployed

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


def _at(node: Any, *path: str) -> Any:
    for key in path:
        node = node.get(key) if isinstance(node, Mapping) else None
    return node


def children_of(job_id: str, details: Mapping[str, Any], subtasks: Mapping[str, Mapping[str, Any]], *, cluster: str,
                host: str, ref: str) -> list[CheckpointChildSpan]:
    """The checkpoint's task and subtask spans, as Flink 2.3 logs them with children: a task with its subtasks'
    maxima and no end while none acknowledged, and each subtask that acknowledged with its own phases (one that did
    not has none)."""
    status = details.get("status")
    chk, trigger = _int(details.get("id")), _int(details.get("trigger_timestamp"))
    if status not in FINAL or chk is None or trigger is None:
        return []
    ts = (_int(details.get("failure_timestamp")) if status == "FAILED" else None) \
        or _int(details.get("latest_ack_timestamp")) or trigger
    out: list[CheckpointChildSpan] = []
    common: dict[str, Any] = {"ts_ms": ts, "cluster": cluster, "host": host, "role": "jobmanager", "ref": ref, "job_id": job_id,
              "checkpoint_id": chk, "status": str(status), "start_ms": trigger}
    for vertex, stats in subtasks.items():
        found_summary = stats.get("summary")
        summary: Mapping[str, Any] = found_summary if isinstance(found_summary, Mapping) else {}
        acked = _int(stats.get("num_acknowledged_subtasks")) or 0
        out.append(CheckpointChildSpan(
            **common, level="task", job_vertex_id=vertex, subtask=None,
            end_ms=_int(stats.get("latest_ack_timestamp")) if acked else None,
            start_delay_ms=_max_of(summary, ("start_delay",)), alignment_ms=_max_of(summary, ("alignment", "duration")),
            sync_ms=_max_of(summary, ("checkpoint_duration", "sync")),
            async_ms=_max_of(summary, ("checkpoint_duration", "async")),
            checkpointed_bytes=_max_of(summary, ("checkpointed_size",))))
        for sub in stats.get("subtasks") or ():
            if not isinstance(sub, Mapping) or sub.get("status") != "completed" or _int(sub.get("index")) is None:
                continue
            out.append(CheckpointChildSpan(
                **common, level="subtask", job_vertex_id=vertex, subtask=_int(sub.get("index")),
                end_ms=_int(sub.get("ack_timestamp")), start_delay_ms=_int(sub.get("start_delay")),
                alignment_ms=_int(_at(sub, "alignment", "duration")), sync_ms=_int(_at(sub, "checkpoint", "sync")),
                async_ms=_int(_at(sub, "checkpoint", "async")), checkpointed_bytes=_int(sub.get("checkpointed_size")),
                persisted_bytes=_int(_at(sub, "alignment", "persisted")),
                processed_bytes=_int(_at(sub, "alignment", "processed"))))
    return out


def placements_of(vertex: Mapping[str, Any], *, cluster: str, host: str, ref: str) -> list[TaskDeployed]:
    """Where each subtask of a job vertex runs (``/jobs/:id/vertices/:vertex``), timed when its attempt started: what
    the JobManager's ``Deploying`` line says in its log."""
    vertex_id, name, parallelism = vertex.get("id"), vertex.get("name"), _int(vertex.get("parallelism"))
    if not isinstance(vertex_id, str) or not isinstance(name, str) or not parallelism:
        return []
    out = []
    for sub in vertex.get("subtasks") or ():
        index, started, tm = _int(_at(sub, "subtask")), _int(_at(sub, "start-time")), _at(sub, "taskmanager-id")
        if index is None or not started or not isinstance(tm, str):
            continue
        out.append(TaskDeployed(ts_ms=started, cluster=cluster, host=host, role="jobmanager", ref=ref, task=name,
                                job_vertex_id=vertex_id, subtask=index, parallelism=parallelism,
                                attempt_id=f"{vertex_id}_{index}_{_int(_at(sub, 'attempt')) or 0}", taskmanager_id=tm,
                                taskmanager_address=_at(sub, "host") if isinstance(_at(sub, "host"), str) else None))
    return out
