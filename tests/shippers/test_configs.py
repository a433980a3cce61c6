"""Every shipper config sends records as large as the raw topics accept, and no larger (topics/ is the truth).

A shipper limit below the topic's silently loses long stack traces at the shipper; one above it gets records
refused by Kafka. Records between the worker's own limits and the topic's reach the worker and are dead-lettered.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from tests.shippers.live import SHIPPERS

TOPICS = Path(__file__).resolve().parents[2] / "src" / "correlator" / "topics"


def topic_limit() -> int:
    limits = {int(yaml.safe_load((TOPICS / f"{name}.yaml").read_text())["configs"]["max.message.bytes"])
              for name in ("logs.flink", "logs.hdfs")}
    assert len(limits) == 1, "the raw topics disagree on max.message.bytes"
    return limits.pop()


def load(name: str) -> dict:
    return yaml.safe_load((SHIPPERS / name).read_text())


def sizes(text: str) -> int:
    """``10485760`` or Fluent Bit's ``10M``."""
    m = re.fullmatch(r"(\d+)([KM]?)", str(text).strip())
    assert m, text
    return int(m[1]) * {"": 1, "K": 1024, "M": 1024 * 1024}[m[2]]


def test_filebeat() -> None:
    config = load("filebeat.yml")
    assert config["output.kafka"]["max_message_bytes"] == topic_limit()
    for entry in config["filebeat.inputs"]:
        if "parsers" in entry:
            assert entry["message_max_bytes"] == topic_limit(), entry["id"]


def test_fluent_bit() -> None:
    pipeline = load("fluent-bit.yaml")["pipeline"]
    for output in pipeline["outputs"]:
        assert sizes(output["rdkafka.message.max.bytes"]) == topic_limit()
    for entry in pipeline["inputs"]:
        assert sizes(entry["buffer_max_size"]) == topic_limit(), entry["tag"]


def test_vector() -> None:
    config = load("vector.yaml")
    for sink in config["sinks"].values():
        assert sizes(sink["librdkafka_options"]["message.max.bytes"]) == topic_limit()
    for source in config["sources"].values():
        assert source["max_line_bytes"] == topic_limit()


def test_rsyslog() -> None:
    text = (SHIPPERS / "rsyslog.conf").read_text()
    assert [int(n) for n in re.findall(r"message\.max\.bytes=(\d+)", text)] == [topic_limit()] * 2
    assert re.search(r'maxMessageSize="(\d+)"', text)[1] == str(topic_limit())  # type: ignore[index]


@pytest.mark.parametrize("doc", ["README.md"])
def test_kcat_recipes(doc: str) -> None:
    recipes = [line for line in (SHIPPERS / doc).read_text().splitlines()
               if line.startswith("    ") and "kcat -P" in line]
    assert recipes
    for line in recipes:
        assert f"message.max.bytes={topic_limit()}" in line, line


@pytest.mark.parametrize("name", sorted(p.name for p in SHIPPERS.iterdir() if p.name != "README.md"))
def test_every_config_says_what_it_sends(name: str) -> None:
    """Each file opens with a comment naming the topics it feeds and what a record holds."""
    header = []
    for line in (SHIPPERS / name).read_text().splitlines():
        if not line.startswith("#"):
            break
        header.append(line)
    text = "\n".join(header)
    assert header and ("logs.flink" in text or "logs.hdfs" in text), name
    assert re.search(r"\b(keyed|key)\b", text, re.I), f"{name} does not say how records are keyed"


def test_log4j2_appender_keys_by_host_and_file() -> None:
    """The Flink appender's key expands to ``host:path``, which names both."""
    from correlator.core.ingest.sources import source_of_key

    props = dict(line.split(" = ", 1) for line in (SHIPPERS / "flink-log4j2-kafka.properties").read_text().splitlines()
                 if " = " in line and not line.startswith("#"))
    assert props["appender.kafka.type"] == "Kafka" and props["appender.kafka.topic"] == "logs.flink"
    key = props["appender.kafka.key"].replace("${hostName}", "tm-1.example.com").replace(
        "${sys:log.file}", "/opt/flink/log/flink-flink-taskexecutor-0-tm-1.example.com.log")
    facts = source_of_key(key)
    assert (facts.host, facts.file) == ("tm-1.example.com", "/opt/flink/log/flink-flink-taskexecutor-0-tm-1.example.com.log")
    assert props["appender.kafka.size.value"] == str(topic_limit())
