"""Who wrote a log: host and role from standard file names, role from logger names, family from content.

Role comes from content (logger names) first; file names give the host and a fallback role: a daemon's stock file
name or the kubelet's container file name proves the host; a pod-named file (``kubectl logs`` saved as
``<pod>.log``) or, failing all, the parent directory (per-host folders) is a guess, and :class:`HostFrom` says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache

from correlator.core.events import CLIENT_ROLE
from correlator.core.ingest.kubernetes import POD_NAME, pod_of_path, role_of_pod

_HADOOP_FILE = re.compile(
    r"^hadoop-(?:.+-)?(?P<cmd>datanode|namenode|journalnode|zkfc|secondarynamenode)-(?P<host>[^/]+?)"
    r"\.(?:log|out)(?:\.[\w-]+)?$"
)
_FLINK_FILE = re.compile(
    r"^flink-(?:.+-)?(?P<cmd>taskexecutor|taskmanager|standalonesession|jobmanager|standalonejob)-\d+-(?P<host>[^/]+?)"
    r"\.(?:log|out)(?:\.[\w-]+)?$"
)
_FLINK_CLIENT_FILE = re.compile(r"^flink-(?:.+-)?client-(?P<host>[^/]+?)\.log(?:\.[\w-]+)?$")
"""``bin/flink`` (CliFrontend) writes ``flink-<user>-client-<host>.log``: the client, not a TaskManager."""
_ROLE_WORDS = (
    ("taskexecutor", "taskmanager"),
    ("taskmanager", "taskmanager"),
    ("jobmanager", "jobmanager"),
    ("standalonesession", "jobmanager"),
    ("standalonejob", "jobmanager"),
    ("datanode", "datanode"),
    ("namenode", "namenode"),
)
_COMPRESSED = (".gz", ".bz2", ".xz", ".zst")
_ROLLED_DATE = re.compile(r"(?:^|[._-])(?P<y>20\d\d)-?(?P<m>[01]\d)-?(?P<d>[0-3]\d)(?:[._-]|$)")
"""A date in a rolled file's name (log4j's ``DailyRollingFileAppender`` ``.yyyy-MM-dd``, logrotate's ``-yyyyMMdd``)."""
_LOG_STEM = re.compile(r"^(?P<stem>.+?)\.(?:log|out|txt)(?:\.[\w-]+)?$")
_GC_NAME = re.compile(r"(?:^|[^a-z])gc(?:[^a-z]|$)", re.IGNORECASE)
_UNIX_DIR_NOISE = frozenset({"", ".", "..", "log", "logs", "tmp", "var"})


class HostFrom(StrEnum):
    """Where a file's host came from: a standard name proves it; the others are guesses, and are said."""

    DAEMON_FILE = "daemon file name"
    KUBELET_FILE = "kubelet file name"
    POD_FILE = "pod-named file"
    DIRECTORY = "directory name"
    NONE = "nothing"


@dataclass(frozen=True, slots=True)
class FileFacts:
    host: str | None
    role: str | None
    family: str | None
    """``flink`` / ``hdfs`` / ``gc`` when the name alone says so."""
    host_from: HostFrom = HostFrom.NONE
    date: tuple[int, int, int] | None = None
    """The date a rolled file's name carries: the day of a layout that stamps only the time."""

    @property
    def host_guessed(self) -> bool:
        return self.host is not None and self.host_from in (HostFrom.POD_FILE, HostFrom.DIRECTORY)


def role_word(name: str) -> str | None:
    lower = name.lower()
    for word, role in _ROLE_WORDS:
        if word in lower:
            return role
    return None


