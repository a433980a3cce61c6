"""The words of a verdict: its title and why this cause and not the others, from the evidence and version facts."""

from __future__ import annotations

from correlator.core.correlate.evidence import Interval
from correlator.core.correlate.pipeline import Stopper
from correlator.core.correlate.ranking import Candidate, Window
from correlator.core.events import iso_ms
from correlator.core.explain.knowledge import DatanodeTraits

POINT_KINDS = ("scan_stats", "scan_reconcile")


def seconds(ms: int) -> str:
    return f"{ms / 1000:.1f} s"


def title(code: str, hosts: tuple[str, ...], checkpoint_id: int | None, top: Interval | None,
          user: tuple[str, str] | None = None) -> str:
    where = ", ".join(hosts) or "the cluster"
    chk = f"checkpoint {checkpoint_id}" if checkpoint_id is not None else "the checkpoint"
    size = seconds(top.magnitude_ms) if top is not None and top.kind not in POINT_KINDS else ""
    holder = getattr(top.source, "holder", None) if top is not None else None
    if code == "HDFS_DIRECTORY_SCAN" and top is not None and top.kind in POINT_KINDS:
        scan = f"The DirectoryScanner on {where} reconciled {top.magnitude_ms} differences while {chk} was written"
    else:
        scan = (f"The DirectoryScanner on {where} held the DataNode dataset lock" + (f" for {size}" if size else "")
                + f" while {chk} was being written")
    titles = {
        "HDFS_DIRECTORY_SCAN": scan,
        "DATANODE_LOCK_HELD": f"{holder or 'A thread'} held the dataset lock of DataNode {where}"
        + (f" for {size}" if size else "") + f" while {chk} was being written",
        "HDFS_SLOW_DISK": f"Slow disk writes on DataNode {where} stalled {chk}",
        "HDFS_SLOW_PIPELINE": f"Slow mirror writes/acks between DataNodes ({where}) stalled {chk}",
        "DATANODE_JVM_PAUSE": f"DataNode {where} paused" + (f" for {size}" if size else "") + f" during {chk}",
        "NAMENODE_SLOW": f"The NameNode {where} was blocked" + (f" for {size}" if size else "") + f" during {chk}",
        "TASKMANAGER_JVM_PAUSE": f"TaskManager {where} paused" + (f" for {size}" if size else "") + f" during {chk}",
        "FLINK_TASK_ERROR": (f"{chk[0].upper() + chk[1:]} failed in user code: {_short(user[0])} at {user[1]}" if user
                             else f"{chk[0].upper() + chk[1:]} failed inside Flink, not in storage"),
        "UNEXPLAINED": f"The HDFS logs cover {chk} and show nothing abnormal",
        "INSUFFICIENT_DATA": f"The logs needed to explain {chk} are missing",
    }
    if code == "HDFS_SLOW_PIPELINE" and top is not None and top.kind in ("dn_stall", "slow_commands"):
        return f"DataNode {where} stopped acknowledging the write of {chk}"
    return titles[code]


def _short(text: str, limit: int = 100) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _scanner_points(top: Interval, window: Window, traits: DatanodeTraits | None) -> str:
    said = (f"{top.summary} on {top.host} at {iso_ms(top.end_ms)}, as the stuck write of "
            f"{seconds(window.end_ms - window.start_ms)} ran")
    if traits is None:
        return said + " (the DataNode's version is unknown, so whether it reports lock holds cannot be told)."
    return said + f" ({traits.lock_sentence()}; {traits.totals_sentence()})."


def _stopper_sentence(stopper: Stopper, traits: DatanodeTraits | None) -> str:
    position = stopper.position + 1
    where = f"DataNode {stopper.host} (position {position} of the pipeline {', '.join(stopper.replicas)})"
    if stopper.blocked_ms is not None:
        said = (f"{where} received {stopper.block} at {iso_ms(stopper.receiving_ms)} and spent "
                f"{seconds(stopper.blocked_ms)} outside packet work (blocked in createRbw/finalizeBlock), which the "
                "DataNodes before it, waiting on its acks, did not; no JVM pause and no slow I/O logged")
    else:
        said = (f"{where} received {stopper.block} at {iso_ms(stopper.receiving_ms)} and neither finished it nor "
                "passed it on, with no JVM pause and no slow I/O logged")
    return said + _invisible_lock(traits) + "."


def _invisible_lock(traits: DatanodeTraits | None) -> str:
    if traits is None or not traits.lock_manager:
        return ""
    return (f"; {traits.lock_sentence()}, so a dataset lock held on it cannot be seen in this version "
            "and cannot be ruled out")


def explanation(best: Candidate | None, others: list[Candidate], window: Window, how: str, code: str, *,
                texts: tuple[str, ...] = (), traits: DatanodeTraits | None = None, stopper: Stopper | None = None,
                victims: list[Interval] | None = None, user: tuple[str, str] | None = None,
                named_by_client: str | None = None) -> str:
    parts = []
    if code == "FLINK_TASK_ERROR":
        if user is not None:
            parts.append(f"The failure's cause chain ends in {user[0][:240]}, thrown from user code at {user[1]}; "
                         "no storage or I/O exception is behind it.")
        else:
            parts.append("The failure's cause chain names no storage or I/O problem and no state file"
                         + (f": {texts[0][:240]}" if texts else "") + ".")
    elif best is not None and best.scored:
        top = best.scored[0].interval
        if top.kind in POINT_KINDS:
            parts.append(_scanner_points(top, window, traits))
        elif top.kind == "dn_stall" and stopper is not None:
            parts.append(_stopper_sentence(stopper, traits))
        else:
            unseen = _invisible_lock(traits) if top.kind in ("slow_commands", "bad_link") else ""
            parts.append(
                f"{top.summary} on {top.host} ({iso_ms(top.start_ms)} – {iso_ms(top.end_ms)}) overlaps the stuck "
                f"write of {seconds(window.end_ms - window.start_ms)}"
                + (f" (timeout {seconds(window.timeout_ms)})" if window.timeout_ms else "") + unseen + "."
            )
        symptoms = sorted({s.interval.kind for c in others for s in c.scored if s.symptom_of == code})
        if symptoms:
            parts.append(f"Same-host {', '.join(k.replace('_', ' ') for k in symptoms)} are its symptoms.")
    for v in victims or []:
        parts.append(f"On {v.host}, {v.summary}.")
    if named_by_client:
        parts.append(named_by_client)
    if how and code != "FLINK_TASK_ERROR":
        parts.append(f"DataNodes of the write from {how}.")
    elif code != "FLINK_TASK_ERROR":
        parts.append("No identifier linked the write to DataNodes: matched by time across the cluster.")
    if others:
        parts.append("Ranked lower: " + ", ".join(f"{c.code} {c.score:.2f}" for c in others[:4]) + ".")
    return " ".join(parts)
