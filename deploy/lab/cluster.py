"""The lab's cluster: one NameNode, three DataNodes, a Flink JobManager and TaskManager, each its own JVM on loopback.

Jars come from Maven Central through the poms beside this file (cached under `.cache/lab/`); every daemon gets its
own conf dir, data dir and stock log file name. Nothing here is a stand-in: the NameNode is Hadoop's own main, the
DataNodes run Hadoop's `DataNode.createDataNode` inside `lab.LabDataNode` (which only adds switchable faults), and
the Flink processes are Flink's own entry points. Every process is started and stopped by pid.
"""

from __future__ import annotations

import getpass
import os
import re
import signal
import socket
import subprocess
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from confs import FLINK_LAYOUTS, HADOOP_LOG4J, flink_cli_log4j, flink_log4j, xml

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
CACHE = ROOT / ".cache" / "lab"
M2 = ROOT / ".cache" / "m2"
# Where runs live and how the daemons see their jars: a neutral path, so the captured logs (which print data dirs
# and class paths) name the lab, not the checkout they were made from.
HOME = Path(os.environ.get("LAB_HOME", "/tmp/correlator-lab"))
USER = getpass.getuser()

OPENS = [f"--add-opens=java.base/{p}=ALL-UNNAMED" for p in (
    "java.lang", "java.net", "java.io", "java.nio", "sun.nio.ch", "java.lang.reflect", "java.text", "java.time",
    "java.util", "java.util.concurrent", "java.util.concurrent.atomic", "java.util.concurrent.locks")]
EXPORTS = [f"--add-exports={p}=ALL-UNNAMED" for p in (
    "java.base/sun.net.util", "java.rmi/sun.rmi.registry", "java.security.jgss/sun.security.krb5")]
JVM_COMMON = ["-XX:+UseG1GC", "-XX:TieredStopAtLevel=1", "-Xss512k", "-Duser.timezone=UTC",
              "-Djava.net.preferIPv4Stack=true", *OPENS, *EXPORTS]


class LabError(RuntimeError):
    """A step of the lab failed; the message says which and where its log is."""


def free_ports(n: int) -> list[int]:
    socks, ports = [], []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
        ports.append(s.getsockname()[1])
    for s in socks:
        s.close()
    return ports


def stop_process(popen: subprocess.Popen[bytes], grace: float = 20.0) -> None:
    """SIGCONT (a stopped process cannot exit), SIGTERM, and SIGKILL after `grace` seconds; by pid only."""
    if popen.poll() is not None:
        return
    popen.send_signal(signal.SIGCONT)
    popen.send_signal(signal.SIGTERM)
    try:
        popen.wait(grace)
    except subprocess.TimeoutExpired:
        popen.kill()
        popen.wait(10)


def _mvn(pom: Path, props: dict[str, str], goals: list[str], log: Path) -> None:
    log.parent.mkdir(parents=True, exist_ok=True)
    cmd = ["mvn", "-B", "-q", *os.environ.get("LAB_MVN_OPTS", "").split(), "-f", str(pom),
           f"-Dmaven.repo.local={M2}", *(f"-D{k}={v}" for k, v in props.items()), *goals]
    with log.open("w") as out:
        if subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT).returncode != 0:
            first = next((ln for ln in log.read_text().splitlines() if "ERROR" in ln), "")
            raise LabError(f"Maven failed for {pom.name} {props} (see {log}): {first}")


@dataclass(frozen=True)
class Jars:
    hadoop_libs: Path
    hadoop_lab: Path
    flink_libs: Path
    flink_job: Path
    webapps: Path
    flink_layout_libs: Path | None = None
    """log4j2's JSON template layout jar, for `--flink-layout json` only."""
    flink_traces_libs: Path | None = None
    """Flink's Slf4jTraceReporter jar, for scenarios that log checkpoint spans, where Maven serves it."""
    span_detail: bool = False
    """This Flink's core knows ``traces.checkpoint.span-detail-level`` (children spans per task and subtask)."""
    event_reporter: bool = False
    """The reporter jar also holds the Slf4j event reporter (``events.reporter.*``: checkpoint and job events)."""
    flink_kafka_libs: Path | None = None
    """The Kafka connector and client, for the scenarios whose job writes through an exactly-once Kafka sink."""


