"""Scenario logs written live, the way daemons write them, and real shipper processes that tail them.

A shipper reads what a daemon appends as it appears, so across hosts the topics fill roughly in log-time order. The
writer appends the scenario's lines to per-host files (or pipes) in merged time order, compressed into a few
seconds; each shipper process is started by the test and stopped by its own pid.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from correlator.adapters.shipping import line_time_ms
from correlator.core.ingest.sources import facts_from_path, input_side
from correlator.core.ingest.timestamps import LocalClock

ROOT = Path(__file__).resolve().parents[2]
SHIPPERS = ROOT / "deploy" / "shippers"


@dataclass(frozen=True, slots=True)
class LogSource:
    path: Path
    host: str
    side: str
    """``flink`` or ``hdfs``: which raw topic it belongs on."""


def sources_of(scenario: Path) -> list[LogSource]:
    """Every log file of a scenario, with the host its name or directory names (``tm01/taskmanager-gc.log``)."""
    out = []
    for path in sorted(p for p in scenario.rglob("*") if p.is_file()):
        facts = facts_from_path(str(path.relative_to(scenario)))
        assert facts.host, f"{path.name} does not name its host"
        family = facts.family or ("flink" if path.name.startswith("flink-") else "hdfs")
        out.append(LogSource(path, facts.host, input_side(family, facts.role)))
    return out


def merged(sources: list[LogSource]) -> list[tuple[int, int, bytes]]:
    """(log time, source index, line with its newline) of every line, in the order a live cluster writes them."""
    clock = LocalClock("UTC")
    rows: list[tuple[int, int, int, bytes]] = []
    for index, source in enumerate(sources):
        last = 0
        for number, line in enumerate(source.path.read_bytes().splitlines(keepends=True)):
            last = line_time_ms(line.rstrip(b"\n"), clock) or last
            rows.append((last, index, number, line))
    rows.sort()
    return [(ms, index, line) for ms, index, _, line in rows]


def write_live(lines: list[tuple[int, int, bytes]], sinks: list[IO[bytes]], seconds: float) -> None:
    """Append each line to its sink at its log time, the whole span compressed into ``seconds``."""
    first, last = lines[0][0], lines[-1][0]
    span = max(1, last - first)
    started = time.monotonic()
    for ms, index, line in lines:
        due = started + (ms - first) / span * seconds
        pause = due - time.monotonic()
        if pause > 0.02:
            for sink in sinks:
                sink.flush()
            time.sleep(pause)
        sinks[index].write(line)
    for sink in sinks:
        sink.flush()


class Processes:
    """Processes a test started, each stopped by its pid (SIGTERM, then SIGKILL), never by name."""

    def __init__(self) -> None:
        self.started: list[subprocess.Popen[bytes]] = []

    def start(self, args: list[str], *, env: dict[str, str], log: Path, stdin: int | None = None) -> subprocess.Popen[bytes]:
        with log.open("ab") as out:
            proc = subprocess.Popen(args, env=env, stdout=out, stderr=subprocess.STDOUT, stdin=stdin)
        self.started.append(proc)
        return proc

    def stop_all(self) -> None:
        for proc in self.started:
            stop_pid(proc.pid, proc.wait)


def stop_pid(pid: int, wait: Callable[[float], object]) -> None:
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        wait(15)
    except subprocess.TimeoutExpired:
        os.kill(pid, signal.SIGKILL)
        wait(10)


def require(*tools: str) -> None:
    missing = [t for t in tools if shutil.which(t) is None]
    assert not missing, f"{', '.join(missing)} missing: .ci/run installs them (apt-get install rsyslog rsyslog-kafka kcat)"


@dataclass
class Rsyslog:
    """One ``rsyslogd`` of one host: its own config (deploy/shippers/rsyslog.conf included), pid file and work dir."""

    host: str
    home: Path
    env: dict[str, str]

    @property
    def flink_dir(self) -> Path:
        return self.home / "flink"

    @property
    def hadoop_dir(self) -> Path:
        return self.home / "hadoop"

    @property
    def pid_file(self) -> Path:
        return self.home / "rsyslogd.pid"

    def prepare(self) -> None:
        for d in (self.flink_dir, self.hadoop_dir, self.home / "work"):
            d.mkdir(parents=True, exist_ok=True)
        (self.home / "rsyslog.conf").write_text(
            f'global(workDirectory="{self.home / "work"}" localHostname="{self.host}")\n'
            f'include(file="{SHIPPERS / "rsyslog.conf"}")\n'
        )

    def instance_env(self) -> dict[str, str]:
        return {**self.env, "FLINK_LOG_DIR": str(self.flink_dir), "HADOOP_LOG_DIR": str(self.hadoop_dir)}

    def check_config(self) -> None:
        result = subprocess.run(["rsyslogd", "-N1", "-f", str(self.home / "rsyslog.conf")], env=self.instance_env(),
                                capture_output=True, text=True, timeout=30, check=False)
        assert result.returncode == 0, result.stdout + result.stderr

    def start(self, processes: Processes) -> None:
        args = ["rsyslogd", "-n", "-f", str(self.home / "rsyslog.conf"), "-i", str(self.pid_file)]
        processes.start(args, env=self.instance_env(), log=self.home / "rsyslogd.out")

    def log_path(self, source: LogSource) -> Path:
        return (self.flink_dir if source.side == "flink" else self.hadoop_dir) / source.path.name


def rsyslog_fleet(sources: list[LogSource], workdir: Path, env: dict[str, str]) -> Iterator[Rsyslog]:
    """One rsyslogd per host of the scenario, as each machine of a cluster runs its own."""
    for host in sorted({s.host for s in sources}):
        instance = Rsyslog(host, workdir / f"rsyslog-{host}", env)
        instance.prepare()
        yield instance
