"""One reassembled record → typed events: pick the parser (GC, object store, Kafka broker, Flink, HDFS client, Kafka
client, Hadoop), time, role and host.

Raises :class:`Rejected` with a stable reason for records that cannot be placed (no header, no usable time).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date as date_type
from datetime import datetime, timedelta
from functools import lru_cache

from correlator.core.events import KAFKA_ROLE, OBJECT_STORE_ROLE, Event
from correlator.core.ingest.parse.emit import Emit
from correlator.core.ingest.parse.flink import parse_flink
from correlator.core.ingest.parse.gc import STOPS, is_gc_line, parse_gc
from correlator.core.ingest.parse.hdfs import banner_host, parse_hdfs
from correlator.core.ingest.parse.header import Header, parse_header
from correlator.core.ingest.parse.kafka import CLIENT_LOGGERS, broker_record, parse_broker, parse_client
from correlator.core.ingest.parse.refusals import emit_refusals
from correlator.core.ingest.parse.s3_access import parse_s3_access
from correlator.core.ingest.records import Origin
from correlator.core.ingest.sources import family_of_logger, role_of_logger
from correlator.core.ingest.timestamps import LocalClock, TimestampError, local_date, to_epoch_ms

SAFEPOINT_TWIN_MS = 100
"""A safepoint line ending within this of a GC pause's end describes the same stop (the GC line is kept)."""

_FAMILY_ROLE = {"flink": "taskmanager", "hdfs": "datanode"}
_HDFS_CLIENT = ("DataStreamer", "DFSClient")
_FOREIGN = ("org.", "com.", "io.", "net.")
_ACCESS_FIRST = frozenset("0123456789abcdef")
"""An S3 server access log record starts with its bucket owner's canonical id (64 hex digits, then a space): a
cheap test that spares every dated log4j record the access record's pattern."""


class Rejected(Exception):
    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


@dataclass(slots=True)
class SourceState:
    """What one source stream has taught us: its role, the banner's host, its current date and last event time."""

    role: str | None = None
    host: str | None = None
    date: list[int] | None = None
    last_ts_ms: int | None = None
    gc_end_ms: int | None = None
    progress_bucket: str | None = None
    """Log-time bookkeeping of ``core.progress``: current bucket, last stamp seen and reported, time held back."""
    progress_last: str | None = None
    progress_sent: str | None = None
    progress_pending: int | None = None


def parse_record(
    lines: Sequence[str],
    ref: str,
    origin: Origin,
    state: SourceState,
    clock: LocalClock,
    *,
    min_gc_pause_ms: int = 0,
) -> list[Event]:
    events: list[Event] = []
    first = lines[0]
    looks_gc = first[:1] == "[" or (first[:4].isdigit() and first[10:11] == "T")
    if origin.family == "gc" or (looks_gc and is_gc_line(first)):
        emit = _emitter(origin, state, 0, origin.role or state.role, ref, events)
        try:
            usable = parse_gc(lines, emit, min_pause_ms=min_gc_pause_ms)
        except TimestampError as exc:
            raise Rejected("bad_timestamp", str(exc)) from None
        if usable or origin.family == "gc":
            return _without_safepoint_twins(events, first, state)
    if first[:1] in _ACCESS_FIRST and first[64:65] == " ":
        emit = _emitter(origin, state, 0, OBJECT_STORE_ROLE, ref, events)
        try:
            if (at := parse_s3_access(lines, emit)) is not None:
                state.last_ts_ms = at
                return events
        except TimestampError as exc:
            raise Rejected("bad_timestamp", str(exc)) from None
    broker = broker_record(first) if first[:1] == "[" else None
    if broker is not None:
        state.last_ts_ms = _timestamp(broker["ts"], origin, state, clock)
        parse_broker(broker, _emitter(origin, state, state.last_ts_ms, KAFKA_ROLE, ref, events))
        return events
    header = parse_header(first)
    if header is None:
        raise Rejected("unknown_layout", "record has no recognisable header line")
    ts_ms = _timestamp(header.stamp, origin, state, clock)
    state.last_ts_ms = ts_ms
    _dispatch(header, lines, origin, state, ts_ms, ref, events)
    return events


