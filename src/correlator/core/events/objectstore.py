"""Object stores: where checkpoints go, and the store's own request log."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from correlator.core.events.base import Event


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckpointStorage(Event):
    """Where the cluster's checkpoints go, as the JobManager logged its configuration at start
    (``state.checkpoints.dir``; ``execution.checkpointing.dir`` since Flink 2.0): an ``hdfs://`` or object-store URI."""

    type: ClassVar[str] = "checkpoint_storage"
    uri: str


STORE_THROTTLE_CODES = frozenset({"SlowDown", "Throttling", "ThrottlingException", "RequestLimitExceeded",
                                  "TooManyRequests"})
"""Error codes with which an object store asks the client to slow down (S3's is ``SlowDown``, with 503)."""
STORE_CREDENTIAL_CODES = frozenset({"ExpiredToken", "TokenRefreshRequired", "InvalidToken", "InvalidAccessKeyId",
                                    "SignatureDoesNotMatch", "AccessDenied"})
"""Error codes with which an object store refuses a request's credentials: an expired session token, an unknown key,
a bad signature, or a principal without the permission."""
SLOW_STORE_REQUEST_MS = 1_000
"""A request the store took this long over is slow for a checkpoint's file (a few small requests each): kept at
ingest, evidence when it overlaps a failed checkpoint."""
HELD_STORE_REQUEST_MS = 250
"""A write the store took this long over held its client's pooled connection long enough to count: kept at ingest
(faster ones are left out, so a store answering in tens of milliseconds adds no events), read for how many of the
checkpoint's uploads were in flight at once (a client out of connections sends them one after another)."""
STORE_WRITES = ("REST.PUT.", "REST.POST.UPLOAD")
"""The operations that upload a checkpoint's data: an object's PUT, a part's, a multipart upload's start and end."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ObjectStoreRequest(Event):
    """One request as the object store logged it (an S3 server access log record): kept when the store refused it
    with a server error or a throttle, took long over it, or held a write long enough to count its connection. ``ts_ms`` is when the store received it (the record's
    time, to the second); the host is the store's log source, the bucket and key say what was written."""

    type: ClassVar[str] = "object_store_request"
    bucket: str
    key: str | None
    operation: str
    """The store's operation name (``REST.PUT.OBJECT``, ``REST.PUT.PART``, ``REST.POST.UPLOAD``…)."""
    status: int | None
    error_code: str | None = None
    """``SlowDown``, ``InternalError``…; ``None`` where the record says ``-``."""
    total_ms: int | None = None
    """The request's total time in the store (first byte received to last byte sent)."""
    request_id: str | None = None
