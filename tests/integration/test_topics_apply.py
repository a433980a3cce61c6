"""``correlator topics apply`` against the real broker."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from confluent_kafka.admin import AdminClient, ConfigResource

from correlator.cli import cli

pytestmark = pytest.mark.integration
TOPICS = Path(__file__).resolve().parents[2] / "src" / "correlator" / "topics"


@pytest.fixture
def topics_dir(tmp_path: Path, unique: str) -> Path:
    """The project's topic definitions with names made unique to this test."""
    out = tmp_path / "topics"
    out.mkdir()
    for path in TOPICS.glob("*.yaml"):
        spec = yaml.safe_load(path.read_text())
        spec["name"] = f"{spec['name']}.{unique}"
        (out / path.name).write_text(yaml.safe_dump(spec))
    return out


def _run(*args: str, env: dict[str, str]) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["topics", "apply", *args], env=env)
    return result.exit_code, result.output


class TestTopicsApply:
    def test_creates_then_reports_no_change(self, kafka_bootstrap: str, topics_dir: Path, unique: str) -> None:
        """The first run creates every topic with its configs, the second changes nothing."""
        env = {"CORRELATOR_BOOTSTRAP_SERVERS": kafka_bootstrap, "CORRELATOR_TOPICS_DIR": str(topics_dir)}
        code, out = _run("--dry-run", env=env)
        defined = len(list(topics_dir.glob("*.yaml")))
        assert code == 0 and out.count("plan  create") == defined == 8
        admin = AdminClient({"bootstrap.servers": kafka_bootstrap})
        assert not [t for t in admin.list_topics(timeout=10).topics if t.endswith(unique)]

        code, out = _run(env=env)
        assert code == 0, out
        assert f"applied {defined} change(s)" in out
        md = admin.list_topics(timeout=10).topics
        assert len(md[f"correlator.events.{unique}"].partitions) == 6
        configs = admin.describe_configs([ConfigResource(ConfigResource.Type.TOPIC, f"correlator.verdicts.{unique}")])
        (future,) = configs.values()
        assert future.result(timeout=10)["retention.ms"].value == "2592000000"

        code, out = _run(env=env)
        assert (code, out.strip()) == (0, f"no change: {defined} topics match their definitions")

    def test_aligns_a_drifted_config_and_grows_partitions(
        self, kafka_bootstrap: str, topics_dir: Path, unique: str
    ) -> None:
        """A changed definition is applied in place: more partitions, a new retention."""
        env = {"CORRELATOR_BOOTSTRAP_SERVERS": kafka_bootstrap, "CORRELATOR_TOPICS_DIR": str(topics_dir)}
        assert _run(env=env)[0] == 0
        path = topics_dir / "correlator.deadletter.yaml"
        spec = yaml.safe_load(path.read_text())
        spec["partitions"] = 2
        spec["configs"]["retention.ms"] = "3600000"
        path.write_text(yaml.safe_dump(spec))
        code, out = _run(env=env)
        assert code == 0, out
        assert "add_partitions" in out and "retention.ms: 1209600000 -> 3600000" in out
        assert _run(env=env)[1].startswith("no change")

    def test_unreachable_broker_is_a_one_line_runtime_failure(self, tmp_path: Path) -> None:
        shutil.copytree(TOPICS, tmp_path / "t")
        result = CliRunner().invoke(
            cli,
            ["topics", "apply", "--bootstrap-servers", "127.0.0.1:1", "--topics-dir", str(tmp_path / "t")],
        )
        assert result.exit_code == 1
        assert result.output.count("\n") == 1 and "cannot read topics from 127.0.0.1:1" in result.output
