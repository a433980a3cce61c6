"""Flink JobManager / TaskManager records (1.7 → 2.x) and the HDFS client lines inside them, to typed events."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

from correlator.core.events import (
    CheckpointCompleted,
    CheckpointDeclined,
    CheckpointExpired,
    CheckpointFailed,
    CheckpointLateAck,
    CheckpointTriggered,
    DaemonStart,
    HdfsClientError,
    HdfsClientSlow,
    JobStatus,
    TaskStatus,
)
from correlator.core.ingest.parse.emit import Emit
from correlator.core.ingest.parse.header import Header
from correlator.core.ingest.parse.identifiers import JOB_ID, datanodes, job_and_checkpoint_from_path
from correlator.core.ingest.parse.reasons import kind_of_reason
from correlator.core.ingest.parse.stacks import first_exception

_TRIGGER = re.compile(rf"Triggering checkpoint (\d+) (?:\(type=(.*?)\) )?@ (\d+) for job ({JOB_ID})\.")
_COMPLETED = re.compile(
    rf"Completed checkpoint (\d+) for job ({JOB_ID}) \((\d+) bytes"
    r"(?: in (\d+) ms|, checkpointDuration=(\d+) ms, finalizationTime=\d+ ms)\)"
)
_EXPIRED = re.compile(rf"Checkpoint (\d+) of job ({JOB_ID}) expired before completing\.")
_DECLINE = re.compile(rf"Decline checkpoint (\d+) by task (\S+) of job ({JOB_ID})(?: at (.*?))?\.?$")
_DISCARD = re.compile(rf"Discarding checkpoint (\d+) of job ({JOB_ID})(?:\.| because: (.*))")
_LATE = re.compile(rf"Received late message for now expired checkpoint attempt (\d+) from (?:task )?(\S+) of job ({JOB_ID})")
_ASYNC_PART = re.compile(r"(.+) - asynchronous part of checkpoint (\d+) could not be completed\.$")
_FAILURE_MANAGER = re.compile(
    rf"Failed to trigger (?:or complete )?checkpoint (\d+|UNKNOWN_CHECKPOINT_ID) for job ({JOB_ID})\. \(\d+ consecutive"
)
_TRIGGER_FAILED = re.compile(rf"Triggering Checkpoint (\d+) for job ({JOB_ID}) failed due to (.*)")
_SNAPSHOT = re.compile(r"Could not complete snapshot (\d+) for operator (.*?)\.(?: Failure reason: (.*))?$")
_TASK_STATUS = re.compile(
    r"(?P<task>.*) \((?P<attempt>[0-9a-f]{32}(?:_[0-9a-f_]+)?)\) switched from (?P<from>[A-Z]+) to (?P<to>[A-Z]+)"
    r"(?P<tail>.*)",
    re.DOTALL,
)
_JOB_STATUS = re.compile(rf"Job (?P<name>.*) \((?P<job>{JOB_ID})\) switched from state (?P<from>[A-Z]+) to (?P<to>[A-Z]+)\.")
_BANNER = re.compile(r"\s*Starting (?P<component>.+?) \(Version: (?P<version>[^,)]+)[,)]")

_MATERIALIZE = re.compile(r"Could not materialize checkpoint (\d+) for operator (.*?)\.(?:\}|$|\s)", re.MULTILINE)
_FLUSH_PATH = re.compile(r"Could not flush (?:to file )?and close the file system output stream to (\S+) in order")
_PERFORM = re.compile(r"Could not perform checkpoint (\d+) for operator (.*?)\.(?:$|\s)", re.MULTILINE)
_FINALIZE = re.compile(r"Could not (?:finalize|complete) the pending checkpoint (\d+)\.")
_CHECKPOINT_EXCEPTION = re.compile(r"CheckpointException: (.+)")
_CANCELLED = "java.util.concurrent.CancellationException"

_SLOW_ACK = re.compile(
    r"Slow waitForAckedSeqno took (\d+)ms \(threshold=(\d+)ms\)"
    r"(?:\. File being written: (\S+), block: (\S+), Write pipeline datanodes: (.*))?"
)
_SLOW_READ = re.compile(
    r"Slow ReadProcessor read fields (?:for block (\S+) )?took (\d+)ms \(threshold=(\d+)ms\);.*?targets: (.*)"
)
_NO_ACK = re.compile(
    r"No ack received, took (\d+)ms \(threshold=(\d+)ms\)"
    r"(?:\. File being written: (\S+), block: (\S+), Write pipeline datanodes: (.*))?"
)


def _innermost_reason(text: str) -> str | None:
    found = _CHECKPOINT_EXCEPTION.findall(text)
    return found[-1].strip() if found else None


def _stack_failure(emit: Emit, text: str, *, job_id: str | None, attempt_id: str | None, message: str) -> bool:
    """Emit ``checkpoint_failed`` when a record's cause chain shows a materialize, perform or finalize failure."""
    path_m = _FLUSH_PATH.search(text)
    path = path_m[1] if path_m else None
    path_job, _ = job_and_checkpoint_from_path(path)
    for pattern, kind in ((_MATERIALIZE, "async_materialize"), (_PERFORM, "declined"), (_FINALIZE, "finalize")):
        m = pattern.search(text)
        if m is None:
            continue
        emit(
            CheckpointFailed,
            job_id=job_id or path_job,
            checkpoint_id=int(m[1]),
            kind=kind,
            operator=m[2] if m.re.groups >= 2 else None,
            path=path,
            message=message,
            attempt_id=attempt_id,
        )
        return True
    return False


