"""What a cluster's daemons said about themselves at start: each source's version, the JobManager's settings, and
where each subtask was deployed (which TaskManager, which log is that TaskManager's).

Both are kept with the time they were logged, and a decision sees only those logged by its deadline, so a replay
decides as the live run did. A daemon that starts again with other values replaces what its last start said.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from correlator.core.events import CheckpointStorage, DaemonStart, Event, FlinkSetting, TaskDeployed, TaskManagerStarted

Source = tuple[str, str, str]
"""(cluster, host, role)"""
DEPLOYMENTS_KEPT = 64
"""Deployments kept per subtask: the one a failed checkpoint ran on, and the restarts after it until it is decided.
A job that fails every checkpoint may restart every few seconds (each refused checkpoint failing it again), so the
lookahead of a few minutes can see dozens of deployments of one subtask; fewer kept would lose where the first
failures ran."""


@dataclass(frozen=True, slots=True)
class Placement:
    """Where one subtask ran: its task's name, the task's parallelism, the TaskManager (resource id) and the host
    whose own log named that TaskManager, when one was read."""

    task: str
    parallelism: int
    taskmanager_id: str
    taskmanager_host: str | None


class Facts:
    def __init__(self) -> None:
        self._versions: dict[Source, tuple[str, int]] = {}
        self._settings: dict[tuple[str, str], tuple[int, int]] = {}
        """(cluster, key) → (value in ms, when it was logged)"""
        self._storage: dict[str, tuple[str, int]] = {}
        """cluster → (the checkpoint directory its JobManager logged, when)"""
        self._placed: dict[tuple[str, str, int], list[tuple[str, int, str, int]]] = {}
        """(cluster, job vertex, subtask) → (task, parallelism, TaskManager id, when) of its last deployments, oldest
        first: a restart after a failure deploys again, maybe elsewhere, and the failure ran where it was before"""
        self._tm_hosts: dict[tuple[str, str], tuple[str, int]] = {}
        """(cluster, TaskManager resource id) → (the host whose own log named it, when)"""

    def learn(self, event: Event) -> bool:
        """Keeps what ``event`` says about its source; whether it was such an event."""
        if isinstance(event, DaemonStart):
            source = (event.cluster, event.host, event.role)
            if event.version and (source not in self._versions or self._versions[source][1] <= event.ts_ms):
                self._versions[source] = (event.version, event.ts_ms)
            return True
        if isinstance(event, CheckpointStorage):
            if event.cluster not in self._storage or self._storage[event.cluster][1] <= event.ts_ms:
                self._storage[event.cluster] = (event.uri, event.ts_ms)
            return True
        if isinstance(event, TaskDeployed):
            placed = self._placed.setdefault((event.cluster, event.job_vertex_id, event.subtask), [])
            placed.append((event.task, event.parallelism, event.taskmanager_id, event.ts_ms))
            placed.sort(key=lambda p: p[3])
            del placed[:-DEPLOYMENTS_KEPT]
            return True
        if isinstance(event, TaskManagerStarted):
            self._tm_hosts[(event.cluster, event.resource_id)] = (event.host, event.ts_ms)
            return True
        if isinstance(event, FlinkSetting):
            if event.job_id is not None:  # one job's own setting is not the cluster's
                return True
            key = (event.cluster, event.key)
            if key not in self._settings or self._settings[key][1] <= event.ts_ms:
                self._settings[key] = (event.value_ms, event.ts_ms)
            return True
        return False

    def versions(self, cluster: str, deadline_ms: int) -> dict[tuple[str, str], str]:
        """(host, role) → the version its start line gave, logged by ``deadline_ms``."""
        return {(h, r): v for (c, h, r), (v, ts) in self._versions.items() if c == cluster and ts <= deadline_ms}

    def settings(self, cluster: str, deadline_ms: int) -> dict[str, int]:
        """Setting key → its value in ms as the cluster's JobManager logged it by ``deadline_ms``."""
        return {k: v for (c, k), (v, ts) in self._settings.items() if c == cluster and ts <= deadline_ms}

    def storage(self, cluster: str, deadline_ms: int) -> str | None:
        """The checkpoint directory the cluster's JobManager logged by ``deadline_ms``."""
        said = self._storage.get(cluster)
        return said[0] if said is not None and said[1] <= deadline_ms else None

    def placements(self, cluster: str, deadline_ms: int) -> dict[tuple[str, int], Placement]:
        """(job vertex, subtask) → where it ran, as deployed by ``deadline_ms``: its task, parallelism, TaskManager
        and the host whose log is that TaskManager's (None when no such log was read)."""
        out: dict[tuple[str, int], Placement] = {}
        for (c, v, i), placed in self._placed.items():
            known = [p for p in placed if p[3] <= deadline_ms] if c == cluster else []
            if known:
                task, n, tm, _ = known[-1]
                out[(v, i)] = Placement(task, n, tm, self._tm_host(cluster, tm, deadline_ms))
        return out

    def _tm_host(self, cluster: str, resource_id: str, deadline_ms: int) -> str | None:
        said = self._tm_hosts.get((cluster, resource_id))
        return said[0] if said is not None and said[1] <= deadline_ms else None

    def snapshot(self) -> dict[str, Any]:
        return {"versions": [[c, h, r, v, ts] for (c, h, r), (v, ts) in sorted(self._versions.items())],
                "settings": [[c, k, v, ts] for (c, k), (v, ts) in sorted(self._settings.items())],
                "storage": [[c, uri, ts] for c, (uri, ts) in sorted(self._storage.items())],
                "placed": [[c, v, i, [list(p) for p in placed]] for (c, v, i), placed in sorted(self._placed.items())],
                "tm_hosts": [[c, tm, h, ts] for (c, tm), (h, ts) in sorted(self._tm_hosts.items())]}

    @classmethod
    def restore(cls, data: dict[str, Any]) -> Facts:
        facts = cls()
        facts._versions = {(c, h, r): (v, ts) for c, h, r, v, ts in data.get("versions", ())}
        facts._settings = {(c, k): (v, ts) for c, k, v, ts in data.get("settings", ())}
        facts._storage = {c: (uri, ts) for c, uri, ts in data.get("storage", ())}
        facts._placed = {(c, v, i): [(str(t), int(n), str(tm), int(ts)) for t, n, tm, ts in placed]
                         for c, v, i, placed in data.get("placed", ())}
        facts._tm_hosts = {(c, tm): (h, ts) for c, tm, h, ts in data.get("tm_hosts", ())}
        return facts
