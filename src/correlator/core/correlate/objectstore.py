"""A checkpoint on an object store: the store's own request log (S3 server access logs) read against the case.

Flink names a checkpoint's objects ``<checkpoint dir>/<job id>/chk-<n>/…`` (``shared/`` and ``taskowned/`` beside
them), so a record of the store names the job it served by its key. The store stamps a record with the second it
received the request: a record counts for a checkpoint from the second of its trigger to the end of its write.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass

from correlator.core.correlate.explanation import seconds
from correlator.core.correlate.ranking import Window
from correlator.core.events import (
    HELD_STORE_REQUEST_MS,
    SLOW_STORE_REQUEST_MS,
    STORE_CREDENTIAL_CODES,
    STORE_THROTTLE_CODES,
    STORE_WRITES,
    CheckpointDeclined,
    CheckpointFailed,
    Event,
    ObjectStoreRequest,
    iso_ms,
)

STAMP_MS = 1_000
"""An access log record's time is cut to the second."""
THROTTLE_STATUS = (429, 503)


@dataclass(frozen=True, slots=True)
class Throttled:
    """The store's throttles of the job's requests while the checkpoint ran: its own records, and the throttle the
    client's cause chain states when it gave up on a request (flink-s3-fs-native does, after its few retries)."""

    bucket: str
    prefix: str
    """The job's checkpoint directory in the bucket (the keys' common part up to the job id)."""
    requests: tuple[ObjectStoreRequest, ...]
    client: tuple[CheckpointFailed | CheckpointDeclined, ...] = ()


def is_throttle(e: ObjectStoreRequest) -> bool:
    return e.status in THROTTLE_STATUS or (e.error_code is not None and e.error_code in STORE_THROTTLE_CODES)


def job_prefix(key: str | None, job_id: str | None) -> str | None:
    """The job's checkpoint directory a key lies in (``flink/checkpoints/<job id>``), or None when it names no job
    (or another job)."""
    if key is None or job_id is None:
        return None
    at = key.find(job_id)
    return key[:at + len(job_id)] if at >= 0 else None


def store_logged(evidence: tuple[Event, ...], job_id: str | None) -> bool:
    """The store's log names the job's checkpoint directory."""
    return any(isinstance(e, ObjectStoreRequest) and job_prefix(e.key, job_id) is not None for e in evidence)


def on_object_store(evidence: tuple[Event, ...], job_id: str | None, refs: tuple[Event, ...] = (),
                    checkpoint_dir: str | None = None) -> bool:
    """The store's log names the job's checkpoint directory, the failure names an object-store path or carries a
    store's error, or the JobManager's configuration sends checkpoints to one: they go to an object store, not HDFS."""
    return (store_logged(evidence, job_id) or store_uri(refs) is not None
            or (checkpoint_dir is not None and checkpoint_dir.startswith(STORE_SCHEMES))
            or any(isinstance(e, CheckpointFailed | CheckpointDeclined) and e.store_error is not None for e in refs))


def bucket_of(uri: str | None) -> str | None:
    """The bucket (container) of an object-store URI."""
    return uri.split("://", 1)[1].split("/", 1)[0] or None if uri and "://" in uri else None


def store_requests(evidence: tuple[Event, ...], window: Window, job_id: str | None,
                   skew_ms: int) -> list[ObjectStoreRequest]:
    """The store's records of the job's requests while the checkpoint ran."""
    return [e for e in evidence if isinstance(e, ObjectStoreRequest) and job_prefix(e.key, job_id) is not None
            and window.start_ms - STAMP_MS - skew_ms <= e.ts_ms <= window.end_ms + skew_ms]


def throttled_requests(evidence: tuple[Event, ...], window: Window, job_id: str | None,
                       skew_ms: int, refs: tuple[Event, ...] = ()) -> Throttled | None:
    found = sorted((e for e in store_requests(evidence, window, job_id, skew_ms) if is_throttle(e)),
                   key=lambda e: (e.ts_ms, e.ref))
    client = tuple(e for e in refs if isinstance(e, CheckpointFailed | CheckpointDeclined)
                   and e.store_error is not None and e.store_error in STORE_THROTTLE_CODES)
    if found:
        first = found[0]
        return Throttled(first.bucket, job_prefix(first.key, job_id) or "", tuple(found), client)
    if not client:
        return None
    return Throttled(bucket_of(store_uri(refs)) or "", "", (), client)


