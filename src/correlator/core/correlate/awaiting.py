"""Decided cases waiting for a DataNode log they lacked: the source that falls silent in an incident is the one
that decides, and its lines may come long after the verdict (a paused host, a shipper behind, a rotation copied
later). A case whose verdict listed a DataNode of its write as missing waits for that DataNode — by host, or by the
transfer address its lines will tell — and is judged again when any line of it arrives, however late. The wait is
bounded: the engine keeps such a case and the evidence it read no longer than its hold limit behind the cluster's
newest event.
"""

from __future__ import annotations

from collections.abc import Iterable

from correlator.core.correlate.cases import CaseKey
from correlator.core.explain.verdict import Verdict


class Awaiting:
    """(cluster, DataNode host or address) → the decided cases whose verdict lacked its log."""

    def __init__(self) -> None:
        self._by_node: dict[tuple[str, str], set[CaseKey]] = {}

    def __bool__(self) -> bool:
        return bool(self._by_node)

    def register(self, key: CaseKey, verdict: Verdict) -> None:
        for m in verdict.missing:
            if m.role == "datanode" and m.host != "*":
                self._by_node.setdefault((key[0], m.host), set()).add(key)

    def arrived(self, cluster: str, node: str) -> set[CaseKey]:
        """The cases waiting for ``node``'s lines, no longer waiting (each is judged again once)."""
        return self._by_node.pop((cluster, node.lstrip("/")), set())

    def waiting(self) -> set[CaseKey]:
        return {k for keys in self._by_node.values() for k in keys}

    def keep_only(self, keys: Iterable[CaseKey]) -> None:
        kept = set(keys)
        self._by_node = {n: ks & kept for n, ks in self._by_node.items() if ks & kept}
