"""Every shipper config sends records as large as the raw topics accept, and no larger (topics/ is the truth).

A shipper limit below the topic's silently loses long stack traces at the shipper; one above it gets records
refused by Kafka. Records between the worker's own limits and the topic's reach the worker and are dead-lettered.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.shippers.live import SHIPPERS, require

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
    s3 = (SHIPPERS / "rsyslog-s3.conf").read_text()
    assert [int(n) for n in re.findall(r"message\.max\.bytes=(\d+)", s3)] == [topic_limit()]


ACCESS_DIR = "s3-access"
"""The folder a log bucket is synced into, in every config (``S3_ACCESS_LOG_DIR`` where the shipper reads the
environment)."""


def test_access_logs_go_to_their_topic_one_record_per_line() -> None:
    """Each file shipper reads the synced access-log folder into ``logs.s3`` and joins no lines (an access log has no
    continuation lines: a join would glue requests together), keyed by host and file like the rest."""
    [filebeat] = [i for i in load("filebeat.yml")["filebeat.inputs"] if ACCESS_DIR in i["paths"][0]]
    assert filebeat["processors"][0]["add_fields"]["fields"]["kafka_topic"] == "logs.s3" and "parsers" not in filebeat
    fluent = load("fluent-bit.yaml")["pipeline"]
    [tail] = [i for i in fluent["inputs"] if ACCESS_DIR in i["path"]]
    assert "multiline.parser" not in tail
    assert [o["topics"] for o in fluent["outputs"] if o["match"] == tail["tag"]] == ["logs.s3"]
    vector = load("vector.yaml")
    [(name, source)] = [(n, src) for n, src in vector["sources"].items() if ACCESS_DIR in src["include"][0]]
    assert "multiline" not in source
    [keyed] = [t for t, spec in vector["transforms"].items() if spec["inputs"] == [name]]
    assert [sink["topic"] for sink in vector["sinks"].values() if sink["inputs"] == [keyed]] == ["logs.s3"]
    rsyslog = (SHIPPERS / "rsyslog-s3.conf").read_text()
    assert "S3_ACCESS_LOG_DIR" in rsyslog and "KAFKA_TOPIC_S3" in rsyslog and "startmsg.regex" not in rsyslog


def test_rsyslog_reads_both_files_as_written(tmp_path: Path) -> None:
    """rsyslogd itself (``-N1``) accepts rsyslog.conf with rsyslog-s3.conf included after it."""
    require("rsyslogd")
    (tmp_path / "work").mkdir()
    conf = tmp_path / "rsyslog.conf"
    conf.write_text(f'global(workDirectory="{tmp_path / "work"}")\n'
                    f'include(file="{SHIPPERS / "rsyslog.conf"}")\ninclude(file="{SHIPPERS / "rsyslog-s3.conf"}")\n')
    env = {"PATH": os.environ["PATH"], "KAFKA_BROKERS": "127.0.0.1:9", "KAFKA_TOPIC_FLINK": "logs.flink",
           "KAFKA_TOPIC_HDFS": "logs.hdfs", "KAFKA_TOPIC_S3": "logs.s3", "CLUSTER_NAME": "c",
           "FLINK_LOG_DIR": str(tmp_path), "HADOOP_LOG_DIR": str(tmp_path), "S3_ACCESS_LOG_DIR": str(tmp_path),
           "RSYSLOG_FORMAT": "correlator_json"}
    done = subprocess.run(["rsyslogd", "-N1", "-f", str(conf)], env=env, capture_output=True, text=True, timeout=30,
                          check=False)
    assert done.returncode == 0, done.stdout + done.stderr


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
    assert header and ("logs.flink" in text or "logs.hdfs" in text or "logs.s3" in text), name
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