@dataclass(frozen=True, slots=True)
class Slow:
    """The store's slow requests of the checkpoint while it ran (none of them throttled)."""

    bucket: str
    prefix: str
    requests: tuple[ObjectStoreRequest, ...]
    checkpoint_id: int | None


def of_checkpoint(key: str | None, job_id: str | None, checkpoint_id: int | None) -> bool:
    """A key of this checkpoint: in its ``chk-<n>`` directory (the directory's own marker too), or in the job's
    ``shared/`` and ``taskowned/`` directories, which every checkpoint writes to."""
    prefix = job_prefix(key, job_id)
    if prefix is None or key is None:
        return False
    rest = key[len(prefix):]
    own = checkpoint_id is not None and rest.startswith(f"/chk-{checkpoint_id}/")
    return own or rest.startswith(("/shared/", "/taskowned/"))


def slow_requests(evidence: tuple[Event, ...], window: Window, job_id: str | None, checkpoint_id: int | None,
                  skew_ms: int) -> Slow | None:
    """The checkpoint's requests the store took ``SLOW_STORE_REQUEST_MS`` or more over, whose time in the store overlaps the
    checkpoint's."""
    found = sorted((e for e in evidence if isinstance(e, ObjectStoreRequest) and not is_throttle(e)
                    and (e.total_ms or 0) >= SLOW_STORE_REQUEST_MS and of_checkpoint(e.key, job_id, checkpoint_id)
                    and e.ts_ms <= window.end_ms + skew_ms
                    and e.ts_ms + (e.total_ms or 0) >= window.start_ms - STAMP_MS - skew_ms),
                   key=lambda e: (e.ts_ms, e.ref))
    if not found:
        return None
    first = found[0]
    return Slow(first.bucket, job_prefix(first.key, job_id) or "", tuple(found), checkpoint_id)


def slow_sentence(s: Slow) -> str:
    n = len(s.requests)
    slowest = max(s.requests, key=lambda e: e.total_ms or 0)
    received = (f"received at {iso_ms(s.requests[0].ts_ms)}" if n == 1 else
                f"received between {iso_ms(s.requests[0].ts_ms)} and {iso_ms(s.requests[-1].ts_ms)}")
    said = (f"The object store's access log shows {n} request{'s' if n > 1 else ''} of this checkpoint under "
            f"s3://{s.bucket}/{s.prefix}/ that took {seconds(SLOW_STORE_REQUEST_MS)} or more in the store, {received}: "
            + (f"{slowest.operation} of {slowest.key} took {seconds(slowest.total_ms or 0)}." if n == 1 else
               f"the slowest, {slowest.operation} of {slowest.key}, took {seconds(slowest.total_ms or 0)}."))
    if s.checkpoint_id is not None and slowest.key is not None and slowest.key.endswith(f"/chk-{s.checkpoint_id}/"):
        said += (" That request is the marker of the checkpoint's own directory, which the JobManager writes before "
                 "it asks the tasks for their state: while it waited no task uploaded anything, so the checkpoint "
                 "looks held up before its upload, but the store is to blame, not backpressure.")
    return said + " Flink's logs show only the expiry: a slow request is no error to S3A."


@dataclass(frozen=True, slots=True)
class Refused:
    """The store's refusals of the job's requests for their credentials while the checkpoint ran: its own records,
    or, where its log is not in the input, the refusal the client's cause chain carries."""

    bucket: str
    prefix: str
    requests: tuple[ObjectStoreRequest, ...]
    client: tuple[CheckpointFailed | CheckpointDeclined, ...] = ()


STORE_SCHEMES = ("s3://", "s3a://", "s3p://", "gs://", "abfs://", "abfss://", "wasb://", "wasbs://", "oss://")
"""Checkpoint URIs of object stores (Flink's S3 filesystems, GCS, Azure, OSS)."""


def store_uri(refs: tuple[Event, ...]) -> str | None:
    """The object-store path a failure of the case names (``s3://bucket/…``), if any."""
    return next((e.path for e in refs if isinstance(e, CheckpointFailed) and e.path
                 and e.path.startswith(STORE_SCHEMES)), None)


