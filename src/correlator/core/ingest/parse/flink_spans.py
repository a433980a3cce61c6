"""Flink's trace spans of a checkpoint, and where its subtasks ran: the rows of ``flink.RULES`` that read them.

A checkpoint's span (1.19+, logged by the Slf4j trace reporter) is one ``SimpleSpan{…}``; with a span detail level
that has children (``traces.checkpoint.span-detail-level``, 2.x) the same line nests a span per task
(``Checkpoint_Task``) and per subtask (``Checkpoint_Subtask``) inside ``children=[…]``. The subtask spans name a job
vertex and an index, never a TaskManager: the JobManager's ``Deploying …`` line says which TaskManager runs that
subtask, and a TaskManager's own ``Starting TaskManager with ResourceID`` line says which log is that TaskManager.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from correlator.core.events import CheckpointChildSpan, CheckpointSpan, SpanLevel, TaskDeployed, TaskManagerStarted
from correlator.core.ingest.parse.emit import Emit
from correlator.core.ingest.parse.wording import Handler, Wording

_SPAN = re.compile(
    r"\w*Span\{scope=[^,]*, name=(?P<name>\w+), startTsMillis=(?P<start>-?\d+), endTsMillis=(?P<end>-?\d+), "
    r"attributes=\{(?P<attrs>[^{}]*)\}")
"""One span of a ``Reported span:`` line (the checkpoint's, then its children's in order); its attributes hold no
braces."""
_FIELD = re.compile(r"(\w+)=([^,{}]*)")
SPAN_PHASES = 24
"""At most this many further attributes are kept from one checkpoint span."""
_KNOWN = frozenset({"checkpointId", "fullSize", "checkpointedSize"})
_LEVELS: dict[str, SpanLevel] = {"Checkpoint_Task": "task", "Checkpoint_Subtask": "subtask"}
_PHASE_ATTRS = (("start_delay_ms", "CheckpointStartDelayMs"), ("alignment_ms", "AlignmentDurationMs"),
                ("sync_ms", "SyncCheckpointDurationMs"), ("async_ms", "AsyncCheckpointDurationMs"),
                ("checkpointed_bytes", "CheckpointedSizeBytes"), ("persisted_bytes", "PersistedDataBytes"),
                ("processed_bytes", "ProcessedDataBytes"))
"""Event field ← the subtask span's attribute; a task span has each as ``max<attribute>`` (its slowest subtask's)."""
_DEPLOY = re.compile(
    r"Deploying (?P<task>.+) \((?P<index>\d+)/(?P<parallelism>\d+)\) \(attempt #\d+\) with attempt id "
    r"(?P<attempt>[0-9a-f_]+) and vertex id (?P<vertex>[0-9a-f]{32})_\d+ to (?P<tm>\S+) @ (?P<address>\S+)")
_TM_START = re.compile(r"Starting TaskManager with ResourceID: (\S+)")


def _numbers(attrs: dict[str, str]) -> dict[str, int]:
    return {k: int(v) for k, v in attrs.items() if v.strip().lstrip("-").isdigit()}


def reported_span(msg: str, _lines: Sequence[str], _text: str, emit: Emit) -> None:
    """A checkpoint's span, and each task's and subtask's child span the same line nests."""
    spans = list(_SPAN.finditer(msg))
    if not spans or spans[0]["name"] != "Checkpoint":
        return
    root = spans[0]
    attrs = dict(_FIELD.findall(root["attrs"]))
    numbers = _numbers(attrs)
    job, chk = attrs.get("jobId", "").strip(), numbers.get("checkpointId")
    if not job or chk is None or int(root["start"]) < 0:
        return
    status = attrs.get("checkpointStatus", "").strip()
    phases = tuple((k, v) for k, v in sorted(numbers.items()) if k not in _KNOWN)[:SPAN_PHASES]
    if int(root["end"]) >= 0:  # no end: nothing acknowledged it, which its children say task by task
        emit(CheckpointSpan, job_id=job, checkpoint_id=chk, status=status, start_ms=int(root["start"]),
             end_ms=int(root["end"]), full_size=numbers.get("fullSize"),
             checkpointed_size=numbers.get("checkpointedSize"), phases=phases)
    for child in spans[1:]:
        level = _LEVELS.get(child["name"])
        child_attrs = dict(_FIELD.findall(child["attrs"]))
        values, vertex = _numbers(child_attrs), child_attrs.get("jobVertexId", "").strip()
        if level is None or not vertex or int(child["start"]) < 0:
            continue
        prefix = "" if level == "subtask" else "max"
        end = int(child["end"])
        measured: dict[str, Any] = {field: values.get(prefix + attr) for field, attr in _PHASE_ATTRS}
        emit(CheckpointChildSpan, job_id=job, checkpoint_id=chk, status=status, level=level, job_vertex_id=vertex,
             subtask=values.get("subtaskId") if level == "subtask" else None, start_ms=int(child["start"]),
             end_ms=end if end >= 0 else None, **measured)


def deploying(msg: str, _lines: Sequence[str], _text: str, emit: Emit) -> None:
    m = _DEPLOY.match(msg)
    if m:
        emit(TaskDeployed, task=m["task"], job_vertex_id=m["vertex"], subtask=int(m["index"]) - 1,
             parallelism=int(m["parallelism"]), attempt_id=m["attempt"], taskmanager_id=m["tm"],
             taskmanager_address=m["address"])


def taskmanager_started(msg: str, _lines: Sequence[str], _text: str, emit: Emit) -> None:
    m = _TM_START.match(msg)
    if m:
        emit(TaskManagerStarted, resource_id=m[1])


RULES: tuple[Wording[Handler], ...] = (
    Wording("Reported span: ", reported_span, emits=(CheckpointSpan, CheckpointChildSpan)),
    Wording("Deploying ", deploying, emits=(TaskDeployed,)),
    Wording("Starting TaskManager with ResourceID: ", taskmanager_started, emits=(TaskManagerStarted,)),
)
"""The span and placement wordings, rows of ``flink.RULES``."""
