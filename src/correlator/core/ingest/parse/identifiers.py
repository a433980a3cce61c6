"""Identifiers a log line carries in its text: Flink job ids, checkpoint numbers in paths, DataNode addresses."""

from __future__ import annotations

import re

JOB_ID = r"[0-9a-f]{32}"
_CHK_PATH = re.compile(r"/(" + JOB_ID + r")/chk-(\d+)(?:/|$)")
_DATANODE_INFO = re.compile(r"DatanodeInfoWithStorage\[([^,\]]+)")
_HOST_PORT = re.compile(r"([\w*.-]+:\d+)")


def job_and_checkpoint_from_path(path: str | None) -> tuple[str | None, int | None]:
    """``…/<job-id>/chk-<n>/…`` names the job and the checkpoint even when the line itself does not."""
    if not path:
        return None, None
    m = _CHK_PATH.search(path)
    return (m[1], int(m[2])) if m else (None, None)


def datanodes(text: str) -> tuple[str, ...]:
    """Pipeline DataNode addresses (``ip:port``) from ``DatanodeInfoWithStorage[…]`` lists or plain 2.6 lists."""
    found = _DATANODE_INFO.findall(text)
    if not found:
        found = _HOST_PORT.findall(text)
    return tuple(found)


_TM_HOST = re.compile(r"[^\s()]*\((?P<meta>[^\s():]+):\d+\)|(?P<addr>[^\s():]+):\d+-[0-9a-f]{6}")


def taskmanager_host(resource_id: str) -> str | None:
    """The host a TaskManager's resource id names: standalone ids are ``host:port-suffix``, YARN's carry the node as
    ``container_…(host:port)``; other ids (a pod name, a random id) name none that can be told from the text."""
    m = _TM_HOST.fullmatch(resource_id)
    return None if m is None else m["meta"] or m["addr"]
