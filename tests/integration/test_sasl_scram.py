"""Kafka security passed through for real: every client of correlator against a broker that demands SCRAM."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from correlator.cli import cli
from correlator.simulate import generate
from tests.support.services import KafkaBroker
from tests.support.worker import Stack, WorkerProcess

pytestmark = [pytest.mark.integration, pytest.mark.slow]
USER, PASSWORD = "correlator", "scram-secret-7"


@pytest.fixture(scope="module")
def scram_broker() -> Iterator[KafkaBroker]:
    broker = KafkaBroker(scram=(USER, PASSWORD))
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()


def _security(password: str) -> dict[str, str]:
    return {
        "CORRELATOR_SECURITY_PROTOCOL": "SASL_PLAINTEXT",
        "CORRELATOR_SASL_MECHANISM": "SCRAM-SHA-256",
        "CORRELATOR_SASL_USERNAME": USER,
        "CORRELATOR_SASL_PASSWORD": password,
    }


class TestScram:
    def test_wrong_password_is_a_one_line_failure_without_the_secret(self, scram_broker: KafkaBroker) -> None:
        """A rejected login names the cause in one line and never prints the password."""
        env = {"CORRELATOR_BOOTSTRAP_SERVERS": scram_broker.bootstrap, **_security("wrong-password-1")}
        result = CliRunner().invoke(cli, ["topics", "apply"], env=env)
        assert result.exit_code == 1
        assert result.output.count("\n") == 1 and "SASL authentication error" in result.output
        assert "wrong-password-1" not in result.output

    def test_worker_replay_and_verdicts_over_scram(self, scram_broker: KafkaBroker, unique: str, tmp_path: Path) -> None:
        """topics apply, replay (confluent-kafka) and the worker (Faust/aiokafka) all authenticate; the verdict arrives."""
        stack = Stack(scram_broker.bootstrap, unique, tmp_path, extra=_security(PASSWORD))
        stack.apply_topics()
        logs = tmp_path / "seed"
        generate("seed", logs)
        worker = WorkerProcess(stack).start()
        try:
            stack.replay(logs)
            result = stack.cli("verdicts", "--from-beginning", "--format", "json", "--max", "1",
                               "--idle-timeout", "60")
            assert result.returncode == 0, result.stderr
            assert '"HDFS_DIRECTORY_SCAN"' in result.stdout
            assert PASSWORD not in worker.log_path.read_text(errors="replace")
        finally:
            worker.stop()
