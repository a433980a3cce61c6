"""Flink JobManager / TaskManager records (1.7 → 2.x) and the HDFS client lines inside them, to typed events.

Each wording is a row of ``RULES`` (``wording.Wording``; the HDFS client's are ``hdfs_client.RULES``); the
prefilter's Flink triggers are their phrases, and the dispatch is derived from the tables."""

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
    CheckpointStorage,
    CheckpointTriggered,
    DaemonStart,
    Event,
    FlinkSetting,
    JobStatus,
    TaskManagerLost,
    TaskStatus,
)
from correlator.core.ingest.parse import flink_spans, hdfs_client
from correlator.core.ingest.parse.emit import Emit
from correlator.core.ingest.parse.header import Header
from correlator.core.ingest.parse.identifiers import JOB_ID, job_and_checkpoint_from_path, taskmanager_host
from correlator.core.ingest.parse.reasons import kind_of_reason
from correlator.core.ingest.parse.stacks import first_exception
from correlator.core.ingest.parse.wording import Dispatch, Handler, Wording

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
_HEARTBEAT = re.compile(r"(?:The h|H)eartbeat of TaskManager with id (\S+)\s+timed out\.")
"""The JobManager's (JobMaster, ResourceManager) word for a TaskManager it lost; its cause chains carry it as a
``TimeoutException``."""
_BANNER = re.compile(r"\s*Starting (?P<component>.+?) \(Version: (?P<version>[^,)]+)[,)]")

_MATERIALIZE = re.compile(r"Could not materialize checkpoint (\d+) for operator (.*?)\.(?:\}|$|\s)", re.MULTILINE)
_FLUSH_PATH = re.compile(r"Could not flush (?:to file )?and close the file system output stream to (\S+) in order")
_PERFORM = re.compile(r"Could not perform checkpoint (\d+) for operator (.*?)\.(?:$|\s)", re.MULTILINE)
_FINALIZE = re.compile(r"Could not (?:finalize|complete) the pending checkpoint (\d+)\.")
_CHECKPOINT_EXCEPTION = re.compile(r"CheckpointException: (.+)")
_CANCELLED = "java.util.concurrent.CancellationException"
_PROPERTY = re.compile(r"Loading configuration property: ([\w.-]+), (.*)$")
STORAGE_SETTINGS = ("state.checkpoints.dir", "execution.checkpointing.dir")
"""Where checkpoints go (1.x, 2.x): which storage's logs a failed checkpoint is judged against."""
SETTINGS = ("execution.checkpointing.timeout", "execution.checkpointing.interval", "heartbeat.timeout")
"""Configuration keys kept as events: what a checkpoint's duration is judged against (a session cluster's default;
a job that sets its own in code logs nothing), and how long a lost TaskManager had been silent. Each key read is a
row of its own below, so the prefilter passes only these of the hundreds of configuration lines a daemon's start logs."""
_DURATION = re.compile(r"(\d+)\s*([a-zµ]*)", re.IGNORECASE)
_UNIT_MS = {
    **dict.fromkeys(("", "ms", "milli", "millis", "millisecond", "milliseconds"), 1.0),
    **dict.fromkeys(("s", "sec", "secs", "second", "seconds"), 1000.0),
    **dict.fromkeys(("m", "min", "mins", "minute", "minutes"), 60_000.0),
    **dict.fromkeys(("h", "hour", "hours"), 3_600_000.0),
    **dict.fromkeys(("d", "day", "days"), 86_400_000.0),
    **dict.fromkeys(("µs", "micro", "micros", "microsecond", "microseconds"), 0.001),
    **dict.fromkeys(("ns", "nano", "nanos", "nanosecond", "nanoseconds"), 0.000001),
}
"""Flink's duration units (a bare number is milliseconds)."""


def duration_ms(value: str) -> int | None:
    """A Flink duration value (``10s``, ``10 min``, ``600000``) in ms; None for anything else."""
    m = _DURATION.fullmatch(value.strip())
    factor = _UNIT_MS.get(m[2].lower()) if m else None
    return None if m is None or factor is None else int(int(m[1]) * factor)

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


