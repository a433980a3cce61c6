"""Run the real ``correlator worker`` as a process against the real broker, with topics private to one test."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
from confluent_kafka import Consumer, TopicPartition

from correlator.bench.proc import children
from tests.support.services import ROOT, free_port

CLI = [sys.executable, "-m", "correlator.cli"]


@dataclass
class Stack:
    """Topic names, consumer group and timings of one test's streaming stack, as ``CORRELATOR_*`` variables."""

    bootstrap: str
    suffix: str
    workdir: Path
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def env(self) -> dict[str, str]:
        return {
            **os.environ,
            "CORRELATOR_BOOTSTRAP_SERVERS": self.bootstrap,
            "CORRELATOR_TOPIC_LOGS_FLINK": f"logs.flink.{self.suffix}",
            "CORRELATOR_TOPIC_LOGS_HDFS": f"logs.hdfs.{self.suffix}",
            "CORRELATOR_TOPIC_LOGS_S3": f"logs.s3.{self.suffix}",
            "CORRELATOR_TOPIC_EVENTS": f"correlator.events.{self.suffix}",
            "CORRELATOR_TOPIC_VERDICTS": f"correlator.verdicts.{self.suffix}",
            "CORRELATOR_TOPIC_RISKS": f"correlator.risks.{self.suffix}",
            "CORRELATOR_TOPIC_FEEDBACK": f"correlator.feedback.{self.suffix}",
            "CORRELATOR_TOPIC_DEADLETTER": f"correlator.deadletter.{self.suffix}",
            "CORRELATOR_WORKER_ID": f"correlator-{self.suffix}",
            "CORRELATOR_IDLE_TIMEOUT_MS": "4000",
            "CORRELATOR_MULTILINE_IDLE_MS": "1000",
            "CORRELATOR_LOG_LEVEL": "WARNING",
            **self.extra,
        }

    def topic(self, name: str) -> str:
        return self.env[f"CORRELATOR_TOPIC_{name.upper()}"]

    def cli(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*CLI, *args], env=self.env, capture_output=True, text=True, timeout=timeout, cwd=ROOT, check=False
        )

    def apply_topics(self) -> None:
        result = self.cli("topics", "apply")
        assert result.returncode == 0, result.stderr

    def replay(self, *paths: Path | str, cluster: str | None = None, speed: float = 0) -> None:
        args = ["replay", *map(str, paths)]
        if cluster:
            args += ["--cluster", cluster]
        if speed:
            args += ["--speed", str(speed)]
        result = self.cli(*args)
        assert result.returncode == 0, result.stderr

    def produce_raw(self, topic: str, records: Iterable[tuple[bytes | None, bytes]]) -> None:
        from confluent_kafka import Producer

        producer = Producer({"bootstrap.servers": self.bootstrap, "message.max.bytes": 12_000_000})
        for key, value in records:
            producer.produce(self.topic(topic), key=key, value=value)
        assert producer.flush(30) == 0

    def read(self, topic: str, *, until: int, timeout_s: float = 90) -> list[dict[str, Any]]:
        """Every record of a topic from the beginning, waiting until ``until`` records or the timeout; on the
        verdict topic ``until`` counts distinct verdicts (a revision is one more record of a verdict already seen)."""
        consumer = Consumer(
            {"bootstrap.servers": self.bootstrap, "group.id": f"reader-{time.monotonic_ns()}",
             "auto.offset.reset": "earliest", "enable.auto.commit": False}
        )
        consumer.subscribe([self.topic(topic)])
        out: list[dict[str, Any]] = []
        deadline = time.monotonic() + timeout_s
        try:
            def count() -> int:
                return len({r.get("verdict_id") for r in out}) if topic == "verdicts" else len(out)

            while count() < until and time.monotonic() < deadline:
                msg = consumer.poll(0.5)
                if msg is not None and msg.error() is None:
                    out.append(orjson.loads(msg.value()))
            # anything beyond what was waited for (a duplicate) is read too, briefly
            settle = time.monotonic() + 2
            while time.monotonic() < settle:
                msg = consumer.poll(0.3)
                if msg is not None and msg.error() is None:
                    out.append(orjson.loads(msg.value()))
        finally:
            consumer.close()
        return out

    def committed_lag(self, topic: str, group: str) -> int:
        consumer = Consumer({"bootstrap.servers": self.bootstrap, "group.id": group})
        try:
            md = consumer.list_topics(self.topic(topic), timeout=10)
            tps = [TopicPartition(self.topic(topic), p) for p in md.topics[self.topic(topic)].partitions]
            lag = 0
            for tp in consumer.committed(tps, timeout=10):
                low, high = consumer.get_watermark_offsets(tp, timeout=10)
                lag += high - (tp.offset if tp.offset >= 0 else low)
            return lag
        finally:
            consumer.close()