def refused_requests(evidence: tuple[Event, ...], window: Window, job_id: str | None,
                     skew_ms: int, refs: tuple[Event, ...] = ()) -> Refused | None:
    found = sorted((e for e in store_requests(evidence, window, job_id, skew_ms)
                    if e.error_code is not None and e.error_code in STORE_CREDENTIAL_CODES),
                   key=lambda e: (e.ts_ms, e.ref))
    if found:
        first = found[0]
        return Refused(first.bucket, job_prefix(first.key, job_id) or "", tuple(found))
    client = tuple(e for e in refs if isinstance(e, CheckpointFailed | CheckpointDeclined)
                   and e.store_error is not None and e.store_error in STORE_CREDENTIAL_CODES)
    if not client:
        return None
    return Refused(bucket_of(store_uri(refs)) or "", "", (), client)


def refused_sentence(r: Refused) -> str:
    if not r.requests:
        codes = sorted({e.store_error for e in r.client if e.store_error})
        return (f"The failure's cause chain carries the object store's refusal of the request's credentials "
                f"(Error Code: {', '.join(codes)}): S3A does not retry it. The store's access log is not in the "
                "input (it is delivered late, often hours after the requests); it would show which requests were "
                "refused.")
    codes = sorted({f"{e.status} {e.error_code}" for e in r.requests})
    n = len(r.requests)
    said = (f"The object store's access log shows {n} request{'s' if n > 1 else ''} of the job under "
            f"s3://{r.bucket}/{r.prefix}/ refused for {'their' if n > 1 else 'its'} credentials "
            f"({' and '.join(codes)}) between {iso_ms(r.requests[0].ts_ms)} and {iso_ms(r.requests[-1].ts_ms)}, "
            "while the checkpoint ran.")
    if any(e.error_code == "ExpiredToken" for e in r.requests):
        said += (" The client's session token had expired: S3A does not retry such a refusal, and nothing renewed "
                 "the token.")
    return said


def store_sentence(t: Throttled) -> str:
    if not t.requests:
        return ("The failure's cause chain carries the object store's throttle (503 SlowDown, \"Please reduce your "
                "request rate.\"): the S3 client gave up on the request after its retries. The store's access log is "
                "not in the input (it is delivered late, often hours after the requests); it would show how many "
                "requests were throttled and under which prefix.")
    ops = sorted({e.operation for e in t.requests})
    codes = sorted({f"{e.status} {e.error_code}" if e.error_code else str(e.status) for e in t.requests})
    n = len(t.requests)
    slowest = max((e.total_ms or 0) for e in t.requests)
    return (f"The object store's access log shows {n} request{'s' if n > 1 else ''} of the job under "
            f"s3://{t.bucket}/{t.prefix}/ answered {' and '.join(codes)} ({', '.join(ops)}) between "
            f"{iso_ms(t.requests[0].ts_ms)} and {iso_ms(t.requests[-1].ts_ms)}, while the checkpoint ran"
            + (f" (the slowest took {seconds(slowest)})" if slowest >= 1000 else "")
            + (". The failure's cause chain carries the throttle too: the S3 client gave up on the request after its "
               "retries." if t.client else
               ". S3A does not log its retries of a throttled request at INFO (only at DEBUG): the retries and their "
               "back-off took the checkpoint's time, and the Flink logs show only the expiry.") + hot_prefix_sentence(t))


HOT_PREFIX_MIN = 3
"""Throttled keys under one first segment: fewer say little about where the store's limit bit."""


def hot_prefix_sentence(t: Throttled) -> str:
    """Said when every throttled key starts with the same segment: S3 scales its request rate per key prefix, and a
    checkpoint directory without entropy puts every subtask's files under one."""
    firsts = {e.key.split("/", 1)[0] for e in t.requests if e.key}
    keys = {e.key for e in t.requests if e.key}
    if len(firsts) != 1 or len(keys) < HOT_PREFIX_MIN:
        return ""
    return (f" All {len(keys)} throttled keys start with the one prefix {next(iter(firsts))}/: S3 serves a rate of "
            "requests per key prefix, and a checkpoint directory without an entropy marker near its start sends "
            "every subtask's files to the same one.")


QUEUED_MIN_REQUESTS = 3
"""Fewer uploads in the window say nothing about how the client sent them."""
QUEUED_BUSY = 0.6
"""The share of the window the uploads in flight kept every connection the client used busy: a client that sends
its uploads one after another with no pause between them is waiting for a connection, not for work."""


