"""The local Kafka and Redis scripts: real services that come up, answer, and fail fast with one line when they can't."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import uuid

import pytest
import redis
from confluent_kafka import Consumer, Producer

from tests.support.services import LOCAL, KafkaBroker, RedisServer, free_port

pytestmark = pytest.mark.integration


class TestKafkaBroker:
    def test_produce_and_consume_round_trip(self, kafka_bootstrap: str) -> None:
        """A record produced to the real broker comes back with its key, value and headers."""
        topic = f"roundtrip-{uuid.uuid4().hex[:8]}"
        producer = Producer({"bootstrap.servers": kafka_bootstrap})
        producer.produce(topic, key=b"dn02/datanode.log", value=b"\xff not utf-8", headers={"cluster": b"prod"})
        assert producer.flush(15) == 0
        consumer = Consumer(
            {"bootstrap.servers": kafka_bootstrap, "group.id": topic, "auto.offset.reset": "earliest"}
        )
        consumer.subscribe([topic])
        try:
            deadline = time.monotonic() + 30
            msg = None
            while msg is None and time.monotonic() < deadline:
                candidate = consumer.poll(0.5)
                if candidate is not None and candidate.error() is None:
                    msg = candidate
            assert msg is not None, "nothing consumed within 30 s"
            assert (msg.key(), msg.value(), msg.headers()) == (
                b"dn02/datanode.log",
                b"\xff not utf-8",
                [("cluster", b"prod")],
            )
        finally:
            consumer.close()


def _script(name: str, action: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(LOCAL / name), action],
        env={**os.environ, "PYTHON": sys.executable, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


class TestKafkaStartFailures:
    def test_port_taken_fails_fast_with_one_line(self, tmp_path) -> None:
        """A broker port already in use is refused before anything starts."""
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            port = taken.getsockname()[1]
            started = time.monotonic()
            result = _script("kafka.sh", "start", KAFKA_PORT=str(port), KAFKA_STATE_DIR=str(tmp_path / "k"))
        assert result.returncode == 1
        assert time.monotonic() - started < 5
        assert result.stderr.strip().splitlines() == [f"kafka: port {port} on 127.0.0.1 is already in use"]
        assert not (tmp_path / "k" / "kafka.pid").exists()

    def test_java_missing_fails_fast(self, tmp_path) -> None:
        """Without java on PATH the script says so in one line."""
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir()
        for tool in ("bash", "dirname", "cat", "rm", "mkdir", "seq", "sleep", "grep", "tail", "head", "cut"):
            found = shutil.which(tool)
            if found:
                (bin_dir / tool).symlink_to(found)
        result = _script("kafka.sh", "start", PATH=str(bin_dir), KAFKA_PORT=str(free_port(2)))
        assert result.returncode == 1
        assert result.stderr.strip() == "kafka: Java is not installed (JDK 17 runs the broker)"

    def test_maven_offline_without_jars_fails_with_reason(self, tmp_path) -> None:
        """An unresolvable broker version in offline mode fails with a one-line reason and starts nothing."""
        state = tmp_path / "k"
        result = _script(
            "kafka.sh",
            "start",
            KAFKA_VERSION="3.9.99-missing",
            KAFKA_MVN_OPTS="-o",
            KAFKA_PORT=str(free_port(2)),
            KAFKA_STATE_DIR=str(state),
        )
        assert result.returncode == 1
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("kafka: Maven could not resolve org.apache.kafka:kafka_2.13:3.9.99")
        assert not (state / "kafka.pid").exists()

    def test_second_broker_on_running_state_dir_is_refused(self) -> None:
        """Starting twice from one state directory is refused; stop is idempotent."""
        broker = KafkaBroker()
        broker.start()
        try:
            again = _script(
                "kafka.sh", "start", KAFKA_PORT=str(broker.port), KAFKA_STATE_DIR=str(broker.state_dir)
            )
            assert again.returncode == 1 and "already runs" in again.stderr
        finally:
            broker.stop()
        pid_file = broker.state_dir / "kafka.pid"
        assert not pid_file.exists()
        assert _script("kafka.sh", "stop", KAFKA_PORT=str(broker.port), KAFKA_STATE_DIR=str(broker.state_dir)).returncode == 0


class TestRedisServer:
    def test_round_trip(self, redis_url: str) -> None:
        """A value written to the real redis-server reads back, with its TTL."""
        client = redis.Redis.from_url(redis_url)
        key = f"test:{uuid.uuid4().hex}"
        client.set(key, b"\x00bytes\xff", ex=60)
        assert client.get(key) == b"\x00bytes\xff"
        assert 0 < client.ttl(key) <= 60
        client.close()

    def test_stop_then_start_again_on_same_port(self) -> None:
        """A private server stops cleanly (port freed) and starts again on the same port."""
        server = RedisServer()
        server.start()
        server.stop()
        with socket.socket() as s:
            s.bind(("127.0.0.1", server.port))
        server.start()
        try:
            assert redis.Redis.from_url(server.url).ping()
        finally:
            server.stop()

    def test_port_taken_fails_fast(self, tmp_path) -> None:
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            port = taken.getsockname()[1]
            result = _script("redis.sh", "start", REDIS_PORT=str(port), REDIS_STATE_DIR=str(tmp_path))
        assert result.returncode == 1
        assert result.stderr.strip() == f"redis: port {port} on 127.0.0.1 is already in use"


class TestStateAcrossRestarts:
    def test_kafka_keeps_topics_and_records_until_reset(self) -> None:
        """stop + start keeps topics, records and the cluster id; only an explicit reset formats a new cluster."""
        from confluent_kafka.admin import AdminClient

        broker = KafkaBroker()
        topic = f"kept-{uuid.uuid4().hex[:8]}"
        broker.start()
        try:
            producer = Producer({"bootstrap.servers": broker.bootstrap})
            producer.produce(topic, value=b"survives")
            assert producer.flush(15) == 0
            cluster_id = AdminClient({"bootstrap.servers": broker.bootstrap}).list_topics(timeout=10).cluster_id
            broker.stop()
            broker.start()
            metadata = AdminClient({"bootstrap.servers": broker.bootstrap}).list_topics(timeout=10)
            assert topic in metadata.topics and metadata.cluster_id == cluster_id
            consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": topic, "auto.offset.reset": "earliest"})
            consumer.subscribe([topic])
            deadline, got = time.monotonic() + 30, None
            while got is None and time.monotonic() < deadline:
                msg = consumer.poll(0.5)
                if msg is not None and msg.error() is None:
                    got = msg.value()
            consumer.close()
            assert got == b"survives"
            refused = _script("kafka.sh", "reset", KAFKA_PORT=str(broker.port), KAFKA_STATE_DIR=str(broker.state_dir))
            assert refused.returncode == 1 and "stop it first" in refused.stderr
        finally:
            broker.stop()
        assert _script("kafka.sh", "reset", KAFKA_PORT=str(broker.port), KAFKA_STATE_DIR=str(broker.state_dir)).returncode == 0
        assert not broker.state_dir.exists()
        broker.start()
        try:
            metadata = AdminClient({"bootstrap.servers": broker.bootstrap}).list_topics(timeout=10)
            assert topic not in metadata.topics and metadata.cluster_id != cluster_id
        finally:
            broker.stop()

    def test_redis_with_appendonly_keeps_data_across_restart(self, tmp_path) -> None:
        """REDIS_APPENDONLY=yes (what `make up` uses) keeps keys across stop/start; the default keeps nothing."""
        for appendonly, kept in (("yes", True), ("no", False)):
            port = free_port()
            env = {"REDIS_PORT": str(port), "REDIS_STATE_DIR": str(tmp_path / appendonly), "REDIS_APPENDONLY": appendonly}
            assert _script("redis.sh", "start", **env).returncode == 0
            try:
                client = redis.Redis(port=port)
                client.set("incident", b"kept")
                client.close()
                assert _script("redis.sh", "stop", **env).returncode == 0
                assert _script("redis.sh", "start", **env).returncode == 0
                client = redis.Redis(port=port)
                assert (client.get("incident") == b"kept") is kept
                client.close()
            finally:
                _script("redis.sh", "stop", **env)
