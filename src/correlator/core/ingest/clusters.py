"""Telling clusters apart in one pile of logs, by what the logs prove: the HDFS they write to.

A folder handed to ``analyze`` may hold two clusters' logs, and evidence from one must never explain the other's
failure. Each file names its HDFS in its first lines: a DataNode registers with ``service to <host>/<ip>:<port>``
and every line about a block names its block pool (``BP-<n>-<ip>-<ms>``); a NameNode says ``fs.defaultFS is
hdfs://…``; a Flink process prints its ``state.checkpoints.dir`` (``hdfs://…``) and a TaskManager's HDFS client
names the block pool of every block it writes. Files sharing any of these are one cluster (union-find).

A split is made only when it is certain: every group holds both Flink and HDFS logs. A NameNode written as
``localhost:8020`` by Flink and as ``10.0.0.1:8020`` by a DataNode would otherwise split one cluster in two and
part a checkpoint from its storage's evidence; then nothing is split and the caller says what it saw instead.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

_BLOCK_POOL = re.compile(r"\bBP-\d+-[\d.]+-\d+")
_HDFS_URI = re.compile(r"hdfs://([A-Za-z0-9._-]+)(?::(\d+))?")
_SERVICE_TO = re.compile(r"service to (?:([A-Za-z0-9._-]*)/)?([A-Za-z0-9._-]+):(\d+)")


def identity(head: str) -> frozenset[str]:
    """The HDFS identities a file's head names: ``bp:<block pool>``, ``nn:<host>:<port>``, ``ns:<nameservice>``."""
    found = {f"bp:{m}" for m in _BLOCK_POOL.findall(head)}
    for host, port in _HDFS_URI.findall(head):
        found.add(f"nn:{host}:{port}" if port else f"ns:{host}")
    for name, address, port in _SERVICE_TO.findall(head):
        found.add(f"nn:{address}:{port}")
        if name and name != "localhost":
            found.add(f"nn:{name}:{port}")
    return frozenset(found)


@dataclass(frozen=True, slots=True)
class Split:
    """Which cluster each file belongs to (absent: the run's default), and what the caller should say."""

    cluster_of: Mapping[str, str]
    groups: int
    """How many HDFS identities the files formed."""
    unplaced: tuple[str, ...] = ()
    refused: str | None = None
    """Why several groups were not split (a group without Flink or without HDFS logs)."""


def split(files: Mapping[str, tuple[frozenset[str], str]]) -> Split:
    """``files``: path → (identity, ``flink`` | ``hdfs`` | other family). Clusters named by their NameNode."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for tokens, _ in files.values():
        first, *rest = sorted(tokens) or [""]
        for token in rest:
            parent[find(token)] = find(first)
    groups: dict[str, list[str]] = {}
    unplaced: list[str] = []
    for path, (tokens, _) in files.items():
        if tokens:
            groups.setdefault(find(min(tokens)), []).append(path)
        else:
            unplaced.append(path)
    if len(groups) < 2:
        return Split({}, len(groups))
    lacking = [paths for paths in groups.values() if {files[p][1] for p in paths} < {"flink", "hdfs"}]
    if lacking:
        named = ", ".join(_name(files, paths) for paths in groups.values())
        return Split({}, len(groups), refused=f"the logs name {len(groups)} HDFS ({named}), but not each with "
                                                 "Flink and HDFS logs of its own")
    cluster_of = {path: _name(files, paths) for paths in groups.values() for path in paths}
    return Split(cluster_of, len(groups), tuple(sorted(unplaced)))


def _name(files: Mapping[str, tuple[frozenset[str], str]], paths: list[str]) -> str:
    """A group's cluster name: its NameNode address (or nameservice), else its block pool."""
    tokens = sorted(set().union(*(files[p][0] for p in paths)))
    for kind in ("nn:", "ns:", "bp:"):
        for token in tokens:
            if token.startswith(kind):
                return "hdfs-" + token[len(kind):]
    return "unnamed"