@dataclass(frozen=True, slots=True)
class Queued:
    """The checkpoint's uploads, each answered in good time, went to the store no more than ``in_flight`` at once
    back to back through the window, while a TaskManager had ``uploaders`` subtasks of one task to upload: the
    client's connections, not the store, set the pace."""

    bucket: str
    prefix: str
    requests: tuple[ObjectStoreRequest, ...]
    in_flight: int
    uploaders: int
    busy: float
    """The share of the window the ``in_flight`` connections spent in the store on these uploads."""


def most_in_flight(requests: Sequence[ObjectStoreRequest]) -> int:
    """The most requests in the store at once if each was received at its stamp (an upper bound: the stamp is cut to
    the second). An end and a start at one instant do not overlap."""
    edges = sorted(p for e in requests for p in ((e.ts_ms, 1), (e.ts_ms + (e.total_ms or 0), -1)))
    most = now = 0
    for _, step in edges:
        now += step
        most = max(most, now)
    return most


def fewest_connections(requests: Sequence[ObjectStoreRequest]) -> int:
    """The fewest connections that could have carried the requests (a lower bound). The store stamps a request when
    it received it, cut to the second (``STAMP_MS``): one received in the same second as an earlier one may have
    followed it on its connection. Each request, in the log's order, takes the connection free first if it is free
    before the request's second ends, else one more."""
    free: list[int] = []
    for e in sorted(requests, key=lambda e: e.ts_ms):
        start = e.ts_ms
        if free and free[0] < e.ts_ms + STAMP_MS:
            start = max(start, heapq.heappop(free))
        heapq.heappush(free, start + (e.total_ms or 0))
    return len(free)


def queued_requests(evidence: tuple[Event, ...], window: Window, job_id: str | None, checkpoint_id: int | None,
                    skew_ms: int, uploaders: int | None) -> Queued | None:
    """The checkpoint's writes the store held a while (``HELD_STORE_REQUEST_MS``) but not long, none refused, when
    at most ``in_flight`` of them were in the store at once and they kept that many connections busy for most of
    the window, fewer than the subtasks one TaskManager had to upload (``uploaders``; unknown: no finding). Only
    the uploads of files count: a directory marker (``chk-N/``) is S3A's bookkeeping, the JobManager's at the trigger
    and an expired checkpoint's clean-up after it; and only those received by the window's end, which the ones
    after it cannot have delayed. Fewer in flight than uploaders is judged on the most the stamps allow (the
    uploads might have gone in parallel), the connections' busy share on the fewest they allow."""
    found = sorted((e for e in evidence if isinstance(e, ObjectStoreRequest) and e.operation.startswith(STORE_WRITES)
                    and not (e.key or "").endswith("/")
                    and (e.status or 200) < 400 and HELD_STORE_REQUEST_MS <= (e.total_ms or 0)
                    < SLOW_STORE_REQUEST_MS and of_checkpoint(e.key, job_id, checkpoint_id)
                    and window.start_ms - STAMP_MS - skew_ms <= e.ts_ms <= window.end_ms),
                   key=lambda e: (e.ts_ms, e.ref))
    if uploaders is None or len(found) < QUEUED_MIN_REQUESTS:
        return None
    if most_in_flight(found) >= uploaders:
        return None
    in_flight = fewest_connections(found)
    spent = sum(max(0, min(e.ts_ms + (e.total_ms or 0), window.end_ms) - max(e.ts_ms, window.start_ms))
                for e in found)
    busy = spent / (in_flight * window.duration_ms)
    if busy < QUEUED_BUSY:
        return None
    first = found[0]
    return Queued(first.bucket, job_prefix(first.key, job_id) or "", tuple(found), in_flight, uploaders, busy)


def queued_sentence(q: Queued) -> str:
    n = len(q.requests)
    at_once = "one at a time" if q.in_flight == 1 else f"never more than {q.in_flight} at once"
    return (f"The object store's access log shows {n} uploads of this checkpoint under s3://{q.bucket}/{q.prefix}/ "
            f"received {at_once}, back to back, from {iso_ms(q.requests[0].ts_ms)} to {iso_ms(q.requests[-1].ts_ms)}: "
            f"each took under {seconds(SLOW_STORE_REQUEST_MS)} in the store, and together they kept "
            f"{'that connection' if q.in_flight == 1 else 'those connections'} busy {q.busy:.0%} of the checkpoint's "
            f"time, while a TaskManager had {q.uploaders} subtasks of one task to upload. The uploads waited for a "
            "connection of the client's pool, not for the store; S3A logs no such wait.")
