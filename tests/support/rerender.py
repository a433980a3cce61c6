"""The lab's real logs re-rendered the way other deployments write or collect them.

Every function here takes one captured lab run (``tests/data/lab/<hadoop>-<flink>/<scenario>/``, the daemons' own
lines in their stock layouts, stamped in UTC) and writes the same records in another shape, with nothing added or
lost: Kubernetes container files (CRI and Docker ``json-file``), Flink's JSON layouts, ``kubectl logs`` files,
gzipped rotations, local time across a DST fall-back, time-only layouts, several clusters in one folder. Each returns
how the run's host names map to the rendered ones, so a test can hold the verdicts on the rendering equal to the
verdicts on the stock files.

The container formats follow the kubelet's and the runtimes' documented shapes: CRI (containerd, CRI-O) writes
``<RFC 3339 nano time> <stdout|stderr> <F|P> <text>`` per line, ``P`` for a partial line the runtime split
(containerd splits at 16 KiB; this renderer splits long lines much shorter to exercise the joins), ``F`` for the
last part; Docker's ``json-file`` driver writes ``{"log": "<line>\\n", "stream": "stdout", "time": "<RFC 3339 nano>"}``.
The JSON layouts are log4j2's ``JsonTemplateLayout`` with its ``EcsLayout.json`` template, log4j2's classic
``JsonLayout`` (``instant``, ``loggerName``, ``thrown``) and ``LogstashJsonEventLayoutV1``.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

STAMP = re.compile(r"^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d),(\d{3})")
FLINK_RECORD = re.compile(r"^(\S+ \S+) (TRACE|DEBUG|INFO|WARN|ERROR|FATAL)\s+(\S+)\s+(?:\[[^\]]*\]\s+)?- (.*)$", re.S)
STOCK_NAME = re.compile(r"^(?P<family>hadoop|flink)-(?P<user>[^-]+)-(?P<role>namenode|datanode|standalonesession-\d+|"
                        r"taskexecutor-\d+|client)-(?P<host>.+)\.log$")
EPOCH_MS = re.compile(r"(?<!\d)1[6-9]\d{11}(?!\d)")

Hosts = dict[str, str]
"""Host in the stock run → host in the rendering."""


@dataclass(frozen=True)
class LogFile:
    name: str
    family: str
    role: str
    host: str
    text: str

    @property
    def lines(self) -> list[str]:
        return self.text.splitlines()


def stock_files(run: Path) -> list[LogFile]:
    """The run's daemon logs under their stock names (a rendering of a rendering reads its first one's files); a
    fixture kept gzipped (``X.log.gz``) is read as the ``X.log`` it holds."""
    out = []
    for path in sorted([*run.glob("*.log"), *run.glob("*.log.gz")]):
        name = path.name.removesuffix(".gz")
        m = STOCK_NAME.match(name)
        assert m, path
        data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
        out.append(LogFile(name, m["family"], m["role"], m["host"], data.decode("utf-8")))
    return sorted(out, key=lambda f: f.name)


def records(text: str) -> list[list[str]]:
    """Lines grouped into records: a record starts at a stamped line (a banner or stack continues the last)."""
    out: list[list[str]] = []
    for line in text.splitlines():
        if STAMP.match(line) or not out:
            out.append([line])
        else:
            out[-1].append(line)
    return out


def utc_ms(line: str) -> int | None:
    m = STAMP.match(line)
    if m is None:
        return None
    when = datetime.fromisoformat(f"{m[1]}T{m[2]}.{m[3]}+00:00")
    return int(when.timestamp() * 1000)


def iso(ms: int, *, nanos: int = 0) -> str:
    """RFC 3339 UTC with nanoseconds, as container runtimes write it."""
    when = datetime.fromtimestamp(ms // 1000, timezone.utc)
    return when.strftime("%Y-%m-%dT%H:%M:%S") + f".{ms % 1000:03d}{nanos:06d}Z"


def stamped(lines: list[str]) -> Iterator[tuple[int, str]]:
    """Each line with the UTC time of its record (continuation lines take their record's)."""
    last = 0
    for line in lines:
        if line.startswith("{"):  # a JSON layout's record
            stamp = json.loads(line)["@timestamp"]
            last = int(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1000)
        last = utc_ms(line) or last
        yield last, line


# --- Kubernetes ---------------------------------------------------------------------------------------------------

NAMESPACES = {"hadoop": "hdfs", "flink": "flink"}


def pod_name(log: LogFile) -> str:
    """The pod a Kubernetes deployment would run this daemon in: a StatefulSet's ordinal names for HDFS, the Flink
    operator's ``<cluster-id>-taskmanager-1-<n>`` and a Deployment's ``<cluster-id>-<hash>-<5 chars>`` JobManager."""
    if log.role == "namenode":
        return "hdfs-namenode-0"
    if log.role == "datanode":
        return f"hdfs-datanode-{int(log.host.removeprefix('lab-dn')) - 1}"
    if log.role.startswith("taskexecutor"):  # lab-tm, lab-tm2, … are the operator's TaskManager pods 1, 2, …
        return f"orders-taskmanager-1-{log.host.removeprefix('lab-tm') or '1'}"
    if log.role == "client":
        return "orders-submit-x7k2p"
    return "orders-6d8f9c7b5d-q4m2z"


def container_of(log: LogFile) -> str:
    return {"namenode": "namenode", "datanode": "datanode", "client": "flink-client"}.get(
        log.role, "flink-main-container")


def _hex(seed: str, n: int) -> str:
    return hashlib.sha256(seed.encode()).hexdigest()[:n]


def cri(run: Path, dst: Path, *, split_at: int = 120) -> Hosts:
    """kubelet files ``containers/<pod>_<ns>_<container>-<id>.log``; lines longer than ``split_at`` as ``P`` parts."""
    hosts: Hosts = {}
    (dst / "containers").mkdir(parents=True)
    for log in stock_files(run):
        pod = pod_name(log)
        hosts[log.host] = pod
        out = []
        for i, (ms, line) in enumerate(stamped(log.lines)):
            data = line.encode()
            parts = [data[j:j + split_at] for j in range(0, len(data), split_at)] or [b""]
            for k, part in enumerate(parts):
                tag = "F" if k == len(parts) - 1 else "P"
                out.append(f"{iso(ms, nanos=i % 1000)} stdout {tag} ".encode() + part)
        name = f"{pod}_{NAMESPACES[log.family]}_{container_of(log)}-{_hex(pod + log.name, 64)}.log"
        (dst / "containers" / name).write_bytes(b"\n".join(out) + b"\n")
    return hosts


def docker(run: Path, dst: Path) -> Hosts:
    """Docker ``json-file`` lines in the kubelet's ``pods/<ns>_<pod>_<uid>/<container>/0.log``."""
    hosts: Hosts = {}
    for log in stock_files(run):
        pod = pod_name(log)
        hosts[log.host] = pod
        uid = _hex(pod, 32)
        uid = f"{uid[:8]}-{uid[8:12]}-{uid[12:16]}-{uid[16:20]}-{uid[20:]}"
        folder = dst / "pods" / f"{NAMESPACES[log.family]}_{pod}_{uid}" / container_of(log)
        folder.mkdir(parents=True)
        lines = [json.dumps({"log": line + "\n", "stream": "stdout", "time": iso(ms)}) for ms, line in stamped(log.lines)]
        (folder / "0.log").write_text("\n".join(lines) + "\n")
    return hosts


def kubectl(run: Path, dst: Path) -> Hosts:
    """``kubectl logs <pod> > <pod>.log``: the daemon's lines as written, the pod's name on the file."""
    hosts: Hosts = {}
    dst.mkdir(parents=True)
    for log in stock_files(run):
        pod = pod_name(log)
        hosts[log.host] = pod
        (dst / f"{pod}.log").write_text(log.text)
    return hosts


# --- JSON layouts -------------------------------------------------------------------------------------------------

def _ecs(ms: int, level: str, logger: str, message: str, stack: str | None) -> dict[str, object]:
    record: dict[str, object] = {"@timestamp": iso(ms)[:23] + "Z", "ecs.version": "1.2.0", "log.level": level,
                                 "message": message, "process.thread.name": "main", "log.logger": logger}
    if stack:
        name, _, text = stack.partition("\n")[0].partition(": ")
        record.update({"error.type": name, "error.message": text, "error.stack_trace": stack})
    return record


def _log4j2(ms: int, level: str, logger: str, message: str, stack: str | None) -> dict[str, object]:
    record: dict[str, object] = {"instant": {"epochSecond": ms // 1000, "nanoOfSecond": ms % 1000 * 1_000_000},
                                 "thread": "main", "level": level, "loggerName": logger, "message": message,
                                 "endOfBatch": False, "loggerFqcn": "org.apache.logging.slf4j.Log4jLogger"}
    if stack:
        head, _, frames = stack.partition("\n")
        name, _, text = head.partition(": ")
        record["thrown"] = {"name": name, "message": text, "extendedStackTrace": frames}
    return record


def _logstash(ms: int, level: str, logger: str, message: str, stack: str | None) -> dict[str, object]:
    record: dict[str, object] = {"@version": 1, "@timestamp": iso(ms)[:23] + "Z", "level": level,
                                 "logger_name": logger, "thread_name": "main", "message": message}
    if stack:
        record["stack_trace"] = stack
    return record


JSON_LAYOUTS: dict[str, Callable[[int, str, str, str, str | None], dict[str, object]]] = {
    "ecs": _ecs, "log4j2-json": _log4j2, "logstash": _logstash}


def json_layout(run: Path, dst: Path, layout: str) -> Hosts:
    """Flink's files in a JSON layout (one object per record, the stack trace in its field); HDFS stays text."""
    write = JSON_LAYOUTS[layout]
    dst.mkdir(parents=True)
    for log in stock_files(run):
        if log.family != "flink":
            (dst / log.name).write_text(log.text)
            continue
        out = []
        for record in records(log.text):
            ms = utc_ms(record[0])
            m = FLINK_RECORD.match(record[0])
            assert ms is not None and m is not None, record[0]
            body = [m[4], *record[1:]]
            at = next((i for i, ln in enumerate(body) if i and re.match(r"^[\w.$]+(?:Exception|Error)\b", ln)), None)
            message, stack = ("\n".join(body), None) if at is None else ("\n".join(body[:at]), "\n".join(body[at:]))
            out.append(json.dumps(write(ms, m[2], m[3], message, stack), separators=(",", ":")))
        (dst / log.name).write_text("\n".join(out) + "\n")
    return {log.host: log.host for log in stock_files(run)}


# --- rotations and time -------------------------------------------------------------------------------------------

def gzip_rotations(run: Path, dst: Path) -> Hosts:
    """Each file cut in three at record boundaries: ``X.log.2.gz`` (oldest), ``X.log.1.gz``, ``X.log``."""
    dst.mkdir(parents=True)
    for log in stock_files(run):
        recs = records(log.text)
        cuts = [0, len(recs) // 3, 2 * len(recs) // 3, len(recs)]
        parts = ["".join(line + "\n" for rec in recs[a:b] for line in rec) for a, b in zip(cuts, cuts[1:])]
        (dst / f"{log.name}.2.gz").write_bytes(gzip.compress(parts[0].encode()))
        (dst / f"{log.name}.1.gz").write_bytes(gzip.compress(parts[1].encode()))
        (dst / log.name).write_text(parts[2])
    return {log.host: log.host for log in stock_files(run)}


def shifted(text: str, delta_ms: int, zone: ZoneInfo | None = None, *, date: bool = True) -> str:
    """Every record stamp moved by ``delta_ms`` and written as wall time in ``zone`` (UTC if none), without a date
    if not ``date``; epoch-millisecond numbers of the run's days in messages (trigger times, block pool ids) move
    with them, so the rendering stays one consistent history."""
    tz = zone or timezone.utc

    def stamp(m: re.Match[str]) -> str:
        when = datetime.fromisoformat(f"{m[1]}T{m[2]}.{m[3]}+00:00") + timedelta(milliseconds=delta_ms)
        local = when.astimezone(tz)
        wall = local.strftime("%H:%M:%S") + f",{local.microsecond // 1000:03d}"
        return f"{local:%Y-%m-%d} {wall}" if date else wall

    out = []
    for line in text.splitlines(keepends=True):
        line = STAMP.sub(stamp, line, count=1)
        if delta_ms:
            line = EPOCH_MS.sub(lambda m: str(int(m[0]) + delta_ms), line)
        out.append(line)
    return "".join(out)


def fault_start_ms(run: Path) -> int:
    truth = json.loads((run / "truth.json").read_text())
    return int(datetime.fromisoformat(truth["fault"]["start"].replace("Z", "+00:00")).timestamp() * 1000)


FALL_BACK_BERLIN = int(datetime(2026, 10, 25, 1, 0, tzinfo=timezone.utc).timestamp() * 1000)
"""03:00 CEST becomes 02:00 CET: the wall-clock hour 02:00-03:00 is lived twice."""


def dst_fall_back(run: Path, dst: Path) -> tuple[Hosts, int]:
    """The run moved so that its fault starts 3 s before Berlin's autumn fall-back, stamps in Berlin wall time:
    the checkpoint is triggered in the first pass of the repeated hour and fails in the second. Returns the hosts
    and the shift, so a test can compare the verdicts' times too."""
    delta = FALL_BACK_BERLIN - 3000 - fault_start_ms(run)
    dst.mkdir(parents=True)
    for log in stock_files(run):
        (dst / log.name).write_text(shifted(log.text, delta, ZoneInfo("Europe/Berlin")))
    return {log.host: log.host for log in stock_files(run)}, delta


def time_only(run: Path, dst: Path) -> Hosts:
    """A ``%d{HH:mm:ss,SSS}`` layout in files rolled by date: ``X.log.<yyyy-MM-dd>``, the date only in the name."""
    dst.mkdir(parents=True)
    for log in stock_files(run):
        day = STAMP.match(log.text)
        assert day is not None
        (dst / f"{log.name}.{day[1]}").write_text(shifted(log.text, 0, date=False))
    return {log.host: log.host for log in stock_files(run)}


def two_clusters(a: Path, b: Path, dst: Path, *, per_folder: bool = False) -> tuple[Hosts, Hosts]:
    """Two runs' files in one folder (or one folder each), hosts prefixed ``a-``/``b-``, run ``b`` moved so its
    fault starts in the same second as ``a``'s: only what the logs say tells the clusters apart."""
    delta = fault_start_ms(a) - fault_start_ms(b)
    maps: list[Hosts] = []
    for prefix, run, shift in (("a", a, 0), ("b", b, delta)):
        folder = dst / prefix if per_folder else dst
        folder.mkdir(parents=True, exist_ok=True)
        hosts: Hosts = {}
        for log in stock_files(run):
            hosts[log.host] = f"{prefix}-{log.host}"
            name = log.name.removesuffix(f"-{log.host}.log") + f"-{prefix}-{log.host}.log"
            (folder / name).write_text(shifted(log.text, shift))
        maps.append(hosts)
    return maps[0], maps[1]


STOCK_HEADER = re.compile(r"^(\d{4})-(\d\d)-(\d\d) (\d\d:\d\d:\d\d,\d{3}) (TRACE|DEBUG|INFO|WARN|ERROR|FATAL)\s+"
                          r"([^\s:]+)(?::| +(?:\[[^\]]*\] +)?-) ?(.*)$", re.S)
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
LEVEL_FIRST = "%-5p [%t] %d{dd MMM yyyy HH:mm:ss,SSS} %c - %m%n"
"""A layout whose lines do not start with their date: the level, the thread, then a log4j ``DATE`` stamp."""


def level_first(run: Path, dst: Path) -> Hosts:
    """Every daemon's lines in :data:`LEVEL_FIRST` (continuation lines as they were)."""
    dst.mkdir(parents=True)
    for log in stock_files(run):
        out = []
        for line in log.text.splitlines():
            m = STOCK_HEADER.match(line)
            if m is None:
                out.append(line)
                continue
            y, mo, d, clock, level, logger, message = m.groups()
            out.append(f"{level:<5} [main] {d} {MONTHS[int(mo) - 1]} {y} {clock} {logger} - {message}")
        (dst / log.name).write_text("\n".join(out) + "\n")
    return {log.host: log.host for log in stock_files(run)}
