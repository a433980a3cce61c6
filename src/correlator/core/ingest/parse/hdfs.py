"""Hadoop DataNode / NameNode records (2.7 → 3.4) to typed events: lock reports, DirectoryScanner, write path.

Each wording is a row of ``RULES`` (``wording.Wording``); the prefilter's HDFS triggers and ingest's burst fast path
are generated from them."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from correlator.core.events import (
    BlockAllocated,
    BlockWrite,
    DaemonStart,
    DatanodeAddress,
    DatasetLockHeld,
    DatasetLockWait,
    DirectoryScanConfig,
    DirectoryScanReconcile,
    DirectoryScanStats,
    DnWriteError,
    JvmPause,
    NameNodeLockHeld,
    SlowIo,
    SlowIoKind,
)
from correlator.core.ingest.parse.emit import Emit
from correlator.core.ingest.parse.header import Header
from correlator.core.ingest.parse.identifiers import datanodes
from correlator.core.ingest.parse.stacks import first_exception, is_util_frame, short_frame
from correlator.core.ingest.parse.wording import Dispatch, Wording
from correlator.core.ingest.timestamps import TimestampError, to_epoch_ms
from correlator.core.ingest.writes import CLOSE_PHRASE

Handler = Callable[[Header, Sequence[str], Emit], None]
"""An HDFS row's handler: (the record's header, its lines, emit)."""


_LOCK_HELD = re.compile(
    r"Lock held time above threshold(?:\(\d+ ms\))?: lock identifier: (\S+) lockHeldTimeMs=(\d+) ms\."
    r"(?: Suppressed (\d+) lock warnings\.)?"
)
_LOCK_WAIT = re.compile(
    r"Waited above threshold(?:\(\d+ ms\))? to acquire lock: lock identifier: (\S+) waitTimeMs=(\d+) ms\."
)
_STATS = re.compile(
    r"(?:Scan Results: )?BlockPool (\S+) Total blocks: ?(\d+), missing metadata files: ?(\d+), "
    r"missing block files: ?(\d+), missing blocks in memory: ?(\d+), mismatched blocks: ?(\d+)"
    r"(?:, duplicated blocks: ?(\d+))?"
)
_SCAN_START = "Periodic Directory Tree Verification scan "
_START_D = re.compile(r"starting in (\d+)ms with interval of (\d+)ms(?: and throttle limit of (-?\d+)ms/s)?")
_START_B = re.compile(r"starting at (\d+)ms with interval of (\d+)ms(?: and throttle limit of (-?\d+)ms/s)?")
_START_A = re.compile(r"starting at (\d+) with interval (\d+)")
_START_C = re.compile(r"starting at (.+?) with interval of (\d+)ms(?: and throttle limit of (-?\d+)ms/s)?")
_SHORT_DATE = re.compile(
    r"(?P<mo>\d{1,2})/(?P<d>\d{1,2})/(?P<yy>\d\d),? (?P<h>\d{1,2}):(?P<mi>\d\d)[\s\u202f](?P<ampm>[AaPp][Mm])")
_WALL = re.compile(r"(\d{4})-(\d\d)-(\d\d)[ T](\d\d):(\d\d):(\d\d)")
_BLOCK = re.compile(r"(blk_-?\d+_\d+|-?\d{4,})")
_RECONCILE: tuple[tuple[str, str], ...] = (
    ("Deleted a metadata file without a block", "delete_orphan_meta"),
    ("from memory with missing block file on the disk", "remove_from_memory"),
    ("Deleted a metadata file for the deleted block", "delete_meta"),
    ("Added missing block to memory", "add_to_memory"),
    ("Deleting missing provided block", "delete_provided"),
    ("does not exist. Updating it to the file found during scan", "update_file"),
    ("Updating generation stamp for block", "update_genstamp"),
    ("does not match file found by scan", "meta_mismatch"),
    ("Updating size of block", "update_size"),
    (" is not a regular file.", "not_regular_file"),
    ("as corrupt due to length mismatch", "report_corrupt"),
    ("Failed to repot bad block", "report_failed"),
    (". Will retry on next scan", "delete_failed"),
)
_SLOW_IO: tuple[tuple[str, SlowIoKind], ...] = (
    ("Slow BlockReceiver write data to disk cost:", "disk_write"),
    ("Slow BlockReceiver write packet to mirror took ", "mirror_write"),
    ("Slow flushOrSync took ", "flush_or_sync"),
    ("Slow manageWriterOsCache took ", "os_cache"),
    ("Slow PacketResponder send ack to upstream took ", "ack_upstream"),
)
_DURATION = re.compile(r"\s?(\d+)ms \(threshold=(\d+)ms\)")
_VOLUME = re.compile(r"volume=([^,\s]+)")
_BLOCK_ID = re.compile(r"blockId=(-?\d+)")
_RESPONDER_BLOCK = re.compile(r"PacketResponder: \S*?blk_(-?\d+)_")
_DOWNSTREAM = re.compile(r"downstream DNs=(\[(?:[^\[\]]|\[[^\]]*\])*\])")
_RECEIVING = re.compile(r"Receiving (\S+) src: /?(\S+) dest: /?(\S+)")
_TRACE_FIELD = re.compile(r"(\w+(?:\(ns\))?): ?([^,]*)")
_NN_OLD = re.compile(r"FSNamesystem (?:(\w+) )?(read|write) lock held for (\d+) ms")
_NN_NEW = re.compile(r"Number of suppressed (read|write)-lock reports: \d+")
_NN_LONGEST = re.compile(r"Longest (?:read|write)-lock held at (\S+ \S+) for (\d+)ms(?: by (\S+))?")
_PAUSE = re.compile(r"Detected pause in JVM or host machine \(eg GC\): pause of approximately (\d+)ms")
_ADDRESS = re.compile(r"[\w.-]+:\d{1,5}")
_ALLOCATE = re.compile(r"BLOCK\* allocate (blk_-?\d+_\d+)(.*) for (/\S*)$", re.DOTALL)
_ALLOCATE_BLOCK = re.compile(r"BLOCK\* allocateBlock: (/\S*?)\. (?:\S+ )?(blk_-?\d+_\d+)(.*)$", re.DOTALL)
_PLAIN_REPLICAS = re.compile(r"^, replicas=(.*)$")
_UC_REPLICA = re.compile(r":[A-Z_]+:([^|\]\s]+:\d+)\|")
_XCEIVER = re.compile(r"DataXceiver error processing WRITE_BLOCK operation\s+src: /?(\S+) dst: /?(\S+)")
_OP_WRITE = re.compile(r"opWriteBlock (\S+) received exception (.*)", re.DOTALL)
_EXCEPTION_FOR = re.compile(r"Exception for (\S*blk_-?\d+_\d+)")
_NN_COMMANDS = re.compile(r"Took (\d+) ?ms to process (\d+) commands from NN")
_BANNER_START = re.compile(r"STARTUP_MSG: Starting (\w+)")
_BANNER_VERSION = re.compile(r"STARTUP_MSG:\s+version = (\S+)")
_BANNER_HOST = re.compile(r"STARTUP_MSG:\s+host = ([^/\s]+)")


def banner_host(text: str) -> str | None:
    m = _BANNER_HOST.search(text)
    return m[1] if m else None


def _frames(h: Header, lines: Sequence[str]) -> tuple[str, ...]:
    """The lock report's stack: the rest of the header after ``The stack trace is: `` and the lines up to a blank."""
    first = h.message.split("The stack trace is: ", 1)[1] if "The stack trace is: " in h.message else ""
    raw = [first, *lines[1:]]
    out: list[str] = []
    for frame in raw:
        if not frame.strip():
            if out:
                break
            continue
        if is_util_frame(frame):
            continue
        short = short_frame(frame)
        if short:
            out.append(short)
    return tuple(out)


