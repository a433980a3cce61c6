"""The words of a verdict: its title and why this cause and not the others, from the evidence and version facts."""

from __future__ import annotations

from collections.abc import Iterable

from correlator.core.correlate.anatomy import HeldBeforeUpload
from correlator.core.correlate.evidence import Interval
from correlator.core.correlate.growth import Growth
from correlator.core.correlate.lost import Lost
from correlator.core.correlate.pipeline import Stopper
from correlator.core.correlate.ranking import CONTRIBUTING_SCORE, Candidate, Window
from correlator.core.events import iso_ms
from correlator.core.explain.causes import POINT_KINDS, STATED_KINDS, cause
from correlator.core.explain.knowledge import DatanodeTraits

SYMPTOM_WORDS = {"slow_disk": "slow disk writes", "slow_pipeline": "slow mirror writes and acks",
                 "dn_stall": "stalled block write", "slow_commands": "slow processing of NameNode commands",
                 "bad_link": "failed pipeline connection", "scanner_lock": "scanner's lock hold",
                 "lock_held": "dataset lock hold"}
"""Evidence kinds as a reader names them, for the sentence that says which lines a cause explains."""
ROLE_WORDS = {"datanode": "DataNode", "namenode": "NameNode", "taskmanager": "TaskManager",
              "jobmanager": "JobManager"}
"""A host named with what it runs, so a sentence about it never opens on a bare host name."""


def _role(role: str, host: str) -> str:
    return f"{ROLE_WORDS.get(role, 'Host')} {host}"


def _quoted(text: str) -> str:
    """Log text as logged, in quotation marks: a reader tells it from our words, and a sentence ends after it."""
    return f"“{text}”" + ("" if text.endswith((".", "!", "?")) else ".")


def _and(words: Iterable[str]) -> str:
    items = list(words)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def seconds(ms: int) -> str:
    return f"{ms / 1000:.1f} s"


def _minutes(ms: int) -> str:
    return f"{ms / 60_000:.0f} min" if ms >= 120_000 else f"{ms / 1000:.0f} s"


def title(code: str, hosts: tuple[str, ...], checkpoint_id: int | None, top: Interval | None,
          user: tuple[str, str] | None = None, silent: bool = False) -> str:
    """The cause's registry title, filled in from the leading evidence (its kind may pick a more exact title; a
    verdict that points at a silent DataNode has its own)."""
    entry = cause(code)
    chk = f"checkpoint {checkpoint_id}" if checkpoint_id is not None else "the checkpoint"
    size = seconds(top.magnitude_ms) if top is not None and top.kind not in POINT_KINDS else ""
    key = "user" if user is not None else "silent" if silent else (top.kind if top is not None else "")
    template = entry.titles_by_kind.get(key, entry.title)
    return template.format(
        where=", ".join(hosts) or "the cluster", chk=chk, Chk=chk[0].upper() + chk[1:],
        for_size=f" for {size}" if size else "",
        holder=(getattr(top.source, "holder", None) if top is not None else None) or "A thread",
        count=top.magnitude_ms if top is not None else 0,
        of_limit=f" of {limit}" if (limit := getattr(top.source, "limit", None) if top else None) else "",
        left=f": {value:,} bytes left where a block needs {limit:,}"
        if limit and (value := getattr(top.source, "value", None) if top else None) is not None else "",
        exception=_short(user[0]) if user else "", frame=user[1] if user else "")


def _short(text: str, limit: int = 100) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _lost_sentence(lost: Lost) -> str:
    timeout = (f"{seconds(lost.timeout_ms)}, the heartbeat.timeout its configuration logged" if lost.timeout_logged
               else f"{seconds(lost.timeout_ms)}, Flink's default: its log showed no heartbeat.timeout")
    said = (f"The JobManager logged at {iso_ms(lost.event.ts_ms)} that the heartbeat of TaskManager "
            f"{lost.event.taskmanager_id} timed out: it had heard nothing from it for the heartbeat timeout "
            f"({timeout}), so it failed the TaskManager's tasks, which aborted this checkpoint; no storage log shows "
            "a stall that explains it.")
    if lost.pause is not None:
        return said + (f" A JVM pause of {seconds(lost.pause.pause_ms)} was logged on {lost.where}, too short to "
                       "explain the silence on its own.")
    return said + (f" No log that was read shows why {lost.where} went silent, and no JVM pause was logged on it. A "
                   "stopped or killed process, exhausted memory, or trouble with the host or its network can each "
                   "cause such a silence.")


def _scanner_points(top: Interval, window: Window, traits: DatanodeTraits | None) -> str:
    said = (f"While the stuck write of {seconds(window.end_ms - window.start_ms)} ran, "
            f"{_role(top.role, top.host)} logged at {iso_ms(top.end_ms)}: {top.summary}.")
    if traits is None:
        return said + " The DataNode's version is unknown, so whether it reports lock holds cannot be told."
    return said + f" {traits.lock_sentence()}; {traits.totals_sentence()}."


def _stopper_sentence(stopper: Stopper, traits: DatanodeTraits | None) -> str:
    position = stopper.position + 1
    where = f"DataNode {stopper.host} (position {position} of the pipeline {', '.join(stopper.replicas)})"
    if stopper.blocked_ms is not None:
        said = (f"{where} received {stopper.block} at {iso_ms(stopper.receiving_ms)} and spent "
                f"{seconds(stopper.blocked_ms)} outside packet work (blocked in createRbw/finalizeBlock), which the "
                "DataNodes before it, waiting on its acks, did not; no JVM pause and no slow I/O was logged")
    else:
        said = (f"{where} received {stopper.block} at {iso_ms(stopper.receiving_ms)} and neither finished it nor "
                "passed it on, with no JVM pause and no slow I/O logged")
    return said + "." + _invisible_lock(traits, stopper.host)


