"""The correlate stage's state: one ``ClusterState`` per cluster, cached, backed by a changelog table.

The table holds one snapshot per cluster, written once per batch to the changelog partition of the input it
summarises (not Faust's 'current event'), so a crash or a rebalance resumes where the last batch ended. The cache
is only a cache: after a rebalance or a failed batch it is cleared and reloaded lazily from the table. The batch
(``processor``) and the tick (``punctuator``) both change states: they take ``lock`` around it.
"""

from __future__ import annotations

import asyncio
from typing import Any

from correlator.core.correlate.engine import EngineConfig
from correlator.stream.metrics import WorkerMetrics
from correlator.stream.state import ClusterState


class ClusterStates:
    """The states this worker holds, by cluster, each with the events partition its snapshot is written to."""

    def __init__(self, table: Any, config: EngineConfig, metrics: WorkerMetrics) -> None:
        self.table = table
        self.config = config
        self.metrics = metrics
        self.lock = asyncio.Lock()
        self._states: dict[str, tuple[int, ClusterState]] = {}

    def get(self, cluster: str, partition: int) -> ClusterState:
        """The cached state, or the one loaded from the table (its snapshot then goes to ``partition``)."""
        cached = self._states.get(cluster)
        if cached is None:
            state = ClusterState.load(cluster, self.config, self.table.get(cluster.encode()))
            state.partition = partition
            self._states[cluster] = (partition, state)
            return state
        return cached[1]

    def __getitem__(self, cluster: str) -> ClusterState:
        return self._states[cluster][1]

    def __contains__(self, cluster: object) -> bool:
        return cluster in self._states

    def __len__(self) -> int:
        return len(self._states)

    def items(self) -> list[tuple[str, int, ClusterState]]:
        """A copy: (cluster, snapshot partition, state)."""
        return [(cluster, partition, state) for cluster, (partition, state) in self._states.items()]

    def load_owned(self, owned: set[int]) -> None:
        """Clusters whose snapshot lies on an owned partition but that no event has touched since this worker
        (re)started still have cases to decide: load them too."""
        for key in list(self.table.keys()):
            cluster = key.decode("utf-8", "replace")
            if cluster not in self._states:
                state = ClusterState.load(cluster, self.config, self.table.get(key))
                if state.partition in owned:
                    self._states[cluster] = (state.partition, state)

    def persist(self, cluster: str) -> None:
        """Write the cluster's snapshot to the changelog partition of the input it summarises."""
        partition, state = self._states[cluster]
        with self.metrics.snapshot_seconds.labels("engine").time():
            blob = state.dump()
        key = cluster.encode()
        self.table.send_changelog(partition, key, blob)
        self.table.data[key] = blob
        self.metrics.state_bytes.labels(self.table.name, key.decode(errors="replace")).set(len(blob))

    def clear(self) -> None:
        """Forget the cache: the table is the truth (after a rebalance, or to retry a failed batch)."""
        self._states.clear()