KAFKA_CONNECTORS = {"1.20": "3.4.0-1.20", "2.1": "5.0.0-2.1", "2.2": "5.0.0-2.2"}
"""flink-connector-kafka's release for each Flink line (Maven Central)."""


def kafka_connector(flink: str) -> str | None:
    """The connector release for a Flink version: its line's, or the newest of its major line (the lab's job is
    compiled against it whatever the scenario, so a line without a release of its own borrows the nearest)."""
    line = ".".join(flink.split(".")[:2])
    same_major = [v for k, v in KAFKA_CONNECTORS.items() if k.split(".")[0] == line.split(".")[0]]
    return KAFKA_CONNECTORS.get(line) or (same_major[-1] if same_major else None)


def fetch(hadoop: str, flink: str, flink_layout: str = "text", traces: bool = False, kafka: bool = False) -> Jars:
    """Resolve and build everything once per version pair (a `.complete` marker makes reruns instant); the JSON
    template layout jar only when the Flink logs are to be JSON, the Kafka connector only for a Kafka sink."""
    release = kafka_connector(flink)
    if release is None and kafka:
        raise LabError(f"no flink-connector-kafka release known for Flink {flink} "
                       f"(known: {', '.join(KAFKA_CONNECTORS)})")
    connector = {"kafka.connector.version": release or list(KAFKA_CONNECTORS.values())[-1]}
    if flink_layout not in FLINK_LAYOUTS:
        raise LabError(f"unknown Flink log layout {flink_layout!r} (one of {', '.join(FLINK_LAYOUTS)})")
    hlibs = CACHE / f"hadoop-{hadoop}" / "libs"
    flibs = CACHE / f"flink-{flink}-hadoop-{hadoop}" / "libs"
    layout_libs = CACHE / f"flink-{flink}-hadoop-{hadoop}" / "layout-json"
    hbuild = CACHE / "build" / f"hdfs-{hadoop}"
    fbuild = CACHE / "build" / f"flink-{flink}-hadoop-{hadoop}"
    for libs, build, pom, props in (
        (hlibs, hbuild, HERE / "hdfs" / "pom.xml", {"hadoop.version": hadoop}),
        (flibs, fbuild, HERE / "flink" / "pom.xml", {"hadoop.version": hadoop, "flink.version": flink, **connector}),
    ):
        if not (libs / ".complete").exists():
            _mvn(pom, props, ["dependency:copy-dependencies", "-DincludeScope=runtime", f"-DoutputDirectory={libs}"],
                 CACHE / "log" / f"mvn-{libs.parent.name}.log")
            (libs / ".complete").touch()
        jar = build / f"lab-{pom.parent.name}-1.jar"
        sources = list((pom.parent / "src").rglob("*.java"))
        if not jar.exists() or any(s.stat().st_mtime > jar.stat().st_mtime for s in sources):
            _mvn(pom, props, ["package"], CACHE / "log" / f"mvn-build-{build.name}.log")
    if flink_layout == "json" and not (layout_libs / ".complete").exists():
        _mvn(HERE / "flink" / "pom.xml", {"hadoop.version": hadoop, "flink.version": flink,
                                          "lab.layout.libs": str(layout_libs)},
             ["dependency:copy@layout-json"], CACHE / "log" / f"mvn-layout-json-{flibs.parent.name}.log")
        (layout_libs / ".complete").touch()
    traces_libs = CACHE / f"flink-{flink}-hadoop-{hadoop}" / "traces"
    if traces and not (traces_libs / ".complete").exists():
        try:
            _mvn(HERE / "flink" / "pom.xml", {"hadoop.version": hadoop, "flink.version": flink,
                                              "lab.traces.libs": str(traces_libs)},
                 ["dependency:copy@traces"], CACHE / "log" / f"mvn-traces-{flibs.parent.name}.log")
            (traces_libs / ".complete").touch()
        except LabError:
            print(f"lab: flink-metrics-slf4j {flink} is not served: this run logs no checkpoint spans", flush=True)
    kafka_libs = CACHE / f"flink-{flink}-hadoop-{hadoop}" / "kafka"
    if kafka and not (kafka_libs / ".complete").exists():
        _mvn(HERE / "flink" / "pom.xml", {"hadoop.version": hadoop, "flink.version": flink, **connector,
                                          "lab.kafka.libs": str(kafka_libs)},
             ["dependency:copy-dependencies@kafka"], CACHE / "log" / f"mvn-kafka-{flibs.parent.name}.log")
        (kafka_libs / ".complete").touch()
    webapps = HOME / "webapps"  # a real directory: Jetty prints its canonical path
    for name in ("hdfs", "datanode", "secondary", "journal"):
        web = webapps / "webapps" / name / "WEB-INF"
        web.mkdir(parents=True, exist_ok=True)  # also creates HOME
        (web / "web.xml").write_text('<?xml version="1.0"?>\n<web-app version="3.0"/>\n')
    link = HOME / "jars"
    if not link.is_symlink() or link.resolve() != CACHE.resolve():
        link.unlink(missing_ok=True)
        link.symlink_to(CACHE.resolve())
    seen = lambda p: link / p.relative_to(CACHE)  # noqa: E731
    has_traces = traces and (traces_libs / ".complete").exists()
    return Jars(seen(hlibs), seen(hbuild / "lab-hdfs-1.jar"), seen(flibs), seen(fbuild / "lab-flink-1.jar"), webapps,
                seen(layout_libs) if flink_layout == "json" else None,
                seen(traces_libs) if has_traces else None,
                _holds(flibs, "flink-core-", "org/apache/flink/configuration/TraceOptions$CheckpointSpanDetailLevel.class"),
                has_traces and _holds(traces_libs, "flink-metrics-slf4j-",
                                      "org/apache/flink/events/slf4j/Slf4jEventReporterFactory.class"),
                seen(kafka_libs) if kafka else None)


