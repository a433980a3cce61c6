"""The HDFS client inside Flink (``DataStreamer``, ``DFSClient`` loggers): write-path errors and slow acknowledgements."""

from __future__ import annotations

import re
from collections.abc import Sequence

from correlator.core.events import ClientErrorKind, HdfsClientError, HdfsClientSlow
from correlator.core.ingest.parse.emit import Emit
from correlator.core.ingest.parse.identifiers import datanodes
from correlator.core.ingest.parse.stacks import first_exception
from correlator.core.ingest.parse.wording import Dispatch, Handler, Wording

LOGGERS = ("DataStreamer", "DFSClient")
"""Logger class names (a prefix of) whose records only these rows read."""

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


_BLOCK = re.compile(r"(?:\S+:)?blk_-?\d+_\d+")
_FIRST_BAD = re.compile(r"firstBadLink as /?([\w.-]+:\d+)")
_REMOTE = re.compile(r"remote=/?([\w.-]+:\d+)")
_SOURCE_FILE = re.compile(r'Source file "([^"]+)"')
_ERRORS: tuple[tuple[str, ClientErrorKind], ...] = (
    ("Exception in createBlockOutputStream", "create_block_output_stream"),
    ("Abandoning ", "abandon_block"),
    ("Excluding datanode ", "exclude_datanode"),
    ("Could not get block locations.", "aborting"),
    ("DataStreamer Exception", "streamer_exception"),
    ("Error while syncing", "sync_error"),
)


def _error(kind: ClientErrorKind, msg: str, lines: Sequence[str], emit: Emit) -> None:
    """One client write-path error; the DataNode is the excluded one, a ``firstBadLink`` or a timeout's ``remote=``."""
    text = "\n".join(lines[:12])
    block = _BLOCK.search(msg)
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




def _error_of(kind: ClientErrorKind) -> Handler:
    def handle(msg: str, lines: Sequence[str], _text: str, emit: Emit) -> None:
        _error(kind, msg, lines, emit)
    return handle


def _slow_ack(msg: str, _lines: Sequence[str], _text: str, emit: Emit) -> None:
    m = _SLOW_ACK.match(msg) or _NO_ACK.match(msg)
    if m is not None:
        emit(HdfsClientSlow, op="waitForAckedSeqno" if msg.startswith("Slow") else "noAck", duration_ms=int(m[1]),
             threshold_ms=int(m[2]), path=m[3], block=m[4], datanodes=datanodes(m[5]) if m[5] else ())


def _slow_read(msg: str, _lines: Sequence[str], _text: str, emit: Emit) -> None:
    m = _SLOW_READ.match(msg)
    if m is not None:
        emit(HdfsClientSlow, op="readAck", duration_ms=int(m[2]), threshold_ms=int(m[3]), block=m[1],
             datanodes=datanodes(m[4]))


RULES: tuple[Wording[Handler], ...] = (
    *(Wording(phrase, _error_of(kind), emits=(HdfsClientError,)) for phrase, kind in _ERRORS),
    Wording("Slow waitForAckedSeqno", _slow_ack, emits=(HdfsClientSlow,)),
    Wording("No ack received, took ", _slow_ack, emits=(HdfsClientSlow,)),
    Wording("Slow ReadProcessor read fields", _slow_read, emits=(HdfsClientSlow,)),
)
"""Every HDFS client wording read, in the order tried (Hadoop 2.7-3.4 ``DataStreamer`` / ``DFSClient``)."""
DISPATCH = Dispatch(RULES)
