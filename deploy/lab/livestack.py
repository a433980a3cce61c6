"""What every live lab run shares: one Kafka broker and one correlator worker (``Stack``), a Debian rsyslogd per
scenario shipping its log files as they are written (``rsyslog_conf``, ``Rsyslog``), and a reader of what the worker
publishes (``Verdicts``); `live.py` runs the HDFS scenarios on them, `live_s3.py` the object-store ones.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cluster import HOME, ROOT, USER, LabError, free_ports, stop_process

RUN = HOME / "live"
PY = Path(sys.executable)
VERDICT_WAIT = 150.0
# A lab run is short and its daemons stop right after the recovery: wait 60 s of event time for late evidence (a
# paused DataNode logs its pause when it resumes, 30 s on) and let a silent log stop holding decisions after 20 s.
LOOKAHEAD_MS = 60_000
IDLE_TIMEOUT_MS = 20_000
RSYSLOGD = os.environ.get("RSYSLOGD", "/usr/sbin/rsyslogd")
ACCESS_TOPIC = "logs.s3"
# The daemons' stock file names, and the host each one names (what a shipper on that host would report).
FILES = {
    f"hadoop-{USER}-namenode-lab-nn.log": ("lab-nn", "logs.hdfs"),
    **{f"hadoop-{USER}-datanode-{h}.log": (h, "logs.hdfs") for h in ("lab-dn1", "lab-dn2", "lab-dn3")},
    f"flink-{USER}-standalonesession-0-lab-jm.log": ("lab-jm", "logs.flink"),
    f"flink-{USER}-taskexecutor-0-lab-tm.log": ("lab-tm", "logs.flink"),
    f"flink-{USER}-taskexecutor-1-lab-tm2.log": ("lab-tm2", "logs.flink"),  # a scenario's second TaskManager
    f"flink-{USER}-client-lab-jm.log": ("lab-jm", "logs.flink"),
}


def rsyslog_conf(logs: Path, work: Path, broker: str, cluster: str, topics: dict[str, str],
                 hosts: Callable[[str], bool] = lambda _host: True,
                 files: dict[str, tuple[str, str]] | None = None) -> str:
    """imfile per log of ``files`` (default: every daemon's), one JSON envelope per record; only the logs of the
    ``hosts`` it accepts. A daemon's record starts with a timestamp and its stack lines join it with their real
    newlines (imfile's default writes a joined record's line breaks as the two characters ``\\n``, and the cause
    chain under its first line would be lost to the parser); an access log (``logs.s3``) is one record per line, as
    deploy/shippers/rsyslog-s3.conf ships it."""
    out = [
        f'global(workDirectory="{work}" maxMessageSize="4m" parser.escapeControlCharactersOnReceive="off")',
        'module(load="imfile" mode="inotify")',
        'module(load="omkafka")',
        'template(name="envelope" type="list" option.jsonf="on") {',
        '  property(outname="message" name="msg" format="jsonf")',
        '  property(outname="host" name="$!host" format="jsonf")',
        '  property(outname="file" name="$!metadata!filename" format="jsonf")',
        '  property(outname="cluster" name="$!cluster" format="jsonf")',
        '}',
        'template(name="key" type="string" string="%$!host%:%$!metadata!filename%")',
    ]
    for i, (name, (host, topic)) in enumerate(sorted((FILES if files is None else files).items())):
        if not hosts(host):
            continue
        out += [
            f'ruleset(name="f{i}") {{',
            f'  set $!host = "{host}";',
            f'  set $!cluster = "{cluster}";',
            f'  action(type="omkafka" broker=["{broker}"] topic="{topics[topic]}" template="envelope" key="key"',
            '         dynaKey="on" confParam=["message.max.bytes=10000000", "linger.ms=50"])',
            '}',
            f'input(type="imfile" file="{logs / name}" tag="{host}" ruleset="f{i}" addMetadata="on"',
            *(() if topic == ACCESS_TOPIC else (
                '      startmsg.regex="^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}" readTimeout="1"',
                '      escapeLF="off"',)),
            '      freshStartTail="off")',
        ]
    return "\n".join(out) + "\n"


@dataclass
class Rsyslog:
    """Our own rsyslogd: foreground (-n), own config and pid file; stopped by its pid."""

    dir: Path
    popen: subprocess.Popen[bytes] | None = None

    def start(self, conf: str) -> None:
        work = self.dir / "work"
        work.mkdir(parents=True, exist_ok=True)
        cfg = self.dir / "rsyslog.conf"
        cfg.write_text(conf)
        check = subprocess.run([RSYSLOGD, "-N1", "-f", str(cfg)], capture_output=True, text=True)
        if check.returncode != 0:
            raise LabError(f"rsyslogd rejects {cfg}: {check.stderr.strip() or check.stdout.strip()}")
        with (self.dir / "rsyslogd.out").open("ab") as out:  # the child keeps its own descriptor
            self.popen = subprocess.Popen([RSYSLOGD, "-n", "-f", str(cfg), "-i", str(self.dir / "rsyslogd.pid")],
                                          stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                          start_new_session=True)

    def stop(self) -> None:
        if self.popen:
            stop_process(self.popen)


@dataclass
class Stack:
    """Kafka and the correlator worker for one live run."""

    dir: Path
    kafka_port: int = 0
    worker: subprocess.Popen[bytes] | None = None
    web_port: int = 0
    suffix: str = field(default_factory=lambda: f"lab{int(time.time())}")

    @property
    def broker(self) -> str:
        return f"127.0.0.1:{self.kafka_port}"

    def topics(self) -> dict[str, str]:
        return {n: f"{n}.{self.suffix}" for n in ("logs.flink", "logs.hdfs", "logs.s3", "correlator.events",
                                                 "correlator.verdicts", "correlator.risks", "correlator.deadletter")}

    def env(self) -> dict[str, str]:
        t = self.topics()
        return {**os.environ, "CORRELATOR_BOOTSTRAP_SERVERS": self.broker,
                "CORRELATOR_TOPIC_LOGS_FLINK": t["logs.flink"], "CORRELATOR_TOPIC_LOGS_HDFS": t["logs.hdfs"],
                "CORRELATOR_TOPIC_LOGS_S3": t["logs.s3"],
                "CORRELATOR_TOPIC_EVENTS": t["correlator.events"],
                "CORRELATOR_TOPIC_VERDICTS": t["correlator.verdicts"],
                "CORRELATOR_TOPIC_RISKS": t["correlator.risks"],
                "CORRELATOR_TOPIC_DEADLETTER": t["correlator.deadletter"],
                "CORRELATOR_WORKER_ID": f"correlator-{self.suffix}", "CORRELATOR_LOOKAHEAD_MS": str(LOOKAHEAD_MS),
                "CORRELATOR_IDLE_TIMEOUT_MS": str(IDLE_TIMEOUT_MS),
                "CORRELATOR_WEB_PORT": str(self.web_port), "CORRELATOR_DATA_DIR": str(self.dir / "worker-data"),
                "CORRELATOR_LOG_LEVEL": "WARNING"}

    def _kafka(self, action: str) -> None:
        env = {**os.environ, "KAFKA_PORT": str(self.kafka_port), "KAFKA_STATE_DIR": str(self.dir / "kafka"),
               "PYTHON": str(PY)}
        if subprocess.run(["bash", str(ROOT / "deploy" / "local" / "kafka.sh"), action], env=env).returncode != 0:
            raise LabError(f"kafka.sh {action} failed")

    def start(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        from correlator.demo import free_port

        self.kafka_port = free_port(3)  # kafka.sh puts the controller on the next port
        self.web_port = free_ports(1)[0]
        self._kafka("start")
        cli = [str(PY), "-m", "correlator.cli"]
        if subprocess.run([*cli, "topics", "apply"], env=self.env(), cwd=ROOT, capture_output=True).returncode:
            raise LabError("correlator topics apply failed")
        log = (self.dir / "worker.log").open("ab")
        self.worker = subprocess.Popen([*cli, "worker"], env=self.env(), cwd=ROOT, stdout=log, stderr=log,
                                       start_new_session=True)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.worker.poll() is not None:
                raise LabError(f"the worker exited ({self.worker.returncode}); see {self.dir / 'worker.log'}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.web_port}/healthz", timeout=2) as r:
                    if json.loads(r.read()).get("ready"):
                        return
            except OSError:
                pass
            time.sleep(0.5)
        raise LabError("the worker was not ready within 120 s")

    def stop(self) -> None:
        if self.worker:
            stop_process(self.worker, 60)
        if self.kafka_port:
            self._kafka("stop")


class Verdicts:
    """Reads the verdict and risk topics as the worker writes them, noting when each record arrived."""

    def __init__(self, stack: Stack) -> None:
        from confluent_kafka import Consumer

        self.c = Consumer({"bootstrap.servers": stack.broker, "group.id": f"lab-reader-{stack.suffix}",
                           "auto.offset.reset": "earliest", "enable.auto.commit": False})
        self.c.subscribe([stack.topics()["correlator.verdicts"], stack.topics()["correlator.risks"]])
        self.seen: list[tuple[float, dict[str, Any]]] = []
        self.risks: list[dict[str, Any]] = []

    def poll(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            msg = self.c.poll(0.5)
            if msg is not None and msg.error() is None:
                record = json.loads(msg.value())
                if record.get("schema") == "correlator.risk/v1":
                    self.risks.append(record)
                else:
                    self.seen.append((time.time(), record))

    def of(self, cluster: str) -> list[tuple[float, dict[str, Any]]]:
        return [(t, v) for t, v in self.seen if v.get("cluster") == cluster]

    def risks_of(self, cluster: str) -> list[dict[str, Any]]:
        return [r for r in self.risks if r.get("cluster") == cluster]

    def close(self) -> None:
        self.c.close()


def run_live(names: list[str], one: Callable[[str, Stack, Verdicts], dict[str, Any]],
             failed: Callable[[str, str], dict[str, Any]], say: Callable[[str], None]) -> list[dict[str, Any]]:
    """One broker and one worker for the run, each scenario in turn (``one`` gives its row); a scenario the lab could
    not run is a row of its own (``failed``) and the others go on; everything is stopped by pid whatever happens."""
    t0 = time.monotonic()
    stack = Stack(RUN)
    rows: list[dict[str, Any]] = []
    try:
        stack.start()
        say(f"Kafka on {stack.broker} and the worker are up ({time.monotonic() - t0:.0f}s)")
        reader = Verdicts(stack)
        for name in names:
            try:
                rows.append(one(name, stack, reader))
            except LabError as e:
                say(f"{name}: FAILED: {e}")
                rows.append(failed(name, str(e)))
        reader.close()
    finally:
        stack.stop()
    return rows


def latest(got: list[tuple[float, dict[str, Any]]]) -> list[tuple[float, dict[str, Any]]]:
    """The highest revision of each verdict, as a consumer keeps them."""
    best: dict[str, tuple[float, dict[str, Any]]] = {}
    for t, v in got:
        known = best.get(v["verdict_id"])
        if known is None or int(v.get("revision") or 0) > int(known[1].get("revision") or 0):
            best[v["verdict_id"]] = (t, v)
    return list(best.values())


def shutil_rm(path: Path) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)


def datetime_of(iso: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()
