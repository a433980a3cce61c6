"""Coverage of the write, and the silent DataNode: which DataNode of a stuck write has no log covering it, and what
its neighbours' lines say of it.

In a real incident the log that decides is the one most likely to be missing (the sick DataNode paused, its disk
full, its shipper behind). Its neighbours still speak: the NameNode placed the block on it, the DataNode before it
received the block and waited on it, an upstream slow mirror write was sent to it, the client's slow ack or its
``firstBadLink`` names it. Coverage is judged per DataNode of the write, not per cluster: a DataNode whose own log
covers the write is never blamed for waiting on one whose log does not, and "nothing abnormal" needs every DataNode
of the write read. A DataNode is named by host when a log proves its address (its own lines), else by the address
the write's lines give: never by a guess.
"""

from __future__ import annotations

from dataclasses import replace

from correlator.core.correlate.pipeline import Pipeline, block_id, resolve
from correlator.core.correlate.ranking import Candidate, Window
from correlator.core.correlate.watermarks import SourceClock
from correlator.core.events import CLIENT_ROLE, BlockWrite, Event, HdfsClientSlow, SlowIo
from correlator.core.explain.causes import Code
from correlator.core.explain.timeline import role_name
from correlator.core.explain.verdict import CoverageReason
from correlator.core.explain.verdict import SourceCoverage

COVERAGE_CODES = (Code.INSUFFICIENT_DATA, Code.UNEXPLAINED)
"""The codes coverage judges (:func:`judged`): no cause named, for want of logs or with every log read."""
WAITED_MS = 1_000
"""An upstream DataNode that held a block this long without finishing it waited on the one after it."""


def covering_datanodes(sources: dict[tuple[str, str], SourceClock], window: Window, skew_ms: int) -> frozenset[str]:
    """DataNode hosts whose own log runs from before the write began to after it ended."""
    return frozenset(host for (host, role), clock in sources.items() if role == "datanode"
                     and clock.first_ts_ms <= window.start_ms + skew_ms and clock.max_ts_ms >= window.end_ms - skew_ms)


def coverage(sources: dict[tuple[str, str], SourceClock], guessed: frozenset[tuple[str, str]], window: Window,
             skew_ms: int, pipeline: frozenset[str], unread: dict[tuple[str, str], str] | None = None,
             ) -> tuple[list[SourceCoverage], list[SourceCoverage]]:
    """Sources whose logs span the stuck write (covered) and the ones that do not or are absent (missing).

    A source's span is its first and last line's time (``source_progress`` carries every line's time, noise
    included); the Flink client's own log (``bin/flink``) is not a source of the write. A log read only up to damage
    (``unread``) that stops before the write ended says why; one never opened is missing with its reason.
    """
    unread = unread or {}
    covered, missing = [], []
    for (host, role), why in sorted(unread.items()):
        if (host, role) not in sources and role != CLIENT_ROLE:
            missing.append(SourceCoverage(host, role, CoverageReason.NOT_READ, detail=why))
    for (host, role), clock in sorted(sources.items()):
        if role == CLIENT_ROLE:
            continue
        if clock.first_ts_ms > window.start_ms + skew_ms:
            missing.append(SourceCoverage(host, role, CoverageReason.STARTS_LATE))
        elif clock.max_ts_ms < window.end_ms - skew_ms and (host, role) in unread:
            missing.append(SourceCoverage(host, role, CoverageReason.DAMAGED, detail=unread[(host, role)]))
        elif clock.max_ts_ms < window.end_ms - skew_ms:
            if role == "datanode" and pipeline and host not in pipeline:
                # outside the write, a quiet DataNode logs nothing: its silence is not a gap in what was read
                covered.append(SourceCoverage(host, role, CoverageReason.OUTSIDE_QUIET))
            else:
                missing.append(SourceCoverage(host, role, CoverageReason.ENDS_EARLY))
        elif (host, role) in guessed:
            covered.append(SourceCoverage(host, role, CoverageReason.GUESSED_HOST))
        else:
            covered.append(SourceCoverage(host, role))
    known = {host for host, role in sources if role == "datanode"}
    for host in sorted(pipeline - known):
        missing.append(SourceCoverage(host, "datanode", CoverageReason.NO_LOG))
    roles = {role for _, role in sources}
    if "datanode" not in roles and not pipeline:
        missing.append(SourceCoverage("*", "datanode", CoverageReason.NO_DATANODE_LOG))
    if "namenode" not in roles:
        missing.append(SourceCoverage("*", "namenode", CoverageReason.NO_NAMENODE_LOG))
    if "taskmanager" not in roles:
        missing.append(SourceCoverage("*", "taskmanager", CoverageReason.NO_TASKMANAGER_LOG))
    return covered, missing


