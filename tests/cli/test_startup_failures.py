"""Every start-up failure of a Kafka command is one line on stderr and exit 1, within 15 s."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.services import ROOT, free_port
from tests.support.worker import Stack

GOLDEN = ROOT / "tests" / "golden" / "scenarios" / "seed"


def correlator(*args: str, env: dict[str, str] | None = None) -> tuple[int, list[str], float]:
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "correlator.cli", *args], capture_output=True, text=True,
                          timeout=60, cwd=ROOT, env=env)
    return done.returncode, done.stderr.strip().splitlines(), time.monotonic() - started


def test_replay_to_an_unreachable_broker() -> None:
    port = free_port()
    code, err, took = correlator("replay", "--bootstrap-servers", f"127.0.0.1:{port}", str(GOLDEN))
    assert code == 1 and took < 15
    assert len(err) == 1 and err[0].startswith(f"correlator: cannot reach Kafka at 127.0.0.1:{port}")


def test_worker_with_an_unreachable_broker() -> None:
    port = free_port()
    code, err, took = correlator("worker", "--bootstrap-servers", f"127.0.0.1:{port}", "--web-port", str(free_port()))
    assert code == 1 and took < 15
    assert len(err) == 1 and err[0].startswith(f"correlator: cannot reach Kafka at 127.0.0.1:{port}")


def test_worker_with_its_web_port_taken() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, err, _ = correlator("worker", "--bootstrap-servers", "127.0.0.1:1", "--web-port", str(port))
    assert code == 1
    assert err == [f"correlator: web port 127.0.0.1:{port} is already in use (set CORRELATOR_WEB_PORT)"]


@pytest.mark.integration
class TestTopicsMissing:
    def test_worker_and_replay_name_the_missing_topics(self, kafka_bootstrap: str, unique: str, tmp_path: Path) -> None:
        stack = Stack(kafka_bootstrap, unique, tmp_path)
        env = {**stack.env, "CORRELATOR_WEB_PORT": str(free_port())}
        for args in (("worker",), ("replay", str(GOLDEN))):
            code, err, took = correlator(*args, env=env)
            assert code == 1 and took < 15 and len(err) == 1, err
            assert "do not exist" in err[0] and stack.topic("logs_flink") in err[0] and "topics apply" in err[0]
        from confluent_kafka.admin import AdminClient

        assert stack.topic("logs_flink") not in AdminClient({"bootstrap.servers": kafka_bootstrap}).list_topics(
            timeout=10).topics, "a client auto-created a topic"