@lru_cache(maxsize=4096)
def facts_from_path(path: str) -> FileFacts:
    """Host, role and family a log file's path announces (any may be unknown)."""
    parts = path.replace("\\", "/").rstrip("/").split("/")
    name = parts[-1]
    for suffix in _COMPRESSED:
        name = name.removesuffix(suffix)
    parent = parts[-2] if len(parts) > 1 else ""
    date = _rolled_date(name)
    pod = pod_of_path(path)
    if pod is not None:
        return FileFacts(pod.pod, pod.role, None, HostFrom.KUBELET_FILE, date)
    m = _HADOOP_FILE.match(name)
    if m:
        cmd = m["cmd"]
        return FileFacts(m["host"], cmd if cmd in ("datanode", "namenode") else None, "hdfs", HostFrom.DAEMON_FILE, date)
    m = _FLINK_FILE.match(name)
    if m and not m["host"].isdigit():  # `<cluster-id>-taskmanager-1-1.log` is a pod's name, not a stock file
        return FileFacts(m["host"], role_word(m["cmd"]), "flink", HostFrom.DAEMON_FILE, date)
    m = _FLINK_CLIENT_FILE.match(name)
    if m:
        return FileFacts(m["host"], CLIENT_ROLE, "flink", HostFrom.DAEMON_FILE, date)
    family = "gc" if _GC_NAME.search(name) else None
    stem = _LOG_STEM.match(name)
    if stem and stem["stem"].count("-") >= 2 and POD_NAME.match(stem["stem"]):  # `kubectl logs <pod> > <pod>.log`
        return FileFacts(stem["stem"], role_of_pod(stem["stem"]), family, HostFrom.POD_FILE, date)
    host = parent if parent not in _UNIX_DIR_NOISE else None
    return FileFacts(host, role_word(name), family, HostFrom.DIRECTORY if host else HostFrom.NONE, date)


def _rolled_date(name: str) -> tuple[int, int, int] | None:
    m = _ROLLED_DATE.search(name)
    if m is None:
        return None
    y, mo, d = int(m["y"]), int(m["m"]), int(m["d"])
    return (y, mo, d) if 1 <= mo <= 12 and 1 <= d <= 31 else None


@dataclass(frozen=True, slots=True)
class KeyFacts:
    host: str | None
    file: str | None


_HOSTNAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9_-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9_-]*[A-Za-z0-9])?)*$")
_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")
_TOP_DIRS = frozenset({"var", "opt", "usr", "home", "srv", "mnt", "data", "tmp", "log", "logs", "app", "hadoop", "flink"})


@lru_cache(maxsize=4096)
def source_of_key(key: str) -> KeyFacts:
    """Host and file a Kafka key names; the rules, in order:

    1. ``host|path`` — split at the first ``|``.
    2. ``host:path`` — split at the first ``:`` when what precedes it is a host name and the key is not a Windows
       path (``C:\\logs\\x.log`` and ``C:/logs/x.log`` are files with no host; ``dn1:C:\\logs\\x.log`` is host dn1).
    3. ``host/path`` — split at the first ``/`` when the key does not start with ``/`` or ``.`` and the first
       segment is a host name that is not a usual top-level directory (``var``, ``opt``, ``logs``, …).
    4. otherwise the whole key is a file name, which names a host only if it is a standard daemon log name.

    The host is None where no rule names one.
    """
    key = key.strip()
    if not key:
        return KeyFacts(None, None)
    host, sep, rest = key.partition("|")
    if sep:
        return KeyFacts(_host_or_none(host), rest.strip() or None)
    if _DRIVE.match(key):
        return KeyFacts(None, key)
    host, sep, rest = key.partition(":")
    if sep and _HOSTNAME.match(host):
        return KeyFacts(host, rest or None)
    if not key.startswith(("/", ".")):
        host, sep, rest = key.partition("/")
        if sep and _HOSTNAME.match(host) and host.lower() not in _TOP_DIRS:
            return KeyFacts(host, rest or None)
    return KeyFacts(None, key)


def _host_or_none(text: str) -> str | None:
    text = text.strip()
    return text if _HOSTNAME.match(text) else None


_JM_SEGMENTS = frozenset(
    {
        "CheckpointCoordinator",
        "CheckpointFailureManager",
        "ExecutionGraph",
        "JobMaster",
        "ClusterEntrypoint",
        "RestartPipelinedRegionFailoverStrategy",
        "DefaultScheduler",
        "AdaptiveScheduler",
    }
)
_TM_SEGMENTS = frozenset(
    {
        "Task",
        "TaskExecutor",
        "TaskManagerRunner",
        "YarnTaskExecutorRunner",
        "StreamTask",
        "AsyncCheckpointRunnable",
        "RegularOperatorChain",
        "SubtaskCheckpointCoordinatorImpl",
        "AbstractStreamOperator",
    }
)


