"""A raw topic deleted and created again under its name while the worker is down: nothing of the new topic is lost.

The ingest snapshot of each raw partition records the id of the topic it was read from. A restarted worker that
finds another id drops the deleted topic's snapshot, says so in its log and metrics, and reads the new topic from its
first record; the correlate stage keeps the new topic's positions apart from the old ones. With
``CORRELATOR_RECREATED_TOPICS=refuse`` it stops instead, reading nothing, and says how to go on.
"""

from __future__ import annotations

import contextlib
import re
import time
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient

from correlator.offline.analyze import analyze
from correlator.simulate import generate
from tests.faults.conftest import make_stack
from tests.faults.harness import ROWS, Row
from tests.support.worker import WorkerProcess, duplicates, latest

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def _expected(tmp_path: Path, cluster: str, scenario: str) -> tuple[Path, set[tuple[str, str]]]:
    out = tmp_path / "logs" / cluster
    generate(scenario, out)
    return out, {(v.verdict_id, v.root_cause.code) for v in analyze([str(out)], cluster=cluster)}


def test_a_recreated_raw_topic_is_read_from_its_first_record(
    kafka_bootstrap: str, unique: str, tmp_path: Path, started: list[WorkerProcess]
) -> None:
    stack = make_stack(kafka_bootstrap, unique, tmp_path)
    before, first = _expected(tmp_path, "fault-a", "recurring")
    after, second = _expected(tmp_path, "fault-b", "two-jobs")
    worker = WorkerProcess(stack, "first")
    started.append(worker.start())
    stack.replay(before, cluster="fault-a")
    got = {(r["verdict_id"], r["root_cause"]["code"]) for r in latest(stack.read("verdicts", until=len(first)))}
    assert got == first
    assert worker.stop() == 0

    raw = [stack.topic("logs_flink"), stack.topic("logs_hdfs")]
    admin = AdminClient({"bootstrap.servers": kafka_bootstrap})
    for future in admin.delete_topics(raw, operation_timeout=30).values():
        future.result(60)
    deadline = time.monotonic() + 60
    while set(raw) & set(admin.list_topics(timeout=10).topics) and time.monotonic() < deadline:
        time.sleep(0.5)
    stack.apply_topics()  # the same names, partitions and settings: new topic ids
    stack.replay(after, cluster="fault-b")

    refusing = WorkerProcess(stack, "refusing", env={"CORRELATOR_RECREATED_TOPICS": "refuse"})
    started.append(refusing)
    with contextlib.suppress(AssertionError):  # it may or may not answer ready before its raw partitions come
        refusing.start(ready_timeout_s=120)
    assert refusing.process is not None and refusing.process.wait(120) != 0
    refusal = refusing.log_path.read_text()
    assert "refusing to read it" in refusal and "start the worker once with CORRELATOR_RECREATED_TOPICS=read" in refusal

    second_worker = WorkerProcess(stack, "second")
    restarted = time.monotonic()
    started.append(second_worker.start(ready_timeout_s=120))
    records = stack.read("verdicts", until=len(first) + len(second), timeout_s=150)
    got = {(r["verdict_id"], r["root_cause"]["code"]) for r in latest(records)}
    ROWS.append(Row("raw topics deleted and recreated", None, len(got & second), len(second), duplicates(records),
                    recovery_s=time.monotonic() - restarted,
                    revised=sum(1 for r in records if int(r.get("revision") or 0) > 0)))
    assert second <= got, f"lost after the topics were recreated: {sorted(second - got)}"
    assert duplicates(records) == 0
    time.sleep(3)
    assert second_worker.process is not None and second_worker.process.poll() is None, second_worker.tail()
    recreated = re.findall(r'correlator_raw_topic_recreated_total\{topic="([^"]+)"\} (\d+)', second_worker.metrics())
    assert {t for t, n in recreated if float(n) > 0} == set(raw), recreated
    assert "deleted and created again" in second_worker.log_path.read_text()
