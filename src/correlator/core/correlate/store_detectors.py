"""The object-store causes' detectors: the store's own access log states what held the checkpoint's requests
(``objectstore.py`` reads it); the S3 client's retries are silent at INFO, so the store's log is the evidence."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import ClassVar

from correlator.core.correlate.explanation import WriteLink, seconds
from correlator.core.correlate.items import item
from correlator.core.correlate.objectstore import (
    Queued,
    Refused,
    Slow,
    Throttled,
    queued_requests,
    queued_sentence,
    refused_requests,
    refused_sentence,
    slow_requests,
    slow_sentence,
    store_sentence,
    throttled_requests,
)
from correlator.core.correlate.ranking import Candidate
from correlator.core.correlate.scene import Outcome, Reading, Scene
from correlator.core.events import ObjectStoreRequest
from correlator.core.explain.causes import Code
from correlator.core.explain.verdict import EvidenceItem

THROTTLED_SCORE = 0.9
"""The store's own log states that it throttled the job's checkpoint requests while the checkpoint ran."""
REFUSED_STORE_SCORE = 0.95
"""The store's own log states that it refused the job's requests for their credentials: above a failure inside
Flink, whose cause chain is that refusal."""
SLOW_STORE_SCORE = 0.85
"""The store's own log shows the checkpoint's requests taking long while it ran (below a throttle, which says why)."""
QUEUED_SCORE = 0.75
"""Read from the pace of the uploads, not stated by any line: below what the store's log states outright."""


def _took(e: ObjectStoreRequest) -> EvidenceItem:
    """A request as evidence of time the store spent: its span is its time in the store."""
    return item(e, f"the store took {seconds(e.total_ms or 0)} over {e.operation} of {e.key or 'the bucket'}",
                (e.ts_ms, e.ts_ms + (e.total_ms or 0)))


class ObjectStoreThrottledDetector:
    """The object store's access log shows it throttling requests under the job's checkpoint prefix while the
    checkpoint ran (``objectstore.py``); the client's retries are silent at INFO, so the store's log is the evidence."""

    code: ClassVar[Code] = Code.OBJECT_STORE_THROTTLED
    write_link: ClassVar[WriteLink] = "never"
    beside_user_code: ClassVar[bool] = False

    def find(self, scene: Scene, found: Mapping[Code, object]) -> Throttled | None:
        ctx = scene.ctx
        return throttled_requests(ctx.evidence, scene.window, ctx.job_id, ctx.skew_ms, ctx.summary.refs)

    def candidate(self, finding: Throttled, scene: Scene, so_far: Sequence[Candidate]) -> Candidate | None:
        return None if scene.stalled else Candidate(self.code, THROTTLED_SCORE, (finding.bucket,), ())

    def reading(self, finding: Throttled, scene: Scene, outcome: Outcome) -> Reading:
        if outcome.code != self.code:
            return Reading()
        shown = (*finding.requests[:3], *finding.requests[3:][-1:])
        return Reading(opening=(store_sentence(finding),),
                       evidence=tuple(item(e, f"the store answered {e.operation} of {e.key or 'the bucket'} with "
                                              f"{e.status} {e.error_code or ''}".rstrip()) for e in shown))


class ObjectStoreSlowDetector:
    """The object store's access log shows it taking long over the checkpoint's requests while the checkpoint ran,
    without throttling them (``objectstore.py``); a slow request is no error to the client, which logs nothing."""

    code: ClassVar[Code] = Code.OBJECT_STORE_SLOW
    write_link: ClassVar[WriteLink] = "never"
    beside_user_code: ClassVar[bool] = False

    def find(self, scene: Scene, found: Mapping[Code, object]) -> Slow | None:
        ctx = scene.ctx
        if Code.OBJECT_STORE_THROTTLED in found:
            return None
        return slow_requests(ctx.evidence, scene.window, ctx.job_id, ctx.checkpoint_id, ctx.skew_ms)

    def candidate(self, finding: Slow, scene: Scene, so_far: Sequence[Candidate]) -> Candidate | None:
        return None if scene.stalled else Candidate(self.code, SLOW_STORE_SCORE, (finding.bucket,), ())

    def reading(self, finding: Slow, scene: Scene, outcome: Outcome) -> Reading:
        if outcome.code != self.code:
            return Reading()
        shown = sorted(finding.requests, key=lambda e: -(e.total_ms or 0))[:3]
        return Reading(opening=(slow_sentence(finding),),
                       evidence=tuple(_took(e) for e in shown))


class ObjectStoreCredentialsDetector:
    """The object store's access log shows it refusing the job's requests for their credentials while the checkpoint
    ran (``objectstore.py``): the store states the cause."""

    code: ClassVar[Code] = Code.OBJECT_STORE_CREDENTIALS
    write_link: ClassVar[WriteLink] = "never"
    beside_user_code: ClassVar[bool] = True

    def find(self, scene: Scene, found: Mapping[Code, object]) -> Refused | None:
        ctx = scene.ctx
        return refused_requests(ctx.evidence, scene.window, ctx.job_id, ctx.skew_ms, ctx.summary.refs)

    def candidate(self, finding: Refused, scene: Scene, so_far: Sequence[Candidate]) -> Candidate | None:
        return Candidate(self.code, REFUSED_STORE_SCORE, (finding.bucket,) if finding.bucket else (), ())

    def reading(self, finding: Refused, scene: Scene, outcome: Outcome) -> Reading:
        if outcome.code != self.code:
            return Reading()
        shown = (*finding.requests[:2], *finding.requests[2:][-1:])
        return Reading(opening=(refused_sentence(finding),),
                       evidence=tuple(item(e, f"the store refused {e.operation} of {e.key or 'the bucket'} with "
                                              f"{e.status} {e.error_code}") for e in shown))


def uploaders(scene: Scene) -> int | None:
    """The most subtasks of one task a TaskManager ran (each uploads its own state at a checkpoint), as the JobManager
    deployed them; ``None`` when no deployment was read."""
    per = Counter((vertex, p.taskmanager_id) for (vertex, _), p in scene.ctx.placements.items())
    return max(per.values(), default=None)


class ObjectStoreConnectionLimitDetector:
    """The store answered each of the checkpoint's uploads in good time but received them a few at a time, back to
    back, while more subtasks had state to upload (``objectstore.py``): they queued for the client's connections."""

    code: ClassVar[Code] = Code.OBJECT_STORE_CONNECTION_LIMIT
    write_link: ClassVar[WriteLink] = "never"
    beside_user_code: ClassVar[bool] = False

    def find(self, scene: Scene, found: Mapping[Code, object]) -> Queued | None:
        ctx = scene.ctx
        if found.keys() & {Code.OBJECT_STORE_THROTTLED, Code.OBJECT_STORE_SLOW, Code.OBJECT_STORE_CREDENTIALS}:
            return None
        return queued_requests(ctx.evidence, scene.window, ctx.job_id, ctx.checkpoint_id, ctx.skew_ms,
                               uploaders(scene))

    def candidate(self, finding: Queued, scene: Scene, so_far: Sequence[Candidate]) -> Candidate | None:
        return None if scene.stalled else Candidate(self.code, QUEUED_SCORE, (finding.bucket,), ())

    def reading(self, finding: Queued, scene: Scene, outcome: Outcome) -> Reading:
        if outcome.code != self.code:
            return Reading()
        shown = (*finding.requests[:2], *finding.requests[2:][-1:])
        return Reading(opening=(queued_sentence(finding),),
                       evidence=tuple(_took(e) for e in shown))