_OBJECT_STORE_CLIENTS = ("com.amazonaws.", "software.amazon.awssdk.", "com.facebook.presto.")
"""The S3 clients under Flink's S3 filesystems (AWS SDK v1 and v2, presto's): their exceptions are the store's."""
_FRAMEWORK = ("java.", "javax.", "jdk.", "sun.", "com.sun.", "org.apache.flink.", "org.apache.hadoop.", "scala.",
              "akka.", "org.apache.pekko.", "com.google.", "org.slf4j.", "org.apache.commons.", "io.netty.",
              "org.apache.logging.", "kotlin.", "org.apache.zookeeper.", "org.rocksdb.", *_OBJECT_STORE_CLIENTS)
_STORAGE_EXCEPTIONS = ("java.io.", "java.net.", "java.nio.", "org.apache.hadoop.", "java.util.concurrent.",
                       "java.lang.InterruptedException", "org.apache.flink.runtime.checkpoint.CheckpointException",
                       *_OBJECT_STORE_CLIENTS)
_SERIALIZED = "org.apache.flink.util.SerializedThrowable: "
_STORE_ERROR = re.compile(r"\(Service: Amazon S3; Status Code: \d{3}; Error Code: (\w+);")
"""The S3 error an AWS SDK v1 exception carries in a cause chain (``… (Service: Amazon S3; Status Code: 400; Error
Code: ExpiredToken; Request ID: …)``, as flink-s3-fs-hadoop 1.20.1 and 2.1.1 log it)."""
_STORE_MESSAGE = re.compile(r"S3Exception: ([^(\n]+?) \(Service: S3, Status Code: (\d{3}),")
"""The S3 error an AWS SDK v2 exception carries: its message and status, no error code (``S3Exception: The provided
token has expired. (Service: S3, Status Code: 400, Request ID: …)``, as flink-s3-fs-native 2.3.0 logs it)."""
STORE_MESSAGES = {("Please reduce your request rate.", "503"): "SlowDown",
                  ("The provided token has expired.", "400"): "ExpiredToken",
                  ("Access Denied", "403"): "AccessDenied",
                  ("The AWS Access Key Id you provided does not exist in our records.", "403"): "InvalidAccessKeyId"}
"""S3's documented messages of the errors a verdict names, with their status: the error code they stand for."""


def store_error(text: str) -> str | None:
    """The S3 error code a cause chain carries, from an SDK v1 exception's code or an SDK v2 exception's message."""
    if (m := _STORE_ERROR.search(text)) is not None:
        return m[1]
    for m in _STORE_MESSAGE.finditer(text):
        if (code := STORE_MESSAGES.get((m[1], m[2]))) is not None:
            return code
    return None
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
    if len(lines) < 2 or not any(isinstance(e, CheckpointDeclined | CheckpointFailed) for e in emit.out[before:]):
        return  # only a failed or declined checkpoint carries the store's error and the user's frame
    store = store_error("\n".join(lines))
    if store is not None:
        for i in range(before, len(emit.out)):
            event = emit.out[i]
            if isinstance(event, CheckpointDeclined | CheckpointFailed):
                emit.out[i] = dataclasses.replace(event, store_error=store)
    found = user_cause(lines)
    if found is None:
        return
    for i in range(before, len(emit.out)):
        event = emit.out[i]
        if isinstance(event, CheckpointDeclined | CheckpointFailed):
            emit.out[i] = dataclasses.replace(event, user_exception=found[0], user_frame=found[1])


def _triggered(msg: str, _lines: Sequence[str], _text: str, emit: Emit) -> None:
    m = _TRIGGER.match(msg)
    if m:
        emit(CheckpointTriggered, job_id=m[4], checkpoint_id=int(m[1]), trigger_ts_ms=int(m[3]), checkpoint_type=m[2])


def _completed(msg: str, _lines: Sequence[str], _text: str, emit: Emit) -> None:
    m = _COMPLETED.match(msg)
    if m:
        emit(CheckpointCompleted, job_id=m[2], checkpoint_id=int(m[1]), size_bytes=int(m[3]),
             duration_ms=int(m[4] or m[5]))


def _expired(msg: str, _lines: Sequence[str], _text: str, emit: Emit) -> None:
    m = _EXPIRED.match(msg)
    if m:
        emit(CheckpointExpired, job_id=m[2], checkpoint_id=int(m[1]))