def _lock_held(h: Header, lines: Sequence[str], emit: Emit) -> None:
    m = _LOCK_HELD.match(h.message)
    if m:
        stack = _frames(h, lines)
        emit(DatasetLockHeld, lock=m[1], held_ms=int(m[2]), holder=stack[0] if stack else "unknown", stack=stack,
             suppressed=int(m[3]) if m[3] else None, role="datanode")


def _lock_wait(h: Header, lines: Sequence[str], emit: Emit) -> None:
    m = _LOCK_WAIT.match(h.message)
    if m:
        stack = _frames(h, lines)
        emit(DatasetLockWait, lock=m[1], wait_ms=int(m[2]), waiter=stack[0] if stack else "unknown", stack=stack,
             role="datanode")


def _scan_stats(h: Header, lines: Sequence[str], emit: Emit) -> None:
    m = _STATS.search(h.message)
    if m:
        emit(DirectoryScanStats, block_pool=m[1], total_blocks=int(m[2]), missing_meta=int(m[3]),
             missing_block=int(m[4]), missing_memory=int(m[5]), mismatched=int(m[6]),
             duplicate=int(m[7]) if m[7] else None, role="datanode")


def _scan_start(h: Header, lines: Sequence[str], emit: Emit) -> None:
    _scan_config(h.message[len(_SCAN_START):], emit, h.stamp)