def _holds(libs: Path, jar_prefix: str, entry: str) -> bool:
    """Whether the jar of ``libs`` named ``jar_prefix…`` has the class ``entry``: what this Flink can report is read
    from its own jars, not from a table of versions."""
    for jar in libs.glob(f"{jar_prefix}*.jar"):
        with zipfile.ZipFile(jar) as z:
            if entry in z.namelist():
                return True
    return False


@dataclass
class Proc:
    name: str
    host: str
    log: Path
    popen: subprocess.Popen[bytes]
    addr: str | None = None

    @property
    def pid(self) -> int:
        return self.popen.pid

    def alive(self) -> bool:
        return self.popen.poll() is None


@dataclass
class Cluster:
    """Starts and stops the daemons of one run under `run_dir` (conf/, data/, logs/)."""

    jars: Jars
    run_dir: Path
    flink_major: int
    flink_extra: dict[str, object] = field(default_factory=dict)
    flink_layout: str = "text"
    """The Flink daemons' (and client's) log file layout: "text" (stock PatternLayout) or "json" (ECS template)."""
    hosts_dn: tuple[str, ...] = ("lab-dn1", "lab-dn2", "lab-dn3")
    flink_hdfs: dict[str, object] = field(default_factory=dict)
    """hdfs-site settings of Flink's HDFS client only (e.g. its replication)."""
    nn_extra: dict[str, object] = field(default_factory=dict)
    """hdfs-site settings of the NameNode only (a scenario's low limit)."""
    dn_common: dict[str, object] = field(default_factory=dict)
    """hdfs-site settings of every DataNode (a scenario's small volumes)."""
    checkpoints: str | None = None
    """Where Flink checkpoints (an `s3://` URI); None: the lab's HDFS."""
    flink_plugins: Path | None = None
    """Flink's plugins directory (FLINK_PLUGINS_DIR: the S3 filesystem's jar), or None."""
    taskmanagers: int = 1
    """TaskManagers started (``lab-tm``, then ``lab-tm2``…), each its own JVM, RPC and data port."""
    procs: list[Proc] = field(default_factory=list)
    ports: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.logs = self.run_dir / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)
        names = ["nn", "nn_http", "jm_rpc", "rest", "blob", "tm_rpc", "tm_data"]
        names += [f"tm{i}_{p}" for i in range(1, self.taskmanagers) for p in ("rpc", "data")]
        for i in range(len(self.hosts_dn)):
            names += [f"dn{i}_xfer", f"dn{i}_http", f"dn{i}_ipc"]
        self.ports = dict(zip(names, free_ports(len(names)), strict=True))
        self.hdfs_uri = f"hdfs://127.0.0.1:{self.ports['nn']}"
        self.control = {h: self.run_dir / "control" / h for h in self.hosts_dn}
        self.dn_extra: dict[str, dict[str, object]] = {}
        """Each DataNode's own settings (beyond the ports and data directory), kept for a reconfiguration."""

    # ---- HDFS ----
    def _hadoop_conf(self, name: str, extra: dict[str, object]) -> Path:
        conf = self.run_dir / "conf" / name
        conf.mkdir(parents=True, exist_ok=True)
        (conf / "core-site.xml").write_text(xml({"fs.defaultFS": self.hdfs_uri,
                                                  "hadoop.tmp.dir": self.run_dir / "data" / name / "tmp"}))
        common = {
            "dfs.replication": 3,
            "dfs.namenode.rpc-address": f"127.0.0.1:{self.ports['nn']}",
            "dfs.namenode.http-address": f"127.0.0.1:{self.ports['nn_http']}",
            "dfs.permissions.enabled": "false",
            "dfs.namenode.datanode.registration.ip-hostname-check": "false",
            "dfs.namenode.safemode.extension": 0,
            "dfs.heartbeat.interval": 1,
            # Thresholds low enough that the real code reports what it does.
            "dfs.namenode.write-lock-reporting-threshold-ms": 200,
            "dfs.namenode.read-lock-reporting-threshold-ms": 200,
            "dfs.datanode.lock-reporting-threshold-ms": 100,
            "dfs.lock.suppress.warning.interval": "1s",
            "dfs.datanode.slow.io.warning.threshold.ms": 300,
            "dfs.client.slow.io.warning.threshold.ms": 300,
            "dfs.datanode.directoryscan.interval": 20,
        }
        (conf / "hdfs-site.xml").write_text(xml({**common, **extra}))
        (conf / "log4j.properties").write_text(HADOOP_LOG4J)
        return conf

    def _hadoop_java(self, conf: Path, log_name: str, main: str, args: list[str], heap: str,
                     extra: list[str] = ()) -> list[str]:
        cp = ":".join([str(conf), str(self.jars.webapps), f"{self.jars.hadoop_libs}/*", str(self.jars.hadoop_lab)])
        return ["java", f"-Xmx{heap}", *JVM_COMMON, f"-Dhadoop.log.dir={self.logs}", f"-Dhadoop.log.file={log_name}",
                f"-Dhadoop.id.str={USER}", "-Dhadoop.root.logger=INFO,RFA", "-Dhadoop.security.logger=INFO,NullAppender",
                f"-Dlog4j.configuration=file:{conf}/log4j.properties", *extra, "-cp", cp, main, *args]

    def _spawn(self, name: str, host: str, log: Path, cmd: list[str], env: dict[str, str] | None = None,
               addr: str | None = None) -> Proc:
        out = (self.logs / f"{name}.out").open("ab")
        popen = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                 env={**os.environ, **(env or {})}, start_new_session=True, cwd=self.run_dir)
        proc = Proc(name, host, log, popen, addr)
        self.procs.append(proc)
        return proc

    def start_hdfs(self) -> None:
        self.excludes.parent.mkdir(parents=True, exist_ok=True)
        self.excludes.write_text("")  # read by `dfsadmin -refreshNodes`: the decommission scenario's hosts
        nn_conf = self._hadoop_conf("lab-nn", {"dfs.namenode.name.dir": self.run_dir / "data" / "lab-nn" / "name",
                                               "dfs.hosts.exclude": self.excludes, **self.nn_extra})
        fmt = self._hadoop_java(nn_conf, "namenode-format.log", "org.apache.hadoop.hdfs.server.namenode.NameNode",
                                ["-format", "-nonInteractive", "-force"], "256m")
        with (self.logs / "namenode-format.out").open("wb") as out:
            if subprocess.run(fmt, stdout=out, stderr=subprocess.STDOUT, cwd=self.run_dir).returncode != 0:
                raise LabError(f"NameNode -format failed (see {self.logs}/namenode-format.out)")
        nn_log = self.logs / f"hadoop-{USER}-namenode-lab-nn.log"
        self._spawn("namenode", "lab-nn", nn_log, self._hadoop_java(
            nn_conf, nn_log.name, "org.apache.hadoop.hdfs.server.namenode.NameNode", [], "512m", ["-Dproc_namenode"]))
        wait_for(nn_log, re.compile(r"IPC Server listener on \d+: starting|IPC Server Responder: starting"), 90,
                 self.procs[-1])
        for host in self.hosts_dn:
            self.start_datanode(host)
        for p in self.datanodes():
            wait_for(p.log, re.compile(r"Successfully sent block report"), 120, p)

    def start_datanode(self, host: str, extra: dict[str, object] | None = None, heap: str = "384m",
                       fixed_heap: bool = False) -> Proc:
        """One DataNode (again, after `stop_datanode`: same ports, data dir and log file, which it appends to);
        `fixed_heap` sets -Xms too, for a replica map in the millions that would otherwise grow the heap in steps."""
        i = self.hosts_dn.index(host)
        conf = self._datanode_conf(host, extra or {})
        log = self.logs / f"hadoop-{USER}-datanode-{host}.log"
        heap_args = [f"-Xms{heap}"] if fixed_heap else []
        return self._spawn(f"datanode-{host}", host, log, self._hadoop_java(
            conf, log.name, "lab.LabDataNode", [], heap,
            [*heap_args, "-Dproc_datanode", f"-Dlab.control={self.control[host]}"]),
            addr=f"127.0.0.1:{self.ports[f'dn{i}_xfer']}")

    def _datanode_conf(self, host: str, extra: dict[str, object]) -> Path:
        i = self.hosts_dn.index(host)
        self.dn_extra[host] = extra
        return self._hadoop_conf(host, {
            "dfs.datanode.data.dir": self.run_dir / "data" / host / "data",
            "dfs.datanode.address": f"127.0.0.1:{self.ports[f'dn{i}_xfer']}",
            "dfs.datanode.http.address": f"127.0.0.1:{self.ports[f'dn{i}_http']}",
            "dfs.datanode.ipc.address": f"127.0.0.1:{self.ports[f'dn{i}_ipc']}",
            **self.dn_common, **extra,
        })

    def reconfigure_datanode(self, host: str, changes: dict[str, object | None]) -> None:
        """Changes a running DataNode's settings the way an operator does: its hdfs-site.xml rewritten, then Hadoop's
        own `dfsadmin -reconfig datanode … start` (None: back to the default); returns once its log shows every
        change."""
        extra = {k: v for k, v in {**self.dn_extra.get(host, {}), **changes}.items() if v is not None}
        self._datanode_conf(host, extra)
        proc = next(p for p in self.datanodes() if p.host == host)
        at = proc.log.stat().st_size
        self.dfsadmin("-reconfig", "datanode", f"127.0.0.1:{self.ports[f'dn{self.hosts_dn.index(host)}_ipc']}",
                      "start")
        for key in changes:
            wait_for(proc.log, re.compile(rf"Change property:? {re.escape(key)}"), 30, proc, at)

    def stop_datanode(self, host: str) -> None:
        """Stops one DataNode by pid (SIGTERM: its shutdown hook runs) and forgets it, so it can start again."""
        proc = next(p for p in self.datanodes() if p.host == host)
        stop_process(proc.popen, 60)
        self.procs.remove(proc)

    def dfsadmin(self, *args: str) -> None:
        """Hadoop's own `hdfs dfsadmin` (the DFSAdmin class of the lab's jars) against the lab's NameNode."""
        self._tool("dfsadmin", "org.apache.hadoop.hdfs.tools.DFSAdmin", args)

    def fs(self, *args: str) -> str:
        """Hadoop's own `hdfs dfs` (FsShell) against the lab's NameNode; its standard output."""
        return self._tool("fsshell", "org.apache.hadoop.fs.FsShell", args)

    def _tool(self, name: str, main: str, args: tuple[str, ...]) -> str:
        """One of Hadoop's command-line tools with the NameNode's configuration: its output kept in `<name>.out`."""
        cmd = self._hadoop_java(self.run_dir / "conf" / "lab-nn", f"{name}.log", main, list(args), "128m")
        done = subprocess.run(cmd, capture_output=True, cwd=self.run_dir, timeout=120)
        with (self.logs / f"{name}.out").open("ab") as out:
            out.write(done.stdout + done.stderr)
        if done.returncode:
            raise LabError(f"{name} {' '.join(args)} failed (see {self.logs}/{name}.out)")
        return done.stdout.decode("utf-8", "replace")

    @property
    def excludes(self) -> Path:
        """The NameNode's ``dfs.hosts.exclude`` file: hosts listed there are decommissioned on ``-refreshNodes``."""
        return self.run_dir / "conf" / "excludes"

    def namenode(self) -> Proc:
        return next(p for p in self.procs if p.name == "namenode")

    def datanodes(self) -> list[Proc]:
        return [p for p in self.procs if p.name.startswith("datanode-")]

    # ---- Flink ----
    def _flink_conf(self) -> Path:
        conf = self.run_dir / "conf" / "flink"
        conf.mkdir(parents=True, exist_ok=True)
        hconf = self._hadoop_conf("flink-hadoop", self.flink_hdfs)
        ckpt = self.checkpoints or f"{self.hdfs_uri}/flink/checkpoints"
        settings = {
            "jobmanager.rpc.address": "127.0.0.1", "jobmanager.rpc.port": self.ports["jm_rpc"],
            "jobmanager.bind-host": "127.0.0.1", "rest.address": "127.0.0.1", "rest.bind-address": "127.0.0.1",
            "rest.port": self.ports["rest"], "blob.server.port": self.ports["blob"],
            "taskmanager.host": "127.0.0.1", "taskmanager.bind-host": "127.0.0.1",
            "taskmanager.rpc.port": self.ports["tm_rpc"], "taskmanager.data.port": self.ports["tm_data"],
            "jobmanager.memory.process.size": "900m", "taskmanager.memory.process.size": "1200m",
            "taskmanager.numberOfTaskSlots": 2, "parallelism.default": 1,
            "execution.checkpointing.interval": "5s", "execution.checkpointing.timeout": "10s",
            "execution.checkpointing.tolerable-failed-checkpoints": 0,
            "state.backend.type": "hashmap", "fs.hdfs.hadoopconf": hconf,
            ("state.checkpoints.dir" if self.flink_major < 2 else "execution.checkpointing.dir"): ckpt,
            "restart-strategy.type": "fixed-delay", "restart-strategy.fixed-delay.attempts": 1000,
            "restart-strategy.fixed-delay.delay": "2s", "heartbeat.timeout": 60000,
            **self.flink_extra,
        }
        # a scenario's None removes a setting (a checkpoint timeout the job sets in its code instead)
        (conf / "config.yaml").write_text("".join(f"{k}: {v}\n" for k, v in settings.items() if v is not None))
        (conf / "log4j.properties").write_text(flink_log4j(self.flink_layout))
        (conf / "log4j-cli.properties").write_text(flink_cli_log4j(self.flink_layout))
        (conf / "log4j-console.properties").write_text(flink_cli_log4j(self.flink_layout))
        self.flink_env = {"FLINK_CONF_DIR": str(conf), "HADOOP_CONF_DIR": str(hconf)}
        if self.flink_plugins is not None:
            self.flink_env["FLINK_PLUGINS_DIR"] = str(self.flink_plugins)
        return conf

    def _flink_cp(self) -> str:
        """Flink's libs, the JSON template layout's jar only when the logs are to be JSON, the trace reporter's only
        when a scenario logs checkpoint spans, the Kafka connector's only when its job writes to Kafka."""
        cp = [f"{self.jars.flink_libs}/*"]
        if self.flink_layout == "json":
            if self.jars.flink_layout_libs is None:
                raise LabError("--flink-layout json needs the layout jar: fetch(..., flink_layout='json')")
            cp.append(f"{self.jars.flink_layout_libs}/*")
        if self.jars.flink_traces_libs is not None:
            cp.append(f"{self.jars.flink_traces_libs}/*")
        if self.jars.flink_kafka_libs is not None:
            cp.append(f"{self.jars.flink_kafka_libs}/*")
        return ":".join(cp)

    def _flink_java(self, conf: Path, log: Path, heap_args: list[str], main: str, args: list[str],
                    log4j: str = "log4j.properties") -> list[str]:
        return ["java", *heap_args, *JVM_COMMON, "-Dlog4j2.isThreadContextMapInheritable=true",
                f"-Dlog.file={log}", f"-Dlog4j.configuration=file:{conf}/{log4j}",
                f"-Dlog4j.configurationFile=file:{conf}/{log4j}", "-cp", self._flink_cp(), main, *args]

    def _resource_params(self, conf: Path, which: str) -> tuple[list[str], list[str]]:
        """What flink-daemon.sh asks BashJavaUtils for: JVM memory flags and the dynamic memory settings."""
        cmd = ["java", *JVM_COMMON, f"-Dlog.file={self.logs}/bash-java-utils.log",
               f"-Dlog4j.configurationFile=file:{conf}/log4j-cli.properties", "-cp", self._flink_cp(),
               "org.apache.flink.runtime.util.bash.BashJavaUtils", which, "--configDir", str(conf)]
        out = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **self.flink_env},
                             cwd=self.run_dir)
        results = [ln.split(":", 1)[1] for ln in out.stdout.splitlines() if ln.startswith("BASH_JAVA_UTILS_EXEC_RESULT:")]
        if out.returncode != 0 or len(results) < 2:
            raise LabError(f"BashJavaUtils {which} failed: {out.stdout[-500:]} {out.stderr[-500:]}")
        return results[0].split(), results[1].split()

    def start_flink(self) -> None:
        conf = self._flink_conf()
        jm_log = self.logs / f"flink-{USER}-standalonesession-0-lab-jm.log"
        jvm, dyn = self._resource_params(conf, "GET_JM_RESOURCE_PARAMS")
        self._spawn("jobmanager", "lab-jm", jm_log, self._flink_java(
            conf, jm_log, jvm, "org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint",
            ["--configDir", str(conf), "--executionMode", "cluster", *dyn]), self.flink_env)
        jvm, dyn = self._resource_params(conf, "GET_TM_RESOURCE_PARAMS")
        for i in range(self.taskmanagers):
            host = "lab-tm" if i == 0 else f"lab-tm{i + 1}"
            tm_log = self.logs / f"flink-{USER}-taskexecutor-{i}-{host}.log"
            own = [] if i == 0 else ["-D", f"taskmanager.rpc.port={self.ports[f'tm{i}_rpc']}",
                                     "-D", f"taskmanager.data.port={self.ports[f'tm{i}_data']}"]
            self._spawn("taskmanager" if i == 0 else f"taskmanager-{i + 1}", host, tm_log, self._flink_java(
                conf, tm_log, jvm, "org.apache.flink.runtime.taskexecutor.TaskManagerRunner",
                ["--configDir", str(conf), *dyn, *own]), self.flink_env)
        for tm in self.procs[-self.taskmanagers:]:
            wait_for(tm.log, re.compile(r"Successful registration at resource manager"), 120, tm)

    def submit(self, trigger: Path, args: tuple[str, ...] = ()) -> str:
        """`flink run -d` through the real CliFrontend; returns the job id it printed."""
        conf = Path(self.flink_env["FLINK_CONF_DIR"])
        log = self.logs / f"flink-{USER}-client-lab-jm.log"
        cmd = self._flink_java(conf, log, ["-Xmx256m"], "org.apache.flink.client.cli.CliFrontend",
                               ["run", "-d", "-c", "lab.LabJob", str(self.jars.flink_job), "--trigger", str(trigger),
                                "--slow", str(trigger.with_name("slow-trigger")), *args],
                               "log4j-cli.properties")
        out = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **self.flink_env}, timeout=180,
                             cwd=self.run_dir)
        m = re.search(r"JobID ([0-9a-f]{32})", out.stdout)
        if not m:
            raise LabError(f"flink run did not submit the job: {out.stdout[-800:]} {out.stderr[-800:]}")
        return m.group(1)

    def jobmanager(self) -> Proc:
        return next(p for p in self.procs if p.name == "jobmanager")

    # ---- stopping ----
    def stop(self) -> None:
        """SIGCONT (a paused process cannot die cleanly), SIGTERM, then SIGKILL; Flink first, then HDFS."""
        for p in reversed(self.procs):
            if p.alive():
                os.kill(p.pid, signal.SIGCONT)
                os.kill(p.pid, signal.SIGTERM)
        deadline = time.monotonic() + 20
        for p in reversed(self.procs):
            try:
                p.popen.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.kill(p.pid, signal.SIGKILL)
                p.popen.wait(10)


def wait_for(log: Path, pattern: re.Pattern[str], timeout: float, proc: Proc | None = None,
             after: int = 0) -> re.Match[str]:
    """Block until `pattern` appears in `log` past byte offset `after`; fail early when `proc` died."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if log.exists():
            with log.open("rb") as f:
                f.seek(after)
                m = pattern.search(f.read().decode("utf-8", "replace"))
            if m:
                return m
        if proc is not None and not proc.alive():
            raise LabError(f"{proc.name} exited (code {proc.popen.returncode}); see {log} and its .out")
        time.sleep(0.2)
    raise LabError(f"timed out after {timeout:.0f}s waiting for /{pattern.pattern}/ in {log}")
