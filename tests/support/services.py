"""The real Kafka broker and redis-server the integration tests talk to, driven through the project's own scripts."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from correlator.demo import free_port

ROOT = Path(__file__).resolve().parents[2]
LOCAL = ROOT / "deploy" / "local"


@dataclass
class _ScriptService:
    script: str
    port: int
    env_name: str
    state_dir: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="correlator-svc-")))

    def _run(self, action: str, extra_env: dict[str, str] | None = None) -> None:
        env = {
            **os.environ,
            f"{self.env_name}_PORT": str(self.port),
            f"{self.env_name}_STATE_DIR": str(self.state_dir),
            "PYTHON": sys.executable,
            **(extra_env or {}),
        }
        subprocess.run(["bash", str(LOCAL / self.script), action], env=env, check=True, timeout=180)

    extra_env: dict[str, str] = field(default_factory=dict)

    def start(self) -> None:
        self._run("start", self.extra_env)

    def stop(self) -> None:
        self._run("stop", self.extra_env)


class KafkaBroker(_ScriptService):
    def __init__(self, port: int | None = None, scram: tuple[str, str] | None = None) -> None:
        """``scram``: (user, password) makes the client port SASL_PLAINTEXT with SCRAM-SHA-256 for that user."""
        super().__init__("kafka.sh", port or free_port(3), "KAFKA")
        if scram:
            self.extra_env = {"KAFKA_SCRAM_USER": scram[0], "KAFKA_SCRAM_PASSWORD": scram[1]}

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"


class RedisServer(_ScriptService):
    def __init__(self, port: int | None = None) -> None:
        super().__init__("redis.sh", port or free_port(), "REDIS")

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"