_CLIENT_BLOCK = re.compile(r"(?:\S+:)?blk_-?\d+_\d+")
_FIRST_BAD = re.compile(r"firstBadLink as /?([\w.-]+:\d+)")
_REMOTE = re.compile(r"remote=/?([\w.-]+:\d+)")
_SOURCE_FILE = re.compile(r'Source file "([^"]+)"')
_CLIENT_ERRORS: tuple[tuple[str, str], ...] = (
    ("Exception in createBlockOutputStream", "create_block_output_stream"),
    ("Abandoning ", "abandon_block"),
    ("Excluding datanode ", "exclude_datanode"),
    ("Could not get block locations.", "aborting"),
    ("DataStreamer Exception", "streamer_exception"),
    ("Error while syncing", "sync_error"),
)


def _client_error(kind: str, msg: str, lines: Sequence[str], emit: Emit) -> None:
    """One client write-path error; the DataNode is the excluded one, a ``firstBadLink`` or a timeout's ``remote=``."""
    text = "\n".join(lines[:12])
    block = _CLIENT_BLOCK.search(msg)
    exception = first_exception(lines)
    datanode: str | None = None
    if kind == "exclude_datanode":
        found = datanodes(msg)
        datanode = found[0] if found else None
    else:
        m = _FIRST_BAD.search(text) or _REMOTE.search(text)
        datanode = m[1] if m else None
    path = _SOURCE_FILE.search(text)
    if kind == "aborting":
        exception = exception or msg[:500]
    emit(HdfsClientError, kind=kind, block=block[0] if block else None, path=path[1] if path else None,
         datanode=datanode, exception=exception)


def _hdfs_client(msg: str, lines: Sequence[str], emit: Emit) -> None:
    for prefix, kind in _CLIENT_ERRORS:
        if msg.startswith(prefix):
            _client_error(kind, msg, lines, emit)
            return
    m = _SLOW_ACK.match(msg) or _NO_ACK.match(msg)
    if m is not None:
        op = "waitForAckedSeqno" if msg.startswith("Slow") else "noAck"
        emit(
            HdfsClientSlow,
            op=op,
            duration_ms=int(m[1]),
            threshold_ms=int(m[2]),
            path=m[3],
            block=m[4],
            datanodes=datanodes(m[5]) if m[5] else (),
        )
        return
    m = _SLOW_READ.match(msg)
    if m is not None:
        emit(
            HdfsClientSlow,
            op="readAck",
            duration_ms=int(m[2]),
            threshold_ms=int(m[3]),
            block=m[1],
            datanodes=datanodes(m[4]),
        )


