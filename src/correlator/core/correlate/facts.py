"""What a cluster's daemons said about themselves at start: each source's version and the JobManager's settings.

Both are kept with the time they were logged, and a decision sees only those logged by its deadline, so a replay
decides as the live run did. A daemon that starts again with other values replaces what its last start said.
"""

from __future__ import annotations

from typing import Any

from correlator.core.events import CheckpointStorage, DaemonStart, Event, FlinkSetting

Source = tuple[str, str, str]
"""(cluster, host, role)"""


class Facts:
    def __init__(self) -> None:
        self._versions: dict[Source, tuple[str, int]] = {}
        self._settings: dict[tuple[str, str], tuple[int, int]] = {}
        """(cluster, key) → (value in ms, when it was logged)"""
        self._storage: dict[str, tuple[str, int]] = {}
        """cluster → (the checkpoint directory its JobManager logged, when)"""

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

    def snapshot(self) -> dict[str, Any]:
        return {"versions": [[c, h, r, v, ts] for (c, h, r), (v, ts) in sorted(self._versions.items())],
                "settings": [[c, k, v, ts] for (c, k), (v, ts) in sorted(self._settings.items())],
                "storage": [[c, uri, ts] for c, (uri, ts) in sorted(self._storage.items())]}

    @classmethod
    def restore(cls, data: dict[str, Any]) -> Facts:
        facts = cls()
        facts._versions = {(c, h, r): (v, ts) for c, h, r, v, ts in data.get("versions", ())}
        facts._settings = {(c, k): (v, ts) for c, k, v, ts in data.get("settings", ())}
        facts._storage = {c: (uri, ts) for c, uri, ts in data.get("storage", ())}
        return facts