def point_at_silent(missing: list[SourceCoverage], pipe: Pipeline, client: list[HdfsClientSlow],
                    evidence: tuple[Event, ...], addresses: dict[str, str], window: Window,
                    skew_ms: int) -> list[SourceCoverage]:
    """``missing`` with each silent DataNode of the write that its neighbours point at marked (``pointed_by``), those
    first, in the order the write reached them."""
    silent = {m.host: m for m in missing if m.role == "datanode" and m.host in pipe.hosts}
    if not silent:
        return missing
    said: dict[str, list[str]] = {}

    def point(node: str, why: str) -> None:
        if node in silent and why not in said.setdefault(node, []):
            said[node].append(why)

    for node, why in _by_block_order(pipe, evidence, addresses, frozenset(silent), window, skew_ms, bool(client)):
        point(node, why)
    for e in evidence:
        if isinstance(e, SlowIo) and e.kind == "mirror_write" and e.host not in silent and e.downstream:
            node = resolve(e.downstream[0], addresses)
            point(node, f"{e.host}'s write to it as the next DataNode (mirror) took {e.duration_ms} ms")
    for e in pipe.client_errors:
        if e.kind == "create_block_output_stream" and e.datanode and "firstBadLink" in (e.exception or ""):
            point(resolve(e.datanode, addresses), "the pipeline could not reach it (the client's firstBadLink)")
    waits: dict[str, list[HdfsClientSlow]] = {}
    for c in client:
        quiet = [n for n in (resolve(dn, addresses) for dn in c.datanodes) if n in silent]
        if len(quiet) == 1:
            waits.setdefault(quiet[0], []).append(c)
    for node, lines in waits.items():
        worst = max(lines, key=lambda c: c.duration_ms)
        listed = ", ".join(resolve(dn, addresses) for dn in worst.datanodes)
        acks = f"{len(lines)} slow acks (up to {worst.duration_ms} ms)" if len(lines) > 1 else \
            f"a slow ack of {worst.duration_ms} ms"
        point(node, f"the HDFS client logged {acks} on the pipeline {listed}, whose other DataNodes' logs show no "
                    "stall")
    order = {node: k for k, node in enumerate(said)}
    marked = [replace(m, pointed_by="; ".join(said[m.host])) if m.host in said and m.role == "datanode" else m
              for m in missing]
    return sorted(marked, key=lambda m: (m.pointed_by is None, order.get(m.host, 0)))