def _invisible_lock(traits: DatanodeTraits | None, host: str) -> str:
    if traits is None or not traits.lock_manager:
        return ""
    return (f" {traits.lock_sentence()}, so a dataset lock held on {host} cannot be seen in this version "
            "and cannot be ruled out.")


def explanation(best: Candidate | None, others: list[Candidate], window: Window, how: str, code: str, *,
                texts: tuple[str, ...] = (), traits: DatanodeTraits | None = None, stopper: Stopper | None = None,
                victims: list[Interval] | None = None, user: tuple[str, str] | None = None,
                named_by_client: str | None = None, growth: Growth | None = None,
                held: HeldBeforeUpload | None = None, lost: Lost | None = None) -> str:
    parts = []
    if lost is not None and code == "FLINK_TASKMANAGER_LOST":
        parts.append(_lost_sentence(lost))
    elif held is not None:
        earlier = _and(str(c) for c in held.earlier)
        before = f", while it did for checkpoint{'s' if len(held.earlier) > 1 else ''} {earlier} of the job" \
            if held.earlier else ""
        parts.append(
            f"No file of this checkpoint reached HDFS: the NameNode, whose log covers it, allocated no block for "
            f"it{before}. Its tasks never began their upload, so the time went before it: barriers waiting behind "
            "buffered records (backpressure), or the synchronous part of the snapshot; storage is not to blame.")
        if held.span is not None and held.span.waiting_on:
            acked = (f", while the tasks that did acknowledged within {held.last_ack_ms} ms of the trigger"
                     if held.last_ack_ms else "")
            parts.append(f"According to Flink's checkpoint statistics, {_and(held.span.waiting_on)} never "
                         f"acknowledged it{acked}.")
        elif held.span is not None:
            parts.append(f"Flink's trace of the failed checkpoint shows the last acknowledgement {held.last_ack_ms} ms "
                         "after the trigger and no more before the timeout.")
    elif growth is not None:
        timeout = f" against the {seconds(window.timeout_ms)} timeout" if window.timeout_ms else ""
        parts.append(
            f"The job's checkpointed state grew {growth.factor:.1f} times in "
            f"{_minutes(growth.last.ts_ms - growth.first.ts_ms)} ({growth.size_from_bytes / 1048576:.1f} MiB to "
            f"{growth.size_to_bytes / 1048576:.1f} MiB over {growth.points} completed checkpoints) while their "
            f"duration rose from {seconds(growth.duration_from_ms)} to {seconds(growth.duration_to_ms)}{timeout}"
            + (": the upload outgrew its time." if any(c.scored and c.score >= CONTRIBUTING_SCORE for c in others) else
               "; no HDFS log shows a stall that explains this checkpoint, so the upload outgrew its time."))
    elif code == "FLINK_TASK_ERROR":
        if user is not None:
            parts.append(f"The failure's cause chain ends in “{user[0][:240]}”, thrown from user code at {user[1]}; "
                         "no storage or I/O exception is behind it.")
        else:
            parts.append("The failure's cause chain names no storage or I/O problem and no state file"
                         + (f": {_quoted(texts[0][:240])}" if texts else "."))
    elif best is not None and best.scored:
        top = best.scored[0].interval
        if top.kind in STATED_KINDS:
            detail = str(getattr(top.source, "detail", "") or top.summary)[:300].rstrip()
            parts.append(f"{_role(top.role, top.host)} logged why HDFS refused the write at {iso_ms(top.end_ms)}: "
                         + _quoted(detail))
        elif top.kind in POINT_KINDS:
            parts.append(_scanner_points(top, window, traits))
        elif top.kind == "dn_stall" and stopper is not None:
            parts.append(_stopper_sentence(stopper, traits))
        else:
            unseen = _invisible_lock(traits, top.host) if top.kind in ("slow_commands", "bad_link") else ""
            parts.append(
                f"The stuck write of {seconds(window.end_ms - window.start_ms)}"
                + (f" (timeout {seconds(window.timeout_ms)})" if window.timeout_ms else "")
                + f" overlaps what {_role(top.role, top.host)} logged from {iso_ms(top.start_ms)} to "
                f"{iso_ms(top.end_ms)}: {top.summary}." + unseen
            )
        symptoms = sorted({s.interval.kind for c in others for s in c.scored if s.symptom_of == code})
        if symptoms:
            said = _and(SYMPTOM_WORDS.get(k, "other slow operations") for k in symptoms)
            parts.append(f"It also explains the {said} logged on the same host.")
    if lost is not None and code == "TASKMANAGER_JVM_PAUSE":
        parts.append(f"The pause silenced the TaskManager: the JobManager lost its heartbeat at "
                     f"{iso_ms(lost.event.ts_ms)} and failed its tasks, so the lost TaskManager is the pause's "
                     "effect, not a cause of its own.")
    for v in victims or []:
        parts.append(f"On {v.host}, {v.summary}.")
    if named_by_client:
        parts.append(named_by_client)
    namenode = best is not None and bool(best.scored) and best.scored[0].interval.role == "namenode"
    if how and code not in ("FLINK_TASK_ERROR", "FLINK_TASKMANAGER_LOST") and not namenode:
        parts.append(f"The DataNodes of the write are known from {how}.")
    elif code not in ("FLINK_TASK_ERROR", "FLINK_TASKMANAGER_LOST") and not namenode and held is None:
        # the NameNode is one host; no write began
        parts.append("No identifier linked the write to DataNodes, so they were matched by time across the cluster.")
    if others:
        parts.append("Other causes have lower confidence: "
                     + ", ".join(f"{c.code} {c.score:.2f}" for c in others[:4]) + ".")
    return " ".join(parts)
