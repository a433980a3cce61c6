"""The JobManager's REST API, read for checkpoint statistics: each checkpoint in a final state once, as a span.

Only GETs, with a timeout; a JobManager that does not answer is said in one line, never retried silently. Which
checkpoints were reported is kept in memory (a restarted poller reports the history again: the worker's
deduplication of case events makes that harmless).
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import urlsplit

from correlator.core.events import CheckpointSpan, Event, FlinkSetting
from correlator.core.ingest.checkpoint_stats import FINAL, children_of, placements_of, span_of

KEPT_PER_JOB = 1000
TIMEOUT_KEY = "execution.checkpointing.timeout"


class FlinkRestError(RuntimeError):
    """The JobManager did not answer, or not with JSON."""


class FlinkRest:
    def __init__(self, base_url: str, timeout_s: float = 5.0) -> None:
        self.base = base_url.rstrip("/")
        self.timeout_s = timeout_s
        self.host = urlsplit(self.base).hostname or "jobmanager"

    def get(self, path: str) -> Any:
        try:
            with urllib.request.urlopen(self.base + path, timeout=self.timeout_s) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as exc:
            raise FlinkRestError(f"{self.base}{path}: HTTP {exc.code}") from None
        except (OSError, ValueError) as exc:
            raise FlinkRestError(f"{self.base}{path}: {getattr(exc, 'reason', None) or exc}") from None


class CheckpointPoller:
    def __init__(self, rest: FlinkRest, cluster: str) -> None:
        self.rest = rest
        self.cluster = cluster
        self.reported: dict[str, set[int]] = {}
        self.placed: set[tuple[str, int, int, str]] = set()
        """Placements already handed out (vertex, subtask, start, TaskManager): each once."""
        self.unplaced: set[str] = set()
        """Vertex paths the JobManager did not answer."""
        self.configured: set[str] = set()
        """Jobs whose checkpoint timeout was delivered."""
        self.notes: list[str] = []
        """What could not be read and was left out, for the command to say."""

    def poll(self) -> list[CheckpointSpan]:
        """Spans of the checkpoints in a final state not yet confirmed (:meth:`confirm`), oldest first."""
        return self.poll_with_subtasks()[0]

    def poll_with_subtasks(self) -> tuple[list[CheckpointSpan], list[Event]]:
        """The spans of :meth:`poll`, and beside them each checkpoint's task and subtask spans and where each
        subtask runs (``/jobs/<id>/vertices/<vertex>``, each placement once): what Flink 2.3's children spans and
        ``Deploying`` lines say, for versions whose logs do not."""
        out: list[CheckpointSpan] = []
        detail: list[Event] = []
        for job in self.rest.get("/jobs").get("jobs", []):
            job_id = str(job.get("id"))
            history = self.rest.get(f"/jobs/{job_id}/checkpoints").get("history") or []
            done = self.reported.setdefault(job_id, set())
            fresh = sorted(int(c["id"]) for c in history if c.get("status") in FINAL and int(c["id"]) not in done)
            if not fresh:
                continue
            names = {str(v.get("id")): str(v.get("name")) for v in self.rest.get(f"/jobs/{job_id}").get("vertices", [])}
            detail += self._placements(job_id, names)
            for chk in fresh:
                path = f"/jobs/{job_id}/checkpoints/details/{chk}"
                details = self.rest.get(path)
                subtasks = {vertex: self.rest.get(f"{path}/subtasks/{vertex}") for vertex in details.get("tasks") or {}}
                span = span_of(job_id, names, details, subtasks, cluster=self.cluster, host=self.rest.host,
                               ref=self.rest.base + path)
                if span is not None:
                    out.append(span)
                    detail += children_of(job_id, details, subtasks, cluster=self.cluster, host=self.rest.host,
                                          ref=self.rest.base + path)
        return out, detail

    def _placements(self, job_id: str, names: dict[str, str]) -> list[Event]:
        """Where the job's subtasks run; a vertex the JobManager does not answer for is said once and left out (the
        spans still name the subtask, without its TaskManager)."""
        out: list[Event] = []
        for vertex in names:
            path = f"/jobs/{job_id}/vertices/{vertex}"
            if path in self.unplaced:
                continue
            try:
                answer = self.rest.get(path)
            except FlinkRestError as exc:
                self.notes.append(f"no placement of the subtasks of {names[vertex]!r}: {exc}; not asked again")
                self.unplaced.add(path)
                continue
            for placed in placements_of(answer, cluster=self.cluster, host=self.rest.host, ref=self.rest.base + path):
                key = (placed.job_vertex_id, placed.subtask, placed.ts_ms, placed.taskmanager_id)
                if key not in self.placed:
                    self.placed.add(key)
                    out.append(placed)
        return out

    def job_settings(self) -> list[FlinkSetting]:
        """Each running job's own checkpoint timeout (``/jobs/<id>/checkpoints/config``: a timeout set in the job's
        code too, which no log shows), once per job once confirmed; timed at the job's start, since when it holds."""
        out = []
        for job in self.rest.get("/jobs").get("jobs", []):
            job_id = str(job.get("id"))
            if job_id in self.configured or job.get("status") not in (None, "RUNNING"):
                continue
            try:
                config = self.rest.get(f"/jobs/{job_id}/checkpoints/config")
            except FlinkRestError as exc:  # a job that just ended, a JobManager without the endpoint: said, not fatal
                self.notes.append(f"no checkpoint configuration of job {job_id}: {exc}; not asked again")
                self.configured.add(job_id)
                continue
            if not isinstance(config.get("timeout"), int) or config["timeout"] <= 0:
                continue
            started = self.rest.get(f"/jobs/{job_id}").get("start-time")
            out.append(FlinkSetting(ts_ms=int(started or 0), cluster=self.cluster, host=self.rest.host,
                                    role="jobmanager", ref=f"{self.rest.base}/jobs/{job_id}/checkpoints/config",
                                    key=TIMEOUT_KEY, value_ms=int(config["timeout"]), job_id=job_id))
        return out

    def confirm_settings(self, settings: list[FlinkSetting]) -> None:
        self.configured.update(s.job_id for s in settings if s.job_id)

    def confirm(self, spans: list[CheckpointSpan]) -> None:
        """Mark spans as delivered: a poll reports a checkpoint until it was confirmed (a failed publish is retried)."""
        for span in spans:
            done = self.reported.setdefault(span.job_id, set())
            done.add(span.checkpoint_id)
            for old in sorted(done)[:-KEPT_PER_JOB]:
                done.discard(old)