def _by_block_order(pipe: Pipeline, evidence: tuple[Event, ...], addresses: dict[str, str], silent: frozenset[str],
                    window: Window, skew_ms: int, client_waited: bool) -> list[tuple[str, str]]:
    """Walk each checkpoint block's pipeline as the NameNode placed it: the first DataNode without a log, behind
    DataNodes whose own logs show them holding the block unfinished, is where the write waited, when it is the only
    unread one left in the pipeline. A silent first DataNode is pointed at only when the client logged waiting on
    its acks (no log upstream of it can say so)."""
    received: dict[tuple[str, str], BlockWrite] = {}
    finished: dict[tuple[str, str], int] = {}
    for e in evidence:
        if isinstance(e, BlockWrite) and e.role == "datanode" and (bid := block_id(e.block)) is not None:
            if e.duration_ms is None:
                received.setdefault((e.host, bid), e)
            else:
                finished.setdefault((e.host, bid), e.ts_ms)
    out = []
    for a in sorted(pipe.allocations, key=lambda x: (x.ts_ms, x.block)):
        bid = block_id(a.block)
        if bid is None or a.ts_ms > window.end_ms + skew_ms:
            continue
        order = [resolve(r, addresses) for r in a.replicas]
        for k, node in enumerate(order):
            if node in silent:
                if any(other in silent for other in order[k + 1:]):
                    break  # two or more unread DataNodes behind the last one that spoke: either may hold it
                if k == 0 and client_waited:
                    out.append((node, f"first DataNode of {a.block} (NameNode: {', '.join(order)}), "
                                      "the one the client sends to"))
                elif k > 0:
                    up = order[k - 1]
                    took = received[(up, bid)]
                    done = finished.get((up, bid))
                    held = "never finished it" if done is None else f"finished it {done - took.ts_ms} ms later"
                    out.append((node, f"{up} received {a.block} and {held}; {node} is next in its pipeline "
                                      f"(NameNode: {', '.join(order)})"))
                break
            got = received.get((node, bid))
            if got is None or not window.start_ms - skew_ms <= got.ts_ms <= window.end_ms + skew_ms:
                break  # this DataNode's log shows the block never reached it in the write: the wait is before it
            done = finished.get((node, bid))
            if done is not None and done - got.ts_ms < WAITED_MS:
                break  # it finished the block at once: nothing downstream held this block up
    return out


SILENT_TELLS = ("a DirectoryScanner or other dataset-lock hold, a JVM pause, a slow or full disk, or a refused "
                "connection")
"""What a DataNode's own log says of a stall its neighbours only wait on."""


def judged(best: Candidate | None, covered: list[SourceCoverage], missing: list[SourceCoverage],
           pipeline: frozenset[str]) -> tuple[Code, float, tuple[str, ...], tuple[str, ...]]:
    """The code, confidence and hosts of the verdict, and the hosts whose slow-pipeline lines waited on a silent one.

    The rule: a cause the logs show on a DataNode with its own log stands. Slow mirror writes and acks on DataNodes
    upstream of a silent one are that wait, not a cause: ``INSUFFICIENT_DATA`` naming the silent DataNode. With no
    cause, ``INSUFFICIENT_DATA`` names the silent DataNode when its neighbours point at it, else every DataNode of the
    write (or the NameNode) whose log is missing; ``UNEXPLAINED`` ("nothing abnormal") only when all were read.
    """
    suspects = tuple(m.host for m in missing if m.pointed_by)
    if best is not None:
        if suspects and best.code == Code.HDFS_SLOW_PIPELINE and not set(best.hosts) & set(suspects):
            return Code.INSUFFICIENT_DATA, INSUFFICIENT_SCORE, suspects, best.hosts
        return Code(best.code), best.score, best.hosts, ()
    if suspects:
        return Code.INSUFFICIENT_DATA, INSUFFICIENT_SCORE, suspects, ()
    unread = tuple(m.host for m in missing if _unread(m, pipeline))
    looked = tuple(sorted(c.host for c in covered if c.role == "datanode" and (not pipeline or c.host in pipeline)))
    if unread or not looked:
        return Code.INSUFFICIENT_DATA, INSUFFICIENT_SCORE, tuple(h for h in unread if h != "*"), ()
    return Code.UNEXPLAINED, UNEXPLAINED_SCORE, looked, ()


INSUFFICIENT_SCORE = 0.5
UNEXPLAINED_SCORE = 0.6