_FRAMEWORK = ("java.", "javax.", "jdk.", "sun.", "com.sun.", "org.apache.flink.", "org.apache.hadoop.", "scala.",
              "akka.", "org.apache.pekko.", "com.google.", "org.slf4j.", "org.apache.commons.", "io.netty.",
              "org.apache.logging.", "kotlin.", "org.apache.zookeeper.", "org.rocksdb.")
_STORAGE_EXCEPTIONS = ("java.io.", "java.net.", "java.nio.", "org.apache.hadoop.", "java.util.concurrent.",
                       "java.lang.InterruptedException", "org.apache.flink.runtime.checkpoint.CheckpointException")
_SERIALIZED = "org.apache.flink.util.SerializedThrowable: "
_AT = re.compile(r"\s*at (?:[\w.$]+/)?([\w.$<>]+)\(([^)]*)\)")


def user_cause(lines: Sequence[str]) -> tuple[str, str] | None:
    """(innermost exception, first user frame) when a cause chain ends in an exception thrown by user code."""
    cause: str | None = None
    frames: list[tuple[str, str]] = []
    for line in lines[1:]:
        text = line.strip()
        if text.startswith("Caused by: "):
            cause, frames = text[len("Caused by: "):], []
        elif text.startswith("at "):
            m = _AT.match(text)
            if m:
                frames.append((m[1], m[2]))
        elif cause is None and text and not text.startswith("..."):
            cause, frames = text, []
    while cause is not None and cause.startswith(_SERIALIZED):
        cause = cause[len(_SERIALIZED):]
    if cause is None or cause.startswith(_STORAGE_EXCEPTIONS):
        return None
    for call, where in frames:
        if not call.startswith(_FRAMEWORK):
            parts = call.split(".")
            return cause[:300], f"{'.'.join(parts[-2:])}({where})"
    return None


def parse_flink(h: Header, lines: Sequence[str], emit: Emit) -> None:
    """Flink records, with failures whose cause chain ends in user code marked with that exception and frame."""
    before = len(emit.out)
    _parse_flink(h, lines, emit)
    if len(emit.out) == before or len(lines) < 2:
        return
    found = user_cause(lines)
    if found is None:
        return
    for i in range(before, len(emit.out)):
        event = emit.out[i]
        if isinstance(event, CheckpointDeclined | CheckpointFailed):
            emit.out[i] = dataclasses.replace(event, user_exception=found[0], user_frame=found[1])