def _reconcile(phrase: str, action: str) -> Handler:
    def handle(h: Header, lines: Sequence[str], emit: Emit) -> None:
        before, after = h.message.split(phrase, 1)
        m = _BLOCK.search(before + " " + after)
        emit(DirectoryScanReconcile, action=action, block=m[1] if m else None, role="datanode")
    return handle


def _slow(phrase: str, kind: SlowIoKind) -> Handler:
    def handle(h: Header, lines: Sequence[str], emit: Emit) -> None:
        _slow_io(kind, h.message[len(phrase):], emit)
    return handle


def _receiving(h: Header, lines: Sequence[str], emit: Emit) -> None:
    m = _RECEIVING.match(h.message)
    if m:
        emit(BlockWrite, block=m[1], src=m[2], dest=m[3], role="datanode")


def _clienttrace(h: Header, lines: Sequence[str], emit: Emit) -> None:
    fields = dict(_TRACE_FIELD.findall(h.message))
    duration = fields.get("duration(ns)") or fields.get("duration")
    block = fields.get("blockid")
    if block:
        emit(BlockWrite, block=block.strip(), src=fields.get("src", "").strip().lstrip("/"),
             dest=fields.get("dest", "").strip().lstrip("/"),
             duration_ms=int(duration.strip()) // 1_000_000 if duration and duration.strip().isdigit() else None,
             phase="finished", role="datanode")


def _nn_lock_old(h: Header, lines: Sequence[str], emit: Emit) -> None:
    m = _NN_OLD.search(h.message)
    if m:
        emit(NameNodeLockHeld, kind=m[2], held_ms=int(m[3]), op=m[1], role="namenode")


def _nn_lock_reports(h: Header, lines: Sequence[str], emit: Emit) -> None:
    if not _NN_NEW.search(h.message):
        return
    m = _NN_LONGEST.search("\n".join(lines))
    if m:
        try:
            start = to_epoch_ms(m[1])
        except TimestampError:
            start = None
        emit(NameNodeLockHeld, kind="write" if "write-lock" in h.message else "read", held_ms=int(m[2]), op=m[3],
             start_ts_ms=start, role="namenode")


def _streaming_server(h: Header, lines: Sequence[str], emit: Emit) -> None:
    address = h.message[len("Opened streaming server at "):].strip().lstrip("/")
    if _ADDRESS.fullmatch(address) and not address.startswith("0.0.0.0:"):
        emit(DatanodeAddress, address=address, role="datanode")


def _allocate_rule(h: Header, lines: Sequence[str], emit: Emit) -> None:
    _allocate(h.message, emit)


def _xceiver_error(h: Header, lines: Sequence[str], emit: Emit) -> None:
    m = _XCEIVER.search(h.message)
    if m:
        emit(DnWriteError, kind="dataxceiver_write_block", peer=m[1], local=m[2],
             exception=first_exception(lines) or _after_semicolon(h.message), role="datanode")


def _op_write_block(h: Header, lines: Sequence[str], emit: Emit) -> None:
    m = _OP_WRITE.match(h.message)
    if m:
        emit(DnWriteError, kind="op_write_block", block=m[1], exception=m[2].strip()[:500], role="datanode")