def _declined(msg: str, lines: Sequence[str], text: str, emit: Emit) -> None:
    m = _DECLINE.match(msg)
    if m:
        reason = _innermost_reason(text) or first_exception(lines)
        emit(CheckpointDeclined, job_id=m[3], checkpoint_id=int(m[1]), attempt_id=m[2], reason=reason)
        _stack_failure(emit, text, job_id=m[3], attempt_id=m[2], message=reason or msg)


def _discarded(msg: str, lines: Sequence[str], text: str, emit: Emit) -> None:
    m = _DISCARD.match(msg)
    if m:
        reason = m[3] or _innermost_reason(text) or first_exception(lines) or ""
        if not _stack_failure(emit, text, job_id=m[2], attempt_id=None, message=reason):
            emit(CheckpointFailed, job_id=m[2], checkpoint_id=int(m[1]), kind=kind_of_reason(reason, default="declined"),
                 message=reason)


def _late(msg: str, _lines: Sequence[str], _text: str, emit: Emit) -> None:
    m = _LATE.match(msg)
    if m:
        emit(CheckpointLateAck, job_id=m[3], checkpoint_id=int(m[1]), attempt_id=m[2])


def _async_part(msg: str, lines: Sequence[str], text: str, emit: Emit) -> None:
    m = _ASYNC_PART.match(msg)
    if m and _CANCELLED not in text:
        if not _stack_failure(emit, text, job_id=None, attempt_id=None, message=first_exception(lines) or msg):
            path = _path_in(text)
            emit(CheckpointFailed, job_id=job_and_checkpoint_from_path(path)[0], checkpoint_id=int(m[2]),
                 kind="async_materialize", operator=m[1], path=path, message=first_exception(lines) or msg)


def _failure_manager(msg: str, lines: Sequence[str], text: str, emit: Emit) -> None:
    m = _FAILURE_MANAGER.match(msg)
    if m and m[1] != "UNKNOWN_CHECKPOINT_ID":
        reason = _innermost_reason(text) or first_exception(lines) or msg
        if not _stack_failure(emit, text, job_id=m[2], attempt_id=None, message=reason):
            default = "trigger" if "or complete" not in msg else "other"
            emit(CheckpointFailed, job_id=m[2], checkpoint_id=int(m[1]), kind=kind_of_reason(reason, default=default),
                 message=reason)


def _trigger_failed(msg: str, _lines: Sequence[str], _text: str, emit: Emit) -> None:
    m = _TRIGGER_FAILED.match(msg)
    if m:
        emit(CheckpointFailed, job_id=m[2], checkpoint_id=int(m[1]), kind="trigger", message=m[3])


def _snapshot(msg: str, _lines: Sequence[str], text: str, emit: Emit) -> None:
    m = _SNAPSHOT.match(msg)
    if m:
        path = _path_in(text)
        emit(CheckpointFailed, job_id=job_and_checkpoint_from_path(path)[0], checkpoint_id=int(m[1]), kind="declined",
             operator=m[2], path=path, message=msg)


def _job_status(msg: str, _lines: Sequence[str], text: str, emit: Emit) -> None:
    m = _JOB_STATUS.match(msg)
    if m:
        emit(JobStatus, job_id=m["job"], job_name=m["name"], from_state=m["from"], to_state=m["to"])
        _lost(text, emit)


def _lost(text: str, emit: Emit) -> None:
    """A lost TaskManager named in the record (its message or a failure's cause chain), once per record."""
    m = _HEARTBEAT.search(text)
    if m:
        emit(TaskManagerLost, taskmanager_id=m[1], taskmanager_host=taskmanager_host(m[1]))


def _heartbeat(_msg: str, _lines: Sequence[str], text: str, emit: Emit) -> None:
    _lost(text, emit)


def _task_status(msg: str, lines: Sequence[str], text: str, emit: Emit) -> None:
    m = _TASK_STATUS.match(msg)
    if m:
        cause = first_exception(lines) or _inline_cause(m["tail"])
        job_id = job_and_checkpoint_from_path(_path_in(text))[0]
        emit(TaskStatus, job_id=job_id, task=m["task"], attempt_id=m["attempt"], from_state=m["from"],
             to_state=m["to"], cause=cause)
        if m["to"] == "FAILED":
            _stack_failure(emit, text, job_id=job_id, attempt_id=m["attempt"], message=cause or msg)
            _lost(text, emit)


