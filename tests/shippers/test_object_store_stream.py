"""The object-store lab's real runs streamed through a real broker and the real worker.

``correlator replay`` ships the Flink logs and the S3 server access log of a run (tests/data/lab/s3-*) as a shipper
would, each to its raw topic; the worker must give the verdicts ``analyze`` gives on the same files. An access log is
delivered late (hours, on AWS): shipped after the Flink logs, by the real kcat as the shippers README's recipe does,
the store's records revise the verdicts the client's side made alone.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import pytest

from correlator.offline.analyze import analyze
from tests.shippers.live import require
from tests.shippers.verdicts import raw_records, streamed
from tests.support.worker import Stack, WorkerProcess, latest

pytestmark = [pytest.mark.integration, pytest.mark.slow]

LAB = Path(__file__).resolve().parents[1] / "data" / "lab"
RUNS = [("s3-2.1.1", "s3-slow-put"), ("s3-2.1.1", "s3-expired-token")]
"""The 1.20.1 throttling run streams in the late-access-log test below."""


def _offline(path: Path) -> list[tuple[str, str, tuple[str, ...]]]:
    return sorted((v.verdict_id, v.root_cause.code, tuple(v.root_cause.hosts)) for v in analyze([str(path)]))


@pytest.mark.parametrize(("line", "scenario"), RUNS, ids=[f"{a}/{b}" for a, b in RUNS])
def test_the_worker_gives_the_offline_verdicts_on_an_object_store_run(
    line: str, scenario: str, stack: Stack, workers: list[WorkerProcess]
) -> None:
    logs = LAB / line / scenario
    expected = _offline(logs)
    assert expected and all(code.startswith("OBJECT_STORE_") for _, code, _ in expected), expected
    workers.append(WorkerProcess(stack).start())
    result = stack.cli("replay", str(logs))
    assert result.returncode == 0, result.stderr
    assert sorted(streamed(stack.read("verdicts", until=len(expected), timeout_s=120))) == expected
    shipped = raw_records(stack, "logs_s3")
    access = sum(1 for line in (logs.glob("s3-access-*.log")) for _ in line.open("rb"))
    assert len(shipped) == access and not any(b"org.apache" in value for _, value in shipped)


def test_a_late_access_log_revises_the_client_sides_verdicts(
    stack: Stack, workers: list[WorkerProcess], tmp_path: Path
) -> None:
    logs = LAB / "s3-1.20.1" / "s3-throttling"
    expected = _offline(logs)
    flink, store = tmp_path / "flink", tmp_path / "store"
    flink.mkdir()
    store.mkdir()
    for f in logs.glob("flink-*.log"):
        shutil.copy(f, flink / f.name)
    for f in logs.glob("s3-access-*.log"):
        shutil.copy(f, store / f.name)
    alone = _offline(flink)
    assert alone and all(not code.startswith("OBJECT_STORE_") for _, code, _ in alone), alone
    workers.append(WorkerProcess(stack).start())
    assert stack.cli("replay", str(flink)).returncode == 0
    first = stack.read("verdicts", until=len(alone), timeout_s=120)
    assert sorted(streamed(first)) == alone
    require("kcat")
    for f in sorted(store.iterdir()):  # the shippers README's recipe: each access-log object piped to kcat, keyed
        with f.open("rb") as lines:   # by its name
            done = subprocess.run(["kcat", "-P", "-b", stack.bootstrap, "-t", stack.topic("logs_s3"),
                                   "-X", "message.max.bytes=10485760", "-k", f"s3/{f.name}"],
                                  stdin=lines, env=stack.env, capture_output=True, timeout=60, check=False)
        assert done.returncode == 0, done.stderr
    deadline = time.monotonic() + 120  # a revision is one more record of a verdict already seen: wait for the codes
    records = first
    while sorted(streamed(records)) != expected and time.monotonic() < deadline:
        records = stack.read("verdicts", until=len(alone), timeout_s=5)
    assert sorted(streamed(records)) == expected
    revised = [r for r in latest(records) if r.get("revision", 0) > 0]
    assert revised and all(r["root_cause"]["code"].startswith("OBJECT_STORE_") for r in revised)