def _exception_for(h: Header, lines: Sequence[str], emit: Emit) -> None:
    m = _EXCEPTION_FOR.match(h.message)
    if m:
        emit(DnWriteError, kind="block_exception", block=m[1], exception=first_exception(lines), role="datanode")


def _nn_commands(h: Header, lines: Sequence[str], emit: Emit) -> None:
    m = _NN_COMMANDS.match(h.message)
    if m:
        emit(DnWriteError, kind="slow_nn_commands", duration_ms=int(m[1]), role="datanode")


def _pause(h: Header, lines: Sequence[str], emit: Emit) -> None:
    m = _PAUSE.match(h.message)
    if m:
        emit(JvmPause, pause_ms=int(m[1]), gc=any("GC pool" in line for line in lines[1:]))


def _banner(h: Header, lines: Sequence[str], emit: Emit) -> None:
    text = "\n".join(lines)
    banner = _BANNER_START.search(text)
    if banner:
        version = _BANNER_VERSION.search(text)
        component = banner[1]
        emit(DaemonStart, component=component, version=version[1] if version else None,
             role={"DataNode": "datanode", "NameNode": "namenode"}.get(component))


_DATASET = frozenset({"FsDatasetImpl", "FsVolumeImpl", "FSDataset", "DataNode"})
"""Where reconcile lines are logged: the dataset, or the DataNode's own logger in 2.x releases before FsDatasetImpl."""
RULES: tuple[Wording[Handler], ...] = (
    Wording("Lock held time above threshold", _lock_held, emits=(DatasetLockHeld,)),
    Wording("Waited above threshold", _lock_wait, emits=(DatasetLockWait,)),
    Wording(" Total blocks: ", _scan_stats, "message", emits=(DirectoryScanStats,)),
    Wording(_SCAN_START, _scan_start, emits=(DirectoryScanConfig,)),
    *(Wording(phrase, _reconcile(phrase, action), "message", loggers=_DATASET, emits=(DirectoryScanReconcile,),
              burst="reconcile" if action in ("remove_from_memory", "add_to_memory") else None)
      for phrase, action in _RECONCILE),
    *(Wording(phrase, _slow(phrase, kind), emits=(SlowIo,), burst=kind) for phrase, kind in _SLOW_IO),
    Wording("Receiving ", _receiving, emits=(BlockWrite,), write=True),
    Wording(CLOSE_PHRASE, _clienttrace, "message", loggers=frozenset({"clienttrace"}), emits=(BlockWrite,),
            write=True),
    Wording(" lock held for ", _nn_lock_old, "message", emits=(NameNodeLockHeld,)),
    Wording("-lock reports: ", _nn_lock_reports, "message", emits=(NameNodeLockHeld,)),
    Wording("Opened streaming server at ", _streaming_server, emits=(DatanodeAddress,)),
    Wording("BLOCK* allocate", _allocate_rule, emits=(BlockAllocated,)),
    Wording("DataXceiver error processing WRITE_BLOCK", _xceiver_error, "message", emits=(DnWriteError,)),
    Wording("opWriteBlock ", _op_write_block, emits=(DnWriteError,)),
    Wording("Exception for ", _exception_for, emits=(DnWriteError,)),
    Wording(" commands from NN", _nn_commands, "message", emits=(DnWriteError,)),
    Wording("Detected pause in JVM", _pause, emits=(JvmPause,)),
    Wording("STARTUP_MSG: ", _banner, emits=(DaemonStart,)),
)
"""Every HDFS wording this parser reads, in the order they are tried (the first row that takes the record, its
phrase where it must be and its logger one of the row's, reads it). The prefilter's HDFS trigger phrases are these
phrases (block-write rows aside: the write-line reader finds those lines; ``CLOSE_PHRASE`` is its phrase), so a
wording added here can never be filtered out before it is read."""
DISPATCH = Dispatch(RULES)


def parse_hdfs(h: Header, lines: Sequence[str], emit: Emit) -> None:
    rule = DISPATCH.first(h.message, logger=h.segment)
    if rule is not None:
        rule.handler(h, lines, emit)