def _parse_flink(h: Header, lines: Sequence[str], emit: Emit) -> None:
    """Dispatch on the message prefix; the whole record is scanned for cause chains (they hold the key text)."""
    msg = h.message.strip()
    seg = h.segment
    if seg in ("DataStreamer", "DFSClient") or seg.startswith(("DataStreamer", "DFSClient")):
        _hdfs_client(msg, lines, emit)
        return
    text = "\n".join(lines)
    if msg.startswith("Triggering checkpoint "):
        m = _TRIGGER.match(msg)
        if m:
            emit(CheckpointTriggered, job_id=m[4], checkpoint_id=int(m[1]), trigger_ts_ms=int(m[3]), checkpoint_type=m[2])
        return
    if msg.startswith("Completed checkpoint "):
        m = _COMPLETED.match(msg)
        if m:
            duration = m[4] or m[5]
            emit(CheckpointCompleted, job_id=m[2], checkpoint_id=int(m[1]), size_bytes=int(m[3]), duration_ms=int(duration))
        return
    if msg.startswith("Checkpoint ") and "expired before completing" in msg:
        m = _EXPIRED.match(msg)
        if m:
            emit(CheckpointExpired, job_id=m[2], checkpoint_id=int(m[1]))
        return
    if msg.startswith("Decline checkpoint "):
        m = _DECLINE.match(msg)
        if m:
            reason = _innermost_reason(text) or first_exception(lines)
            emit(CheckpointDeclined, job_id=m[3], checkpoint_id=int(m[1]), attempt_id=m[2], reason=reason)
            _stack_failure(emit, text, job_id=m[3], attempt_id=m[2], message=reason or msg)
        return
    if msg.startswith("Discarding checkpoint "):
        m = _DISCARD.match(msg)
        if m:
            reason = m[3] or _innermost_reason(text) or first_exception(lines) or ""
            if not _stack_failure(emit, text, job_id=m[2], attempt_id=None, message=reason):
                emit(
                    CheckpointFailed,
                    job_id=m[2],
                    checkpoint_id=int(m[1]),
                    kind=kind_of_reason(reason, default="declined"),
                    message=reason,
                )
        return
    if msg.startswith("Received late message"):
        m = _LATE.match(msg)
        if m:
            emit(CheckpointLateAck, job_id=m[3], checkpoint_id=int(m[1]), attempt_id=m[2])
        return
    if "asynchronous part of checkpoint" in msg:
        m = _ASYNC_PART.match(msg)
        if m and _CANCELLED not in text:
            if not _stack_failure(emit, text, job_id=None, attempt_id=None, message=first_exception(lines) or msg):
                path_m = _FLUSH_PATH.search(text)
                path = path_m[1] if path_m else None
                emit(
                    CheckpointFailed,
                    job_id=job_and_checkpoint_from_path(path)[0],
                    checkpoint_id=int(m[2]),
                    kind="async_materialize",
                    operator=m[1],
                    path=path,
                    message=first_exception(lines) or msg,
                )
        return
    if msg.startswith("Failed to trigger"):
        m = _FAILURE_MANAGER.match(msg)
        if m and m[1] != "UNKNOWN_CHECKPOINT_ID":
            reason = _innermost_reason(text) or first_exception(lines) or msg
            if not _stack_failure(emit, text, job_id=m[2], attempt_id=None, message=reason):
                default = "trigger" if "or complete" not in msg else "other"
                emit(
                    CheckpointFailed,
                    job_id=m[2],
                    checkpoint_id=int(m[1]),
                    kind=kind_of_reason(reason, default=default),
                    message=reason,
                )
        return
    if msg.startswith("Triggering Checkpoint "):
        m = _TRIGGER_FAILED.match(msg)
        if m:
            emit(CheckpointFailed, job_id=m[2], checkpoint_id=int(m[1]), kind="trigger", message=m[3])
        return
    if msg.startswith("Could not complete snapshot "):
        m = _SNAPSHOT.match(msg)
        if m:
            path_job, _ = job_and_checkpoint_from_path(_path_in(text))
            emit(
                CheckpointFailed,
                job_id=path_job,
                checkpoint_id=int(m[1]),
                kind="declined",
                operator=m[2],
                path=_path_in(text),
                message=msg,
            )
        return
    if msg.startswith("Job ") and " switched from state " in msg:
        m = _JOB_STATUS.match(msg)
        if m:
            emit(JobStatus, job_id=m["job"], job_name=m["name"], from_state=m["from"], to_state=m["to"])
        return
    if ") switched from " in msg:
        m = _TASK_STATUS.match(msg)
        if m:
            cause = first_exception(lines) or _inline_cause(m["tail"])
            path = _path_in(text)
            job_id = job_and_checkpoint_from_path(path)[0]
            emit(
                TaskStatus,
                job_id=job_id,
                task=m["task"],
                attempt_id=m["attempt"],
                from_state=m["from"],
                to_state=m["to"],
                cause=cause,
            )
            if m["to"] == "FAILED":
                _stack_failure(emit, text, job_id=job_id, attempt_id=m["attempt"], message=cause or msg)
        return
    if "(Version: " in msg:
        m = _BANNER.match(h.message)
        if m:
            emit(DaemonStart, component=m["component"].strip(), version=m["version"].strip())
        return
    _stack_failure(emit, text, job_id=None, attempt_id=None, message=first_exception(lines) or msg)


def _path_in(text: str) -> str | None:
    m = _FLUSH_PATH.search(text)
    return m[1] if m else None


def _inline_cause(tail: str) -> str | None:
    marker = "with failure cause:"
    if marker in tail:
        rest = tail.split(marker, 1)[1].strip()
        return rest.splitlines()[0][:500] if rest else None
    return None
