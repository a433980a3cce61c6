"""HDFS refusing a write and saying why, wherever the sentence is logged: by the daemon that refused (a DataNode's
transfer-thread limit, a NameNode's IPC handler) or inside a client's cause chain (a Flink failure record).

One row per wording (a ``wording.Wording``): the fixed phrase (a prefilter trigger, searched in the whole record
since the sentence is often an exception's line under the header), the words the record must hold as well where the
phrase alone is said for other reasons, and what reads it: the refusal kind and the regex that reads the limit, the
count and the path where the wording gives them (``Refused``). Wordings from the Hadoop 2.7-3.4 sources
(DataXceiverServer, BlockManager / BlockPlacementPolicy via FSNamesystem.addBlock, DataStreamer, FSNamesystem safe
mode, FSDirectory's item limit, the quota exceptions, the delegation-token secret manager); kinds with no DataNode or
NameNode line of their own are seen only in clients.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from correlator.core.events import HdfsRefusal, RefusalKind
from correlator.core.ingest.parse.emit import Emit
from correlator.core.ingest.parse.wording import Wording, triggers


@dataclass(frozen=True, slots=True)
class Refused:
    """What reads a refusal wording: the kind it states, and the regex of what it gives."""

    kind: RefusalKind
    fields: re.Pattern[str] | None = None
    """Named groups ``limit``, ``value``, ``path`` where the wording gives them."""

    def __call__(self, text: str, at: int, emit: Emit) -> None:
        """The refusal a record's ``text`` states, its phrase at ``at``."""
        m = self.fields.search(text) if self.fields is not None else None
        emit(HdfsRefusal, kind=self.kind, limit=_int(m, "limit"), value=_int(m, "value"),
             path=m.groupdict().get("path") if m else None, detail=_sentence(text, at))


def _refusal(phrase: str, kind: RefusalKind, fields: re.Pattern[str] | None = None,
             needs: tuple[str, ...] = ()) -> Wording[Refused]:
    return Wording(phrase, Refused(kind, fields), "record", needs=needs, emits=(HdfsRefusal,))


REFUSALS: tuple[Wording[Refused], ...] = (
    _refusal("exceeds the limit of concurrent x", "xceiver_limit",
             re.compile(r"Xceiver count (?P<value>\d+) exceeds the limit of concurrent x\w+:? ?(?P<limit>\d+)")),
    _refusal(" minReplication nodes", "no_datanodes",
             re.compile(r"(?P<path>/\S*) could only be written to (?P<value>\d+) of the (?P<limit>\d+) "
                        r"minReplication")),
    _refusal(" nodes instead of minReplication", "no_datanodes",
             re.compile(r"(?P<path>/\S*) could only be replicated to (?P<value>\d+) nodes instead of minReplication "
                        r"\(=(?P<limit>\d+)\)")),
    _refusal("Failed to replace a bad datanode on the existing pipeline", "pipeline_exhausted"),
    _refusal("Name node is in safe mode", "safe_mode",
             re.compile(r"Cannot [\w ]+?(?P<path>/\S*?)\.? Name node is in safe mode")),
    _refusal("The directory item limit of ", "directory_items",
             re.compile(r"The directory item limit of (?P<path>\S+) is exceeded: limit=(?P<limit>\d+) "
                        r"items=(?P<value>\d+)")),
    _refusal("The DiskSpace quota of ", "space_quota",
             re.compile(r"The DiskSpace quota of (?P<path>\S+) is exceeded: quota = (?P<limit>\d+) B = .*? but "
                        r"diskspace consumed = (?P<value>\d+) B")),
    _refusal("Quota by storage type : ", "space_quota",
             re.compile(r"Quota by storage type : \w+ on path : (?P<path>\S+) is exceeded")),
    _refusal("The NameSpace quota (directories and files)", "namespace_quota",
             re.compile(r"The NameSpace quota \(directories and files\) of directory (?P<path>\S+) is exceeded: "
                        r"quota=(?P<limit>\d+) file count=(?P<value>\d+)")),
    _refusal("No space left on device", "disk_full"),
    # the NameNode's count of the DataNodes it passed over and why (INFO, 3.x): one with no room for a block
    _refusal("Not enough replicas was chosen. Reason", "disk_full",
             re.compile(r"NOT_ENOUGH_STORAGE_SPACE=(?P<value>\d+)"), needs=("NOT_ENOUGH_STORAGE_SPACE",)),
    _refusal("DiskOutOfSpaceException", "disk_full",
             re.compile(r"most available space \(=(?P<value>\d+) B\) is less than the block size "
                        r"\(=(?P<limit>\d+) B\)")),
    _refusal("(HDFS_DELEGATION_TOKEN token ", "token_expired",
             re.compile(r"token \(HDFS_DELEGATION_TOKEN token (?P<value>\d+) for \S+?\) (?:is expired|can't be found)"),
             needs=("is expired", "can't be found")),
)
"""Every refusal wording, in the order tried: a record states each kind once, in the first row of that kind that
takes it (a client's chain repeats its causes)."""
_PHRASES = triggers(REFUSALS)
"""Each phrase once, for the quick test of whether a record states any refusal."""


def emit_refusals(lines: Sequence[str], emit: Emit) -> None:
    """One ``hdfs_refusal`` per kind a record states (the first wording of each)."""
    text = "\n".join(lines)
    if not _states_any(text):
        return
    seen: set[RefusalKind] = set()
    for row in REFUSALS:
        at = text.find(row.phrase)  # where the sentence is, and most records hold no phrase: the row is asked after
        if at < 0 or row.handler.kind in seen or not row.takes(text):
            continue
        seen.add(row.handler.kind)
        row.handler(text, at, emit)


def _states_any(text: str) -> bool:
    """Whether ``text`` holds any refusal's phrase: most records parsed hold none, and a plain loop of ``in`` tells
    it for less than the table's walk (or one alternation, slower still over a long cause chain)."""
    for phrase in _PHRASES:
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