def _dispatch(header: Header, lines: Sequence[str], origin: Origin, state: SourceState, ts_ms: int, ref: str,
              events: list[Event]) -> None:
    logger, seg = header.logger, header.segment
    proven = role_of_logger(logger)
    if proven and not origin.role:
        state.role = proven
    role = proven or origin.role or state.role or _FAMILY_ROLE.get(origin.family or "", "unknown")
    emit = _emitter(origin, state, ts_ms, role, ref, events)
    if "STARTUP_MSG" in header.message:
        state.host = state.host or banner_host("\n".join(lines))
        emit = emit.bind(host=origin.host or state.host or "unknown")
    family = family_of_logger(logger)
    if seg in CLIENT_LOGGERS:
        parse_client(header.message, lines, emit)
        return
    if seg.startswith(_HDFS_CLIENT):
        emit = emit.bind(role=origin.role or state.role or "taskmanager")
        parse_flink(header, lines, emit)
    elif family == "flink" or (family is None and not logger.startswith(_FOREIGN) and origin.family == "flink"):
        parse_flink(header, lines, emit)
    elif family == "hdfs" or (family is None and not logger.startswith(_FOREIGN)):
        if seg == "JvmPauseMonitor":
            emit = emit.bind(role=origin.role or state.role or "datanode")
        parse_hdfs(header, lines, emit)
        if not events and origin.family != "hdfs" and family is None:
            parse_flink(header, lines, emit)
    emit_refusals(lines, emit)


_HALF_DAY_MS = 12 * 3600 * 1000


def _timestamp(stamp: str | None, origin: Origin, state: SourceState, clock: LocalClock) -> int:
    """The record's time: its own stamp in the source's zone; for stamp-less layouts the shipper's or the last."""
    shipper = origin.shipper_ts_ms
    if stamp is None:
        fallback = shipper if shipper is not None else state.last_ts_ms
        if fallback is None:
            raise Rejected("no_timestamp", "no timestamp in the record and none from the shipper")
        return int(fallback)
    plain = _plain_stamp(stamp)
    if plain is not None:
        state.date = [plain[0], plain[1], plain[2]]
        try:
            return clock.reading(*plain)[0]
        except TimestampError as exc:
            raise Rejected("bad_timestamp", str(exc)) from None
    try:
        date = local_date(stamp)
        if date is not None:
            state.date = list(date)
            return to_epoch_ms(stamp, clock)
        known = (state.date[0], state.date[1], state.date[2]) if state.date else origin.file_date
        if known is None and shipper is not None:
            local = datetime.fromtimestamp(shipper / 1000, tz=clock.zone)
            known = (local.year, local.month, local.day)
        if known is None:
            raise Rejected("no_timestamp", "time of day without a date, and no date known for this source: "
                           "name the file with its date (*.log.yyyy-MM-dd) or set --layout with a date")
        ts_ms = to_epoch_ms(stamp, clock, date=(known[0], known[1], known[2]))
        if state.last_ts_ms is not None and ts_ms < state.last_ts_ms - _HALF_DAY_MS:  # the clock passed midnight
            day = date_type(*known) + timedelta(days=1)
            state.date = [day.year, day.month, day.day]
            ts_ms = to_epoch_ms(stamp, clock, date=(day.year, day.month, day.day))
        elif not state.date:
            state.date = list(known)
        return ts_ms
    except TimestampError as exc:
        raise Rejected("bad_timestamp", str(exc)) from None


def _plain_stamp(stamp: str) -> tuple[int, int, int, int, int, int, int] | None:
    """The parts of the common ``yyyy-MM-dd HH:mm:ss,SSS`` stamp (``T``, ``.`` too) read by position: what
    :func:`to_epoch_ms` reads from it with its patterns, for the stamp nearly every record has; None for any other."""
    if len(stamp) != 23 or stamp[16] != ":" or stamp[19] not in ",.":
        return None
    minute = _minute_parts(stamp[:16])
    second, milli = stamp[17:19], stamp[20:]
    if minute is None or not (second + milli).isdecimal():
        return None
    return minute[0], minute[1], minute[2], minute[3], minute[4], int(second), int(milli)


@lru_cache(maxsize=1024)
def _minute_parts(minute: str) -> tuple[int, int, int, int, int] | None:
    """``yyyy-MM-dd HH:mm`` as numbers, remembered: a log's records share their minute with many others."""
    if minute[4] != "-" or minute[7] != "-" or minute[10] not in " T" or minute[13] != ":":
        return None
    if not (minute[:4] + minute[5:7] + minute[8:10] + minute[11:13] + minute[14:16]).isdecimal():
        return None
    return int(minute[:4]), int(minute[5:7]), int(minute[8:10]), int(minute[11:13]), int(minute[14:16])


def _emitter(
    origin: Origin, state: SourceState, ts_ms: int, role: str | None, ref: str, events: list[Event]
) -> Emit:
    host = origin.host or state.host or "unknown"
    return Emit(ts_ms, origin.cluster, host, role or "unknown", ref, events)


def _without_safepoint_twins(events: list[Event], first: str, state: SourceState) -> list[Event]:
    safepoint = any(row.takes(first) for row in STOPS)
    kept: list[Event] = []
    for event in events:
        if safepoint and state.gc_end_ms is not None and abs(event.ts_ms - state.gc_end_ms) <= SAFEPOINT_TWIN_MS:
            continue
        if not safepoint:
            state.gc_end_ms = event.ts_ms
        kept.append(event)
    return kept