def _banner(msg: str, _lines: Sequence[str], _text: str, emit: Emit) -> None:
    m = _BANNER.match(msg)
    if m:
        emit(DaemonStart, component=m["component"].strip(), version=m["version"].strip())


def _setting(msg: str, _lines: Sequence[str], _text: str, emit: Emit) -> None:
    m = _PROPERTY.match(msg)
    if m and m[1] in SETTINGS and (value := duration_ms(m[2])) is not None:
        emit(FlinkSetting, key=m[1], value_ms=value)
    elif m and m[1] in STORAGE_SETTINGS and "://" in m[2]:
        emit(CheckpointStorage, uri=m[2].strip())


def _cause_chain(msg: str, lines: Sequence[str], text: str, emit: Emit) -> None:
    _stack_failure(emit, text, job_id=None, attempt_id=None, message=first_exception(lines) or msg)


def _setting_row(key: str, emits: tuple[type[Event], ...]) -> Wording[Handler]:
    return Wording(f"Loading configuration property: {key}, ", _setting, emits=emits)


_SETTING_ROWS = tuple(_setting_row(key, emits) for keys, emits in ((SETTINGS, (FlinkSetting,)),
                                                                  (STORAGE_SETTINGS, (CheckpointStorage,)))
                      for key in keys)
"""A row per configuration key read: the prefilter passes those lines alone."""

RULES: tuple[Wording[Handler], ...] = (
    Wording("Triggering checkpoint ", _triggered, emits=(CheckpointTriggered,)),
    Wording("Completed checkpoint ", _completed, emits=(CheckpointCompleted,)),
    Wording("expired before completing", _expired, "message", prefix="Checkpoint ", emits=(CheckpointExpired,)),
    Wording("Decline checkpoint ", _declined, emits=(CheckpointDeclined, CheckpointFailed)),
    Wording("Discarding checkpoint ", _discarded, emits=(CheckpointFailed,)),
    Wording("Received late message", _late, emits=(CheckpointLateAck,)),
    Wording("asynchronous part of checkpoint", _async_part, "message", emits=(CheckpointFailed,)),
    Wording("Failed to trigger", _failure_manager, emits=(CheckpointFailed,)),
    Wording("Triggering Checkpoint ", _trigger_failed, emits=(CheckpointFailed,)),
    Wording("Could not complete snapshot ", _snapshot, emits=(CheckpointFailed,)),
    Wording("eartbeat of TaskManager with id ", _heartbeat, "message", emits=(TaskManagerLost,)),
    Wording(" switched from state ", _job_status, "message", prefix="Job ", emits=(JobStatus, TaskManagerLost)),
    Wording(" to FAILED", _task_status, "message", needs=(") switched from ",),
            emits=(TaskStatus, CheckpointFailed, TaskManagerLost)),
    Wording("(Version: ", _banner, "message", emits=(DaemonStart,)),
    *_SETTING_ROWS,
    *flink_spans.RULES,
    Wording("Could not materialize checkpoint ", _cause_chain, "record", emits=(CheckpointFailed,)),
    Wording("Could not perform checkpoint ", _cause_chain, "record", emits=(CheckpointFailed,)),
    Wording("Could not finalize the pending checkpoint ", _cause_chain, "record", emits=(CheckpointFailed,)),
    Wording("Could not complete the pending checkpoint ", _cause_chain, "record", emits=(CheckpointFailed,)),
)
"""Every Flink wording read (JobManager and TaskManager, 1.7 to 2.x), in the order tried: the first row whose phrase
is where it must be takes the record. The last rows find a failure in a record's cause chain whatever its message."""
DISPATCH = Dispatch(RULES)


def _parse_flink(h: Header, lines: Sequence[str], emit: Emit) -> None:
    msg = h.message.strip()
    client = h.segment.startswith(hdfs_client.LOGGERS)
    text = "\n".join(lines)
    rule = (hdfs_client.DISPATCH if client else DISPATCH).first(msg, text)
    if rule is not None:
        rule.handler(msg, lines, text, emit)


def _path_in(text: str) -> str | None:
    m = _FLUSH_PATH.search(text)
    return m[1] if m else None


def _inline_cause(tail: str) -> str | None:
    marker = "with failure cause:"
    if marker in tail:
        rest = tail.split(marker, 1)[1].strip()
        return rest.splitlines()[0][:500] if rest else None
    return None