@lru_cache(maxsize=4096)
def role_of_logger(logger: str) -> str | None:
    """The process role a logger name proves, or None for loggers that run in several (HDFS client, JVM monitor);
    remembered per name: a log repeats a few loggers, and every record parsed asks."""
    if ".server.datanode" in logger or logger.startswith(("datanode.", "impl.", "DataNode.")):
        return "datanode"
    if ".server.namenode" in logger or logger.startswith("namenode."):
        return "namenode"
    last = logger.rsplit(".", 1)[-1]
    if last in ("DirectoryScanner", "FsDatasetImpl", "DataNode", "FsVolumeImpl"):
        return "datanode"
    if last in ("FSNamesystem", "NameNode"):
        return "namenode"
    if logger.startswith(("org.apache.flink.", "o.a.f.")) or logger in _JM_SEGMENTS or logger in _TM_SEGMENTS:
        if last in _JM_SEGMENTS or ".jobmaster." in logger or ".entrypoint." in logger or ".executiongraph." in logger:
            return "jobmanager"
        if last in _TM_SEGMENTS or ".streaming." in logger or ".taskexecutor." in logger or ".taskmanager." in logger:
            return "taskmanager"
        if logger.startswith("o.a.f."):
            return "jobmanager" if ".r.c." in logger or ".r.e." in logger or ".r.j." in logger else None
    return None


def family_of_logger(logger: str) -> str | None:
    if logger.startswith(("org.apache.flink.", "o.a.f.")):
        return "flink"
    if logger.startswith(("org.apache.hadoop.", "o.a.h.")):
        return "hdfs"
    return None


_SNIFF_GC = re.compile(
    r"^(?:\[\d[^\]]*\](?:\[[^\]]*\])*\s|\d{4}-\d\d-\d\dT[\d:.]+[+-]\d{4}: |\d+\.\d{3}: \[|"
    r"Java HotSpot|OpenJDK|CommandLine flags:)",
    re.MULTILINE,
)


_SNIFF_ACCESS = re.compile(r"^[0-9a-f]{64} \S+ \[\d\d/[A-Z][a-z]{2}/\d{4}:\d\d:\d\d:\d\d [+-]\d{4}\] ", re.MULTILINE)
"""An S3 server access log record's start: its bucket owner's canonical id, the bucket, the bracketed time."""


_SNIFF_KAFKA = re.compile(r"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] [A-Z]+ .*\((?:kafka|org\.apache\.kafka)\.[\w.$]+\)$",
                          re.MULTILINE)
"""A Kafka broker's ``server.log`` record: the bracketed time first, the logger in parentheses last."""


def sniff_family(head: str) -> str | None:
    """The family of a file from its first kilobytes: ``envelope`` (JSON lines), ``gc``, ``flink``, ``hdfs``,
    ``objectstore`` (an S3 server access log) or ``kafka`` (a Kafka broker's ``server.log``)."""
    stripped = head.lstrip("\ufeff \t\r\n")
    if stripped.startswith("{"):
        return "envelope"
    if _SNIFF_KAFKA.search(head):  # before the counts: its configuration dump names other projects' classes
        return "kafka"
    flink = head.count("org.apache.flink") + head.count("o.a.f.")
    hadoop = head.count("org.apache.hadoop") + len(re.findall(r"\b(?:datanode|namenode|util|impl|hdfs)\.[A-Z]", head))
    if flink or hadoop:
        return "flink" if flink >= hadoop else "hdfs"
    if _SNIFF_GC.search(head):
        return "gc"
    if _SNIFF_ACCESS.search(head):
        return "objectstore"
    return None


class Side(StrEnum):
    """The raw topic a log file belongs on."""

    FLINK = "flink"
    """Flink processes, their GC logs too."""
    HDFS = "hdfs"
    """The storage and every other side: HDFS daemons, a Kafka broker's log."""
    OBJECTSTORE = "objectstore"
    """An object store's access log."""


def input_side(family: str, role: str | None, head: str = "") -> Side:
    """Which raw topic a log file belongs on (see ``Side``). ``head`` (the first kilobytes) decides for envelope
    files, whose family says nothing about the process."""
    if family == "flink" or (family == "gc" and role in ("taskmanager", "jobmanager")):
        return Side.FLINK
    if family == "envelope" and head.count("org.apache.flink") > head.count("org.apache.hadoop"):
        return Side.FLINK
    if family == "objectstore":
        return Side.OBJECTSTORE
    return Side.HDFS

