"""rsyslog for real: one ``rsyslogd`` per host with deploy/shippers/rsyslog.conf tails a scenario's logs (Flink,
Hadoop and GC) as they are written and ships them through omkafka; the real worker's verdicts equal ``analyze`` on the
same files, codes and hosts alike, in each of the config's three record formats."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from correlator.core.ingest.envelopes import decode
from tests.shippers.live import merged, require, rsyslog_fleet, sources_of, write_live
from tests.shippers.verdicts import GOLDEN, offline, raw_records, streamed
from tests.support.worker import Stack, WorkerProcess

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.mark.parametrize(
    ("scenario", "fmt"),
    [("recurring", "correlator_json"), ("recurring", "correlator_raw"), ("recurring", "correlator_jsonmesg"),
     ("taskmanager-gc", "correlator_json")],
)
def test_rsyslog_ships_a_scenario(
    scenario: str, fmt: str, stack: Stack, workers: list[WorkerProcess], processes, tmp_path: Path
) -> None:
    """The recurring scenario's 4 failures in every format; a TaskManager GC log (its pause is the cause) as JSON."""
    require("rsyslogd")
    logs = GOLDEN / scenario
    cluster = "default" if fmt == "correlator_raw" else "lab-rsyslog"  # raw lines carry no cluster
    expected = offline(logs, cluster)
    assert len(expected) >= (4 if scenario == "recurring" else 1)
    sources = sources_of(logs)
    env = {
        **stack.env,
        "KAFKA_BROKERS": stack.bootstrap,
        "KAFKA_TOPIC_FLINK": stack.topic("logs_flink"),
        "KAFKA_TOPIC_HDFS": stack.topic("logs_hdfs"),
        "CLUSTER_NAME": "lab-rsyslog",
        "RSYSLOG_FORMAT": fmt,
    }
    fleet = {r.host: r for r in rsyslog_fleet(sources, tmp_path, env)}
    for instance in fleet.values():
        instance.check_config()
    workers.append(WorkerProcess(stack).start())
    for instance in fleet.values():
        instance.start(processes)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not all(r.pid_file.exists() for r in fleet.values()):
        time.sleep(0.1)
    assert all(r.pid_file.exists() for r in fleet.values()), "an rsyslogd did not start"

    sinks = [fleet[s.host].log_path(s).open("ab") for s in sources]
    try:
        write_live(merged(sources), sinks, seconds=8)
    finally:
        for sink in sinks:
            sink.close()

    got = streamed(stack.read("verdicts", until=len(expected), timeout_s=120))
    assert sorted(got) == sorted(expected)

    hdfs, flink = raw_records(stack, "logs_hdfs"), raw_records(stack, "logs_flink")
    assert {k.split(":", 1)[0] for k, _ in hdfs} == {s.host for s in sources if s.side == "hdfs"}
    assert all(":/" in k for k, _ in hdfs + flink), "keys are host:path"
    texts = [decode(value, None, key.encode()).text for key, value in flink]
    if any(b"\n\tat " in s.path.read_bytes() for s in sources if s.side == "flink"):
        assert any("\n\tat " in text for text in texts), "no stack trace was joined into one record"
    gc_logs = {f"{s.host}:{fleet[s.host].log_path(s)}" for s in sources if "gc" in s.path.name}
    assert gc_logs <= {k for k, _ in flink + hdfs}, "a GC log was not shipped"
    if fmt != "correlator_raw":  # JSON records name host and file themselves: analyze reads the topic's records too
        dump = tmp_path / "topic"
        dump.mkdir()
        for name, records in (("flink.ndjson", flink), ("hdfs.ndjson", hdfs)):
            (dump / name).write_bytes(b"".join(value.rstrip(b"\n") + b"\n" for _, value in records))
        assert offline(dump, cluster) == expected