class WorkerProcess:
    """One ``correlator worker`` process with its own web port and data directory."""

    def __init__(self, stack: Stack, name: str = "w1", command: list[str] | None = None,
                 env: dict[str, str] | None = None) -> None:
        self.stack = stack
        self.command = command or [*CLI, "worker"]
        self.extra_env = env or {}
        self.port = free_port()
        self.log_path = stack.workdir / f"worker-{name}.log"
        self.data_dir = stack.workdir / f"data-{name}"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, ready_timeout_s: float = 90) -> WorkerProcess:
        env = {**self.stack.env, "CORRELATOR_WEB_PORT": str(self.port), "CORRELATOR_DATA_DIR": str(self.data_dir),
               **self.extra_env}
        log = self.log_path.open("ab")
        self.process = subprocess.Popen(self.command, env=env, stdout=log, stderr=log, cwd=ROOT)
        deadline = time.monotonic() + ready_timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"worker exited with {self.process.returncode}: {self.tail()}")
            if self.health().get("ready"):
                return self
            time.sleep(0.5)
        raise AssertionError(f"worker not ready within {ready_timeout_s}s: {self.tail()}")

    def health(self) -> dict[str, Any]:
        """The /healthz body, ready (200) or not (503); empty while nothing answers."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/healthz", timeout=2) as response:
                return orjson.loads(response.read())
        except urllib.error.HTTPError as exc:
            try:
                return orjson.loads(exc.read())
            except Exception:
                return {}
        except Exception:
            return {}

    def metrics(self) -> str:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/metrics", timeout=5) as response:
            return response.read().decode()

    def children(self) -> list[int]:
        """Pids of the worker's child processes (its raw-ingest process)."""
        return children(self.process.pid) if self.process is not None else []

    def raw_ingest_children(self) -> list[int]:
        """The children that run raw ingest (multiprocessing's spawned ones, not its resource tracker)."""
        found = []
        for pid in self.children():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as handle:
                    if b"spawn_main" in handle.read():
                        found.append(pid)
            except OSError:  # exited while listed
                continue
        return found

    def kill(self) -> None:
        """``kill -9``: no drain, no commit."""
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(30)

    def stop(self, timeout_s: float = 60) -> int:
        """SIGTERM: the worker drains and commits, then exits."""
        if self.process is None:
            return 0
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        return self.process.returncode

    def tail(self, lines: int = 15) -> str:
        if not self.log_path.exists():
            return ""
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])


def latest(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What a consumer keeps of the verdict topic: the highest revision of each verdict, in first-seen order."""
    best: dict[str, dict[str, Any]] = {}
    for r in records:
        held = best.get(r["verdict_id"])
        if held is None or int(r.get("revision") or 0) > int(held.get("revision") or 0):
            best[r["verdict_id"]] = r
    return list(best.values())


def duplicates(records: list[dict[str, Any]]) -> int:
    """Records delivered more than once: the same revision of the same verdict again."""
    return len(records) - len({(r["verdict_id"], int(r.get("revision") or 0)) for r in records})
