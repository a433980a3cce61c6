"""Outages of the worker and of the broker: the same verdicts as a clean run, or an error exit — never a hang."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from tests.faults.conftest import make_stack
from tests.faults.harness import (
    ROWS, Row, in_background, join, replay_all, scenarios, verdicts, wait_ready, wait_until_events_flow,
)
from tests.support.services import LOCAL, KafkaBroker
from tests.support.worker import Stack, WorkerProcess

pytestmark = [pytest.mark.integration, pytest.mark.slow]

IDLE_TIMEOUT_MS = 8000
PAUSE_S = 30.0
"""An outage three times as long as every timeout involved (nearly 4 idle timeouts; the raw consumers' and Faust's
group sessions and the raw producers' transactions end after 10 s): a worker that counted it as silence would decide
without the data. (Idle timeouts much shorter than 8 s make even a clean run depend on CPU stalls of a loaded
machine.)"""


def _replaying(kafka_bootstrap: str, unique: str, tmp_path: Path, started: list[WorkerProcess]
               ) -> tuple[Stack, WorkerProcess, threading.Thread, set[tuple[str, str]], int]:
    """A worker reading the fault scenarios while they are replayed in the background (events already flowing)."""
    dirs, expected, lines = scenarios(tmp_path)
    stack = make_stack(kafka_bootstrap, unique, tmp_path, CORRELATOR_IDLE_TIMEOUT_MS=str(IDLE_TIMEOUT_MS))
    worker = WorkerProcess(stack, "first")
    started.append(worker.start())
    replay = in_background(replay_all, stack, dirs)
    wait_until_events_flow(worker)
    return stack, worker, replay, expected, lines


def test_kill_9_and_a_pause_longer_than_the_idle_timeout(
    kafka_bootstrap: str, unique: str, tmp_path: Path, started: list[WorkerProcess]
) -> None:
    stack, first, replay, expected, lines = _replaying(kafka_bootstrap, unique, tmp_path, started)
    first.kill()
    join(replay)
    time.sleep(PAUSE_S)
    second = WorkerProcess(stack, "second")
    restarted = time.monotonic()
    started.append(second.start(ready_timeout_s=180))
    got, duplicates, revised = verdicts(stack, expected, timeout_s=180)
    recovery = time.monotonic() - restarted
    ROWS.append(Row(f"kill -9, {PAUSE_S:.0f} s pause (idle {IDLE_TIMEOUT_MS} ms)", lines, len(set(got)),
                    len(expected), duplicates, recovery_s=recovery, revised=revised))
    assert set(got) == expected


RESTART_AFTER_S = 2.0


def test_kill_9_and_a_restart_two_seconds_later_is_back_in_seconds(
    kafka_bootstrap: str, unique: str, tmp_path: Path, started: list[WorkerProcess]
) -> None:
    """A supervisor restarts a killed worker at once: its replacement is ready within 15 s (the dead member's
    session ends after 10 s) and the last verdict comes within 30 s of the replay's end."""
    stack, first, replay, expected, lines = _replaying(kafka_bootstrap, unique, tmp_path, started)
    first.kill()
    time.sleep(RESTART_AFTER_S)
    second = WorkerProcess(stack, "second")
    restarted = time.monotonic()
    started.append(second.start(ready_timeout_s=120))
    ready_s = time.monotonic() - restarted
    join(replay)
    replayed = time.monotonic()
    got, duplicates, revised = verdicts(stack, expected, timeout_s=120)
    last_s = time.monotonic() - replayed
    ROWS.append(Row(f"kill -9, restart after {RESTART_AFTER_S:.0f} s", lines, len(set(got)), len(expected),
                    duplicates, recovery_s=ready_s, revised=revised))
    assert set(got) == expected
    assert ready_s <= 15, f"ready {ready_s:.1f} s after the restart"
    assert last_s <= 30, f"last verdict {last_s:.1f} s after the replay ended"


def test_a_killed_raw_ingest_child_is_started_again_and_nothing_is_lost(
    kafka_bootstrap: str, unique: str, tmp_path: Path, started: list[WorkerProcess]
) -> None:
    """kill -9 of the raw-ingest process mid-replay: the worker stays up, starts it again in place, and every
    verdict comes, once."""
    stack, worker, replay, expected, lines = _replaying(kafka_bootstrap, unique, tmp_path, started)
    (child,) = worker.raw_ingest_children()
    killed = time.monotonic()
    os.kill(child, signal.SIGKILL)
    join(replay)
    ready_s = wait_ready(worker, timeout_s=60)
    got, duplicates, revised = verdicts(stack, expected, timeout_s=120)
    ROWS.append(Row("raw-ingest child killed", lines, len(set(got)), len(expected), duplicates,
                    recovery_s=time.monotonic() - killed, revised=revised))
    assert worker.process is not None and worker.process.poll() is None, worker.tail()
    assert set(got) == expected and duplicates == 0
    assert child not in worker.raw_ingest_children() and len(worker.raw_ingest_children()) == 1
    assert "starting it again (1 of 3" in worker.tail(200)
    assert ready_s < 60


def _kafka(broker: KafkaBroker, action: str) -> None:
    env = {"KAFKA_PORT": str(broker.port), "KAFKA_STATE_DIR": str(broker.state_dir)}
    import os
    import sys

    subprocess.run(["bash", str(LOCAL / "kafka.sh"), action], env={**os.environ, "PYTHON": sys.executable, **env},
                   check=True, timeout=180, capture_output=True)


@pytest.fixture
def broker() -> KafkaBroker:
    own = KafkaBroker()
    own.start()
    yield own
    own.stop()


def test_broker_restart_with_data_kept_mid_replay(
    broker: KafkaBroker, unique: str, tmp_path: Path, started: list[WorkerProcess]
) -> None:
    dirs, expected, lines = scenarios(tmp_path)
    stack = make_stack(broker.bootstrap, unique, tmp_path)
    worker = WorkerProcess(stack, "w")
    started.append(worker.start())
    (first, path), (second, rest) = dirs.items()
    replay = in_background(lambda: stack.replay(path, cluster=first))
    wait_until_events_flow(worker)
    _kafka(broker, "stop")
    time.sleep(3)
    _kafka(broker, "start")
    back = time.monotonic()
    time.sleep(2)  # the worker's next probes see the broker back
    wait_ready(worker)
    join(replay)  # its producer waited the outage out
    stack.replay(rest, cluster=second)
    got, duplicates, revised = verdicts(stack, expected)
    recovery = time.monotonic() - back  # until the last verdict: a raw ingest stuck on the old broker counts
    ROWS.append(Row("broker restart, data kept, mid-replay", lines, len(set(got)), len(expected), duplicates,
                    recovery_s=recovery, revised=revised))
    assert set(got) == expected


def test_broker_loss_is_an_error_exit_not_a_hang(
    broker: KafkaBroker, unique: str, tmp_path: Path, started: list[WorkerProcess]
) -> None:
    dirs, expected, lines = scenarios(tmp_path)
    stack = make_stack(broker.bootstrap, unique, tmp_path)
    worker = WorkerProcess(stack, "w")
    started.append(worker.start())
    replay_all(stack, dirs)
    got, _, revised = verdicts(stack, expected)
    assert set(got) == expected
    _kafka(broker, "stop")
    _kafka(broker, "reset")
    _kafka(broker, "start")
    back = time.monotonic()
    assert worker.process is not None
    code = worker.process.wait(90)
    recovery = time.monotonic() - back
    ROWS.append(Row("broker loss (state wiped)", lines, len(set(got)), len(expected), 0,
                    recovery_s=recovery, revised=revised))
    assert code == 1, worker.tail()
    last = worker.tail(3)
    assert "no longer exists" in last or "partitions, had" in last or "recreated" in last, last
    from confluent_kafka.admin import AdminClient

    topics = AdminClient({"bootstrap.servers": broker.bootstrap}).list_topics(timeout=10).topics
    assert stack.topic("logs_flink") not in topics and stack.topic("events") not in topics, "a topic was auto-created"


def test_sigterm_ends_the_worker_within_30_s_while_the_broker_is_gone(
    broker: KafkaBroker, unique: str, tmp_path: Path, started: list[WorkerProcess]
) -> None:
    stack = make_stack(broker.bootstrap, unique, tmp_path)
    worker = WorkerProcess(stack, "w")
    started.append(worker.start())
    _kafka(broker, "stop")
    time.sleep(3)
    assert worker.health().get("ready") is False, "a worker without a broker must not say ready"
    began = time.monotonic()
    worker.stop(timeout_s=40)
    took = time.monotonic() - began
    ROWS.append(Row("SIGTERM with the broker gone", None, 0, 0, 0, recovery_s=took))
    assert worker.process is not None and worker.process.returncode is not None and took <= 30, worker.tail()
