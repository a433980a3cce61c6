"""HDFS logs shipped well after the Flink logs (a shipper restarted, a backlog): the verdicts decided without them are
revised once they arrive, under the same ids, and the final revision of each equals the offline verdict. A verdict may
be revised twice: a DataNode whose file is read a batch after the others' cannot hold back a source it has never seen,
so the first revision can come before that DataNode's evidence and the second with it.

The idle timeout is 20 s here and the HDFS logs come 30 s after the Flink ones — the same ratio as 150 s against the
default 120 s, in a fifth of the time. ``CORRELATOR_FAULTS_FULL_TIME=1`` runs it at full length: the default idle
timeout, HDFS 150 s late.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from correlator.offline.analyze import analyze
from correlator.simulate import generate
from tests.faults.conftest import make_stack
from tests.faults.harness import ROWS, Row
from tests.support.worker import WorkerProcess, duplicates, latest

pytestmark = [pytest.mark.integration, pytest.mark.slow]

FULL_TIME = os.environ.get("CORRELATOR_FAULTS_FULL_TIME") == "1"
IDLE_TIMEOUT_MS = 120_000 if FULL_TIME else 20_000  # 120 s: the setting's default
LATE_S = 150.0 if FULL_TIME else 30.0


def test_hdfs_logs_arriving_after_the_idle_timeout_revise_the_verdicts(
    kafka_bootstrap: str, unique: str, tmp_path: Path, started: list[WorkerProcess]
) -> None:
    logs = tmp_path / "logs"
    generate("recurring", logs)
    offline = {(v.verdict_id, v.root_cause.code, tuple(v.root_cause.hosts)) for v in analyze([str(logs)])}
    stack = make_stack(kafka_bootstrap, unique, tmp_path, CORRELATOR_IDLE_TIMEOUT_MS=str(IDLE_TIMEOUT_MS))
    worker = WorkerProcess(stack, "w")
    started.append(worker.start())
    flink = sorted(p for p in logs.iterdir() if p.name.startswith("flink-"))
    hdfs = sorted(p for p in logs.iterdir() if p.name.startswith("hadoop-"))
    assert flink and hdfs
    stack.replay(*flink, cluster="default")
    early = latest(stack.read("verdicts", until=len(offline), timeout_s=IDLE_TIMEOUT_MS / 1000 + 60))
    assert {r["verdict_id"] for r in early} == {vid for vid, _, _ in offline}
    assert all(r["root_cause"]["code"] == "INSUFFICIENT_DATA" for r in early), [r["root_cause"] for r in early]
    time.sleep(max(0.0, LATE_S - IDLE_TIMEOUT_MS / 1000))
    arrived = time.monotonic()
    stack.replay(*hdfs, cluster="default")
    deadline = time.monotonic() + 120
    while True:
        records = stack.read("verdicts", until=len(offline), timeout_s=30)
        final = {(r["verdict_id"], r["root_cause"]["code"], tuple(r["root_cause"]["hosts"])) for r in latest(records)}
        if final == offline or time.monotonic() > deadline:
            break
        time.sleep(2)
    revised = [r for r in records if int(r.get("revision") or 0) > 0]
    ROWS.append(Row(f"HDFS {LATE_S:.0f} s late (idle {IDLE_TIMEOUT_MS} ms)", None, len(final & offline), len(offline),
                    duplicates(records), recovery_s=time.monotonic() - arrived, revised=len(revised)))
    assert final == offline
    assert {r["verdict_id"] for r in revised} == {vid for vid, _, _ in offline}
    assert all(r["revision_reason"] for r in revised)
    for vid, _, _ in offline:  # each revision once, numbered on from the first decision
        numbers = [int(r["revision"]) for r in revised if r["verdict_id"] == vid]
        assert numbers == list(range(1, len(numbers) + 1)), (vid, numbers)
    assert duplicates(records) == 0
