"""HDFS refusing a write and saying why, wherever the sentence is logged: by the daemon that refused (a DataNode's
transfer-thread limit, a NameNode's IPC handler) or inside a client's cause chain (a Flink failure record).

One row per wording: the fixed phrase (a prefilter trigger, searched in the whole record since the sentence is often
an exception's line under the header), the refusal kind, and the regex that reads the limit, the count and the path
where the wording gives them. Wordings from the Hadoop 2.7-3.4 sources (DataXceiverServer, BlockManager /
BlockPlacementPolicy via FSNamesystem.addBlock, DataStreamer, FSNamesystem safe mode, FSDirectory's item limit, the
quota exceptions, the delegation-token secret manager); kinds with no DataNode or NameNode line of their own are seen
only in clients.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from correlator.core.events import HdfsRefusal, RefusalKind
from correlator.core.ingest.parse.emit import Emit


@dataclass(frozen=True, slots=True)
class Refusal:
    phrase: str
    kind: RefusalKind
    fields: re.Pattern[str] | None = None
    """Named groups ``limit``, ``value``, ``path`` where the wording gives them."""
    needs: tuple[str, ...] = ()
    """Words of which the record must hold one as well (the phrase alone is also logged for other reasons)."""


REFUSALS: tuple[Refusal, ...] = (
    Refusal("exceeds the limit of concurrent x", "xceiver_limit",
            re.compile(r"Xceiver count (?P<value>\d+) exceeds the limit of concurrent x\w+:? ?(?P<limit>\d+)")),
    Refusal(" minReplication nodes", "no_datanodes",
            re.compile(r"(?P<path>/\S*) could only be written to (?P<value>\d+) of the (?P<limit>\d+) minReplication")),
    Refusal(" nodes instead of minReplication", "no_datanodes",
            re.compile(r"(?P<path>/\S*) could only be replicated to (?P<value>\d+) nodes instead of minReplication "
                       r"\(=(?P<limit>\d+)\)")),
    Refusal("Failed to replace a bad datanode on the existing pipeline", "pipeline_exhausted"),
    Refusal("Name node is in safe mode", "safe_mode",
            re.compile(r"Cannot [\w ]+?(?P<path>/\S*?)\.? Name node is in safe mode")),
    Refusal("The directory item limit of ", "directory_items",
            re.compile(r"The directory item limit of (?P<path>\S+) is exceeded: limit=(?P<limit>\d+) "
                       r"items=(?P<value>\d+)")),
    Refusal("The DiskSpace quota of ", "space_quota",
            re.compile(r"The DiskSpace quota of (?P<path>\S+) is exceeded: quota = (?P<limit>\d+) B = .*? but "
                       r"diskspace consumed = (?P<value>\d+) B")),
    Refusal("Quota by storage type : ", "space_quota",
            re.compile(r"Quota by storage type : \w+ on path : (?P<path>\S+) is exceeded")),
    Refusal("The NameSpace quota (directories and files)", "namespace_quota",
            re.compile(r"The NameSpace quota \(directories and files\) of directory (?P<path>\S+) is exceeded: "
                       r"quota=(?P<limit>\d+) file count=(?P<value>\d+)")),
    Refusal("No space left on device", "disk_full"),
    # the NameNode's count of the DataNodes it passed over and why (INFO, 3.x): one with no room for a block
    Refusal("Not enough replicas was chosen. Reason", "disk_full",
            re.compile(r"NOT_ENOUGH_STORAGE_SPACE=(?P<value>\d+)"), needs=("NOT_ENOUGH_STORAGE_SPACE",)),
    Refusal("DiskOutOfSpaceException", "disk_full",
            re.compile(r"most available space \(=(?P<value>\d+) B\) is less than the block size \(=(?P<limit>\d+) B\)")),
    Refusal("(HDFS_DELEGATION_TOKEN token ", "token_expired",
            re.compile(r"token \(HDFS_DELEGATION_TOKEN token (?P<value>\d+) for \S+?\) (?:is expired|can't be found)"),
            needs=("is expired", "can't be found")),
)
PHRASES: tuple[str, ...] = tuple(dict.fromkeys(r.phrase for r in REFUSALS))
"""The prefilter's refusal triggers."""


def emit_refusals(lines: Sequence[str], emit: Emit) -> None:
    """One ``hdfs_refusal`` per kind a record states (the first wording of each; a chain repeats its causes)."""
    text = "\n".join(lines)
    if not _states_any(text):
        return
    seen: set[RefusalKind] = set()
    for r in REFUSALS:
        at = text.find(r.phrase)
        if at < 0 or r.kind in seen or (r.needs and not any(w in text for w in r.needs)):
            continue
        seen.add(r.kind)
        m = r.fields.search(text) if r.fields is not None else None
        emit(HdfsRefusal, kind=r.kind, limit=_int(m, "limit"), value=_int(m, "value"),
             path=m.groupdict().get("path") if m else None, detail=_sentence(text, at))


def _states_any(text: str) -> bool:
    """Whether ``text`` holds any refusal's phrase: most records parsed hold none, and a plain loop of ``in`` tells
    it for less than the table's walk (or one alternation, slower still over a long cause chain)."""
    for phrase in PHRASES:
        if phrase in text:
            return True
    return False


def _int(m: re.Match[str] | None, name: str) -> int | None:
    value = m.groupdict().get(name) if m else None
    return int(value) if value else None


_EXCEPTION = re.compile(r"(?:[A-Za-z_$][\w$]*\.)+[\w$]*(?:Exception|Error|Token)(?:\$[\w$]+)?: ")
"""A Java exception class where the refusal's own words begin (``…namenode.SafeModeException: Cannot create…``)."""


def _sentence(text: str, at: int) -> str:
    """The refusal as logged: the line the phrase is on, from the last exception class before the phrase (a daemon's
    IPC line puts the call's details and the log header before it), else from the line's start."""
    start = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at)
    line = text[start:end if end >= 0 else len(text)]
    classes = list(_EXCEPTION.finditer(line, 0, at - start))
    if classes:
        line = line[classes[-1].start():]
    return line.strip().removeprefix("Caused by: ")[:400]