def _allocate(msg: str, emit: Emit) -> None:
    """3.x ``BLOCK* allocate blk, replicas=ip:port, … for path``; 2.7 under-construction ``{…replicas=[…]}`` form;
    2.x ``BLOCK* allocateBlock: path. bpid blk{…}``."""
    m = _ALLOCATE.match(msg)
    if m:
        block, rest, path = m[1], m[2], m[3]
    else:
        m = _ALLOCATE_BLOCK.match(msg)
        if m is None:
            return
        path, block, rest = m[1], m[2], m[3]
    plain = _PLAIN_REPLICAS.match(rest)
    if plain:
        replicas = tuple(r.strip() for r in plain[1].split(",") if r.strip())
    else:
        replicas = tuple(_UC_REPLICA.findall(rest))
    emit(BlockAllocated, path=path, block=block, replicas=replicas, role="namenode")


def _after_semicolon(msg: str) -> str | None:
    return msg.split("; ", 1)[1][:500] if "; " in msg else None


def _scan_config(rest: str, emit: Emit, stamp: str | None) -> None:
    if rest.startswith("is disabled"):
        emit(DirectoryScanConfig, enabled=False, role="datanode")
        return
    m = _START_D.match(rest)
    if m:
        emit(DirectoryScanConfig, interval_ms=int(m[2]), throttle_ms_per_s=_int(m[3]),
             first_scan_ms=emit.ts_ms + int(m[1]), role="datanode")
        return
    for pattern in (_START_B, _START_A):
        m = pattern.match(rest)
        if m:
            throttle = _int(m[3]) if pattern is _START_B else None
            emit(DirectoryScanConfig, interval_ms=int(m[2]), throttle_ms_per_s=throttle, first_scan_ms=int(m[1]),
                 role="datanode")
            return
    m = _START_C.match(rest)
    if m:
        first = short_date_ms(m[1], emit.ts_ms, stamp)
        emit(DirectoryScanConfig, interval_ms=int(m[2]), throttle_ms_per_s=_int(m[3]), first_scan_ms=first,
             first_scan_to_minute=first is not None, role="datanode")


def short_date_ms(text: str, line_ms: int, stamp: str | None) -> int | None:
    """The scanner's first-run time as the JDK's SHORT date-time format wrote it in the DataNode's zone (en-US:
    ``1/2/20 9:05 AM`` on JDK 8, ``12/2/26, 5:18 PM`` from 9 on, a narrow no-break space before ``PM`` from 20):
    read to the minute, in the zone of the line's own stamp (the same JVM wrote both), so the offset between the
    stamp's wall time and its epoch converts it. ``None`` when either is not readable."""
    m = _SHORT_DATE.fullmatch(text.strip())
    wall = _WALL.match(stamp or "")
    if m is None or wall is None:
        return None
    hour = int(m["h"]) % 12 + (12 if m["ampm"].upper() == "PM" else 0)
    try:
        first = datetime(2000 + int(m["yy"]), int(m["mo"]), int(m["d"]), hour, int(m["mi"]), tzinfo=UTC)
        y, mo, d, hh, mi, ss = (int(x) for x in wall.groups())
        logged = datetime(y, mo, d, hh, mi, ss, tzinfo=UTC)
    except ValueError:
        return None
    offset_ms = line_ms - int(logged.timestamp() * 1000) - line_ms % 1000
    return int(first.timestamp() * 1000) + offset_ms


def _slow_io(kind: SlowIoKind, rest: str, emit: Emit) -> None:
    m = _DURATION.match(rest)
    if m is None:
        return
    tail = rest[m.end():]
    volume = _VOLUME.search(tail)
    block = _BLOCK_ID.search(tail) or _RESPONDER_BLOCK.search(tail)
    downstream = _DOWNSTREAM.search(tail)
    emit(
        SlowIo,
        kind=kind,
        duration_ms=int(m[1]),
        threshold_ms=int(m[2]),
        volume=volume[1] if volume else None,
        block_id=block[1] if block else None,
        downstream=datanodes(downstream[1]) if downstream else (),
        role="datanode",
    )


def _int(text: str | None) -> int | None:
    return None if text is None else int(text)
