"""A checkpoint on an object store: the store's own request log (S3 server access logs) read against the case.

Flink names a checkpoint's objects ``<checkpoint dir>/<job id>/chk-<n>/…`` (``shared/`` and ``taskowned/`` beside
them), so a record of the store names the job it served by its key. The store stamps a record with the second it
received the request: a record counts for a checkpoint from the second of its trigger to the end of its write.
"""

from __future__ import annotations

from dataclasses import dataclass

from correlator.core.correlate.explanation import seconds
from correlator.core.correlate.ranking import Window
from correlator.core.events import Event, ObjectStoreRequest, iso_ms

STAMP_MS = 1_000
"""An access log record's time is cut to the second."""
THROTTLE_STATUS = (429, 503)
THROTTLE_CODES = frozenset({"SlowDown", "Throttling", "ThrottlingException", "RequestLimitExceeded",
                            "TooManyRequests"})


@dataclass(frozen=True, slots=True)
class Throttled:
    """The store's throttles of the job's requests while the checkpoint ran."""

    bucket: str
    prefix: str
    """The job's checkpoint directory in the bucket (the keys' common part up to the job id)."""
    requests: tuple[ObjectStoreRequest, ...]


def is_throttle(e: ObjectStoreRequest) -> bool:
    return e.status in THROTTLE_STATUS or (e.error_code is not None and e.error_code in THROTTLE_CODES)


def job_prefix(key: str | None, job_id: str | None) -> str | None:
    """The job's checkpoint directory a key lies in (``flink/checkpoints/<job id>``), or None when it names no job
    (or another job)."""
    if key is None or job_id is None:
        return None
    at = key.find(job_id)
    return key[:at + len(job_id)] if at >= 0 else None


def on_object_store(evidence: tuple[Event, ...], job_id: str | None) -> bool:
    """The store's log names the job's checkpoint directory: its checkpoints go to an object store, not HDFS."""
    return any(isinstance(e, ObjectStoreRequest) and job_prefix(e.key, job_id) is not None for e in evidence)


def store_requests(evidence: tuple[Event, ...], window: Window, job_id: str | None,
                   skew_ms: int) -> list[ObjectStoreRequest]:
    """The store's records of the job's requests while the checkpoint ran."""
    return [e for e in evidence if isinstance(e, ObjectStoreRequest) and job_prefix(e.key, job_id) is not None
            and window.start_ms - STAMP_MS - skew_ms <= e.ts_ms <= window.end_ms + skew_ms]


def throttled_requests(evidence: tuple[Event, ...], window: Window, job_id: str | None,
                       skew_ms: int) -> Throttled | None:
    found = sorted((e for e in store_requests(evidence, window, job_id, skew_ms) if is_throttle(e)),
                   key=lambda e: (e.ts_ms, e.ref))
    if not found:
        return None
    first = found[0]
    return Throttled(first.bucket, job_prefix(first.key, job_id) or "", tuple(found))


def store_sentence(t: Throttled) -> str:
    ops = sorted({e.operation for e in t.requests})
    codes = sorted({f"{e.status} {e.error_code}" if e.error_code else str(e.status) for e in t.requests})
    n = len(t.requests)
    slowest = max((e.total_ms or 0) for e in t.requests)
    return (f"The object store's access log shows {n} request{'s' if n > 1 else ''} of the job under "
            f"s3://{t.bucket}/{t.prefix}/ answered {' and '.join(codes)} ({', '.join(ops)}) between "
            f"{iso_ms(t.requests[0].ts_ms)} and {iso_ms(t.requests[-1].ts_ms)}, while the checkpoint ran"
            + (f" (the slowest took {seconds(slowest)})" if slowest >= 1000 else "")
            + ". S3A does not log its retries of a throttled request at INFO (only at DEBUG): the retries and their "
              "back-off took the checkpoint's time, and the Flink logs show only the expiry.")
