"""S3 server access log records → :class:`ObjectStoreRequest` events.

The documented record: space-separated fields, a bracketed time and quoted request line, user agent and referrer —
``<bucket owner> <bucket> [06/Feb/2019:00:00:38 +0000] <remote ip> <requester> <request id> <operation> <key>
"<request-uri>" <http status> <error code> <bytes sent> <object size> <total time> <turn-around time> "<referer>"
"<user agent>" <version id> <host id> …`` (later fields were added over the years; they are not read). Every record is
one line. A record becomes an event when it matters to a checkpoint: the store refused it with a server error or a
throttle (5xx, 429, an error code of throttling) or for its credentials (``STORE_CREDENTIAL_CODES``), it took
``SLOW_STORE_REQUEST_MS`` or more, or it is a write (a PUT, a multipart POST) that took ``HELD_STORE_REQUEST_MS`` or
more: enough to show how many uploads the client had in flight.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from correlator.core.events import (
    HELD_STORE_REQUEST_MS,
    OBJECT_STORE_ROLE,
    SLOW_STORE_REQUEST_MS,
    STORE_CREDENTIAL_CODES,
    STORE_THROTTLE_CODES,
    STORE_WRITES,
    ObjectStoreRequest,
)
from correlator.core.ingest.parse.emit import Emit
from correlator.core.ingest.timestamps import to_epoch_ms

RECORD = re.compile(
    r"^(?P<owner>[0-9a-f]{64}|-) (?P<bucket>\S+) \[(?P<d>\d\d)/(?P<mon>[A-Z][a-z]{2})/(?P<y>\d{4}):(?P<t>\d\d:\d\d:\d\d)"
    r" (?P<sign>[+-])(?P<oh>\d\d)(?P<om>\d\d)\] (?P<ip>\S+) (?P<requester>\S+) (?P<rid>\S+) (?P<op>[A-Z]+\.\S+) "
    r"(?P<key>\S+) \"(?P<uri>[^\"]*)\" (?P<status>\d{3}|-) (?P<error>\S+) (?P<sent>\S+) (?P<size>\S+) "
    r"(?P<total>\d+|-) (?P<turn>\d+|-)(?: |$)"
)
PHRASES = (" REST.PUT.", " REST.POST.", " SlowDown ", " 503 ",
           *(f" {code} " for code in sorted(STORE_CREDENTIAL_CODES)))
"""The prefilter's phrases: every write (a PUT, a multipart POST) is read for its time, any other request only when
it was throttled, failed with 503 or was refused for its credentials."""
_MONTHS = {m: i for i, m in enumerate(("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov",
                                       "Dec"), start=1)}


def is_record(line: str) -> bool:
    return RECORD.match(line) is not None


def throttled(status: int | None, error_code: str | None) -> bool:
    """The store asked the client to slow down: ``503 SlowDown`` (S3), 429, or a throttling error code."""
    return status in (429, 503) or (error_code is not None and error_code in STORE_THROTTLE_CODES)


def parse_s3_access(lines: Sequence[str], emit: Emit) -> int | None:
    """Emit the record's event when it matters; the record's time, or ``None`` when the line is no access log
    record."""
    m = RECORD.match(lines[0])
    if m is None:
        return None
    month = _MONTHS.get(m["mon"])
    if month is None:
        return None
    status = int(m["status"]) if m["status"] != "-" else None
    error = m["error"] if m["error"] != "-" else None
    total = int(m["total"]) if m["total"] != "-" else None
    at = record_ms(m)
    if not (throttled(status, error) or (status is not None and status >= 500) or (total or 0) >= SLOW_STORE_REQUEST_MS
            or (error is not None and error in STORE_CREDENTIAL_CODES)
            or ((total or 0) >= HELD_STORE_REQUEST_MS and m["op"].startswith(STORE_WRITES))):
        return at
    in_store = emit.bind(ts_ms=at, host=m["bucket"])  # the record names its store: the bucket is where the cause is
    in_store(ObjectStoreRequest, role=OBJECT_STORE_ROLE, bucket=m["bucket"], key=m["key"] if m["key"] != "-" else None,
             operation=m["op"], status=status, error_code=error, total_ms=total,
             request_id=m["rid"] if m["rid"] != "-" else None)
    return at


def record_ms(m: re.Match[str]) -> int:
    """The record's time (when the store received the request), epoch ms."""
    month = _MONTHS[m["mon"]]
    return to_epoch_ms(f"{m['y']}-{month:02d}-{m['d']}T{m['t']}{m['sign']}{m['oh']}:{m['om']}")