def _unread(m: SourceCoverage, pipeline: frozenset[str]) -> bool:
    """A missing log that "nothing abnormal" would need: the NameNode's, a DataNode's of the write, and some
    TaskManager's (the Flink side's stalls show only there). A TaskManager logs nothing at INFO between checkpoints,
    so its log ending early is listed, not taken as a gap; no TaskManager log at all, or one not read, is."""
    if m.role == "datanode":
        return m.host == "*" or not pipeline or m.host in pipeline or m.reason == CoverageReason.NOT_READ
    if m.role == "taskmanager":
        return _taskmanager_unread(m)
    return m.role == "namenode"


def _taskmanager_unread(m: SourceCoverage) -> bool:
    return m.role == "taskmanager" and m.reason in (CoverageReason.NO_TASKMANAGER_LOG, CoverageReason.NOT_READ)


def unjudged_text(code: Code, hosts: tuple[str, ...], missing: list[SourceCoverage], waited: tuple[str, ...]) -> str:
    """The words of a verdict that names no cause: which logs were looked at, which are missing and what they tell."""
    if code == Code.UNEXPLAINED:
        return (f"Looked at the logs of DataNode{'s' if len(hosts) > 1 else ''} {', '.join(hosts)} and the NameNode "
                "over the whole write: none shows a stall, a pause, a refusal or a slow disk.")
    parts = []
    for m in missing:
        if m.pointed_by:
            parts.append(f"The write waited on DataNode {m.host}, whose log {_what(m)}: {m.pointed_by}.")
    if parts:
        parts += [f"The log of DataNode {m.host} could not be read ({m.detail or ''}): it may be this DataNode's."
                  for m in missing if m.role == "datanode" and m.reason == CoverageReason.NOT_READ]
        if waited:
            parts.append(f"The slow mirror writes and acks logged on {', '.join(waited)} are that wait, not a "
                         "cause of their own.")
        parts.append(f"Its own log would say why ({SILENT_TELLS}): collect its DataNode log (hadoop-<user>-datanode-"
                     "<host>.log, or its container's log) for the write's time, or ship it, and run the analysis "
                     "again.")
        return " ".join(parts)
    absent = [m.host for m in missing if m.role == "datanode" and m.reason == CoverageReason.NO_LOG]
    said = [f"DataNode{'s' if len(absent) > 1 else ''} {', '.join(absent)} of the write "
            f"{'have' if len(absent) > 1 else 'has'} no log in the input."] if absent else []
    said += [_missing_sentence(m) for m in missing
             if m.role in ("datanode", "namenode") and m.reason != CoverageReason.NO_LOG]
    said += [_missing_sentence(m) + " A stall on the Flink side (back pressure, a task's error, a long GC pause) "
             "shows only in a TaskManager's log." for m in missing if _taskmanager_unread(m)]
    said += [f"The input holds no access log of the object store{'' if m.host == '*' else f' (bucket {m.host})'}, "
             "where the checkpoint's files go: the S3 client retries a throttled or slow request without a line at "
             "INFO, so only the store's log shows what held the upload." for m in missing
             if m.reason == CoverageReason.NO_STORE_LOG]
    return " ".join(said or ["No DataNode log covers the write."]) + " Nothing can be ruled in or out without them."


def _missing_sentence(m: SourceCoverage) -> str:
    """One missing log, said as a sentence."""
    if m.host == "*":
        return f"The input holds no {role_name(m.role)} log."
    return f"The log of {role_name(m.role)} {m.host} {(m.why or 'is missing').removeprefix('log ')}."


UNREAD: dict[str, str] = {CoverageReason.DAMAGED: "is damaged", CoverageReason.NOT_READ: "could not be read"}
"""The rest of "whose log …" for a log read only in part or not at all, before what it says more."""


def _what(m: SourceCoverage) -> str:
    """The rest of "whose log …" for a missing log."""
    if m.why == CoverageReason.NO_LOG:
        return "is not in the input"
    said = UNREAD.get(m.reason or "")
    if said is not None and m.detail is not None:
        return f"{said} ({m.detail})"
    return (m.why or "").removeprefix("log ") or "is missing"
