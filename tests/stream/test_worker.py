"""The worker on the real broker: the offline verdicts, exactly, through crashes, garbage and a second worker."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from correlator.bench.proc import running
from correlator.offline.analyze import analyze
from correlator.simulate import generate
from tests.support.worker import CLI, Stack, WorkerProcess, latest

pytestmark = [pytest.mark.integration, pytest.mark.slow]

SCENARIOS = ("seed", "recurring", "two-jobs", "envelopes", "flink-2", "hadoop-3.3", "slow-pipeline", "no-failures")


def offline_verdicts(logs: Path, cluster: str) -> set[tuple[str, str]]:
    return {(v.verdict_id, v.root_cause.code) for v in analyze([str(logs)], cluster=cluster)}


def streamed(records: list[dict]) -> list[tuple[str, str]]:
    """The latest revision of each verdict, as a consumer keeps them."""
    return [(r["verdict_id"], r["root_cause"]["code"]) for r in latest(records)]


def scenario(tmp_path: Path, name: str) -> Path:
    out = tmp_path / "logs" / name
    generate(name, out)
    return out


GARBAGE = [
    (b"garbage/binary", bytes(range(256)) * 4),
    (b"garbage/utf8", b"2020-01-02 17:18:53,337 INFO  org.apache.flink.Foo - \xff\xfe broken \xc3"),
    (b"garbage/json", b'{"message": "truncated envelope'),
    (b"garbage/envelope", b'{"message": 5}'),
    (
        b"garbage/year",
        b"2999-01-01 00:00:00,000 WARN  org.apache.hadoop.hdfs.server.datanode.DataNode: "
        b"Slow BlockReceiver write data to disk cost:500ms (threshold=300ms)",
    ),
    (b"garbage/big", b"Slow BlockReceiver write data to disk cost:500ms " + b"x" * 2_000_000),
]


CORRUPT_EVENT = (
    b'{"type": "jvm_pause", "ts_ms": "abc", "cluster": "default", "host": "dn01", "role": "datanode", '
    b'"pause_ms": 5, "gc": true}'
)


class TestWorkerMatchesAnalyze:
    def test_every_scenario_with_garbage_interleaved(
        self, stack: Stack, workers: list[WorkerProcess], tmp_path: Path
    ) -> None:
        """Replaying each scenario (one cluster each) yields exactly the offline verdicts; garbage is dead-lettered."""
        expected: set[tuple[str, str]] = set()
        dirs = {}
        for name in SCENARIOS:
            dirs[name] = scenario(tmp_path, name)
            expected |= offline_verdicts(dirs[name], name)
        assert len(expected) >= 8

        workers.append(WorkerProcess(stack).start())
        stack.produce_raw("logs_hdfs", GARBAGE[:3])
        for name in SCENARIOS:
            stack.replay(dirs[name], cluster=name)
        stack.produce_raw("logs_flink", GARBAGE[3:])
        stack.produce_raw("events", [(b"default", CORRUPT_EVENT)])

        got = streamed(stack.read("verdicts", until=len(expected)))
        assert set(got) == expected
        assert len(got) == len(set(got)), "a verdict was published twice"

        dead = stack.read("deadletter", until=6, timeout_s=30)
        reasons = {d["reason"] for d in dead}
        assert {"binary", "bad_json", "bad_envelope", "bad_timestamp", "line_too_long", "bad_event"} <= reasons, reasons
        corrupt = next(d for d in dead if d["reason"] == "bad_event")
        assert corrupt["topic"] == stack.topic("events") and "value_b64" in corrupt
        assert all(d["topic"].startswith(("logs.", "correlator.events.")) and d["offset"] >= 0 for d in dead)
        metrics = workers[0].metrics()
        assert 'correlator_dead_letters_total{reason="binary"}' in metrics
        assert "correlator_verdicts_total" in metrics and "correlator_consumer_lag" in metrics


class TestCrashRecovery:
    def test_kill_9_mid_replay_loses_no_verdict(
        self, stack: Stack, workers: list[WorkerProcess], tmp_path: Path
    ) -> None:
        """kill -9 while the recurring scenario streams in, then a restart: every verdict arrives, repeats keep their id.
        The killed worker runs two raw-ingest processes, the restarted one a single one: the partitions' committed
        state moves between them."""
        logs = scenario(tmp_path, "recurring")
        expected = offline_verdicts(logs, "default")
        assert len(expected) >= 4

        first = WorkerProcess(stack, "first", env={"CORRELATOR_RAW_PROCESSES": "2"}).start()
        workers.append(first)
        replay = threading.Thread(target=stack.replay, args=(logs,), kwargs={"cluster": "default"})
        replay.start()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            text = first.metrics()
            if "correlator_records_in_total{topic=\"correlator.events." in text:
                break
            time.sleep(0.05)
        while time.monotonic() < deadline and not _step_seconds(first.metrics()).get("parse"):
            time.sleep(0.05)  # the raw-ingest processes hand their metrics over once a tick
        steps = _step_seconds(first.metrics())
        assert steps.get("parse", 0) > 0 and steps.get("commit", 0) > 0, steps  # where the loop's time went
        assert len(first.raw_ingest_children()) == 2, "the worker runs raw ingest in two child processes"
        assert first.health()["raw_ingest"]["processes"] == 2
        children = first.children()
        first.kill()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(map(running, children)):
            time.sleep(0.1)
        assert not any(map(running, children)), "raw ingest outlived its killed worker"
        replay.join(120)

        workers.append(WorkerProcess(stack, "second").start())
        got = streamed(stack.read("verdicts", until=len(expected)))
        assert set(got) == expected
        assert {vid for vid, _ in got} == {vid for vid, _ in expected}


def _step_seconds(text: str) -> dict[str, float]:
    prefix = 'correlator_ingest_seconds_total{step="'
    return {line[len(prefix):].split('"', 1)[0]: float(line.rsplit(" ", 1)[1])
            for line in text.splitlines() if line.startswith(prefix)}


class TestScaleOut:
    def test_two_workers_produce_the_same_verdicts_as_one(
        self, stack: Stack, workers: list[WorkerProcess], tmp_path: Path
    ) -> None:
        """Two workers in one group share the partitions of several clusters and publish the offline verdicts once
        (one of them with two raw-ingest processes: three raw consumers in all)."""
        stack.extra["CORRELATOR_IDLE_TIMEOUT_MS"] = "8000"
        names = ("seed", "recurring", "two-jobs", "slow-pipeline")
        expected: set[tuple[str, str]] = set()
        dirs = {}
        for name in names:
            dirs[name] = scenario(tmp_path, name)
            expected |= offline_verdicts(dirs[name], f"cluster-{name}")
        a = WorkerProcess(stack, "a", env={"CORRELATOR_RAW_PROCESSES": "2"})
        b = WorkerProcess(stack, "b")
        workers.extend([a, b])
        a.start()
        b.start(ready_timeout_s=120)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (a.health().get("ready") and b.health().get("ready")):
            time.sleep(0.5)
        assert a.health().get("assigned_partitions") and b.health().get("assigned_partitions")
        for name in names:
            stack.replay(dirs[name], cluster=f"cluster-{name}")
        got = streamed(stack.read("verdicts", until=len(expected)))
        assert set(got) == expected
        assert len(got) == len(set(got))


class TestLiveStream:
    def test_a_steady_stream_is_decided_by_its_own_records(
        self, stack: Stack, workers: list[WorkerProcess], tmp_path: Path
    ) -> None:
        """While logs keep flowing (never a moment with nothing in flight), verdicts come while they flow, not after
        the stream stops: a worker that waited for "lag 0" never warmed up on a live cluster. (Which of the
        watermarks or a quiet source's idleness decides depends on the logs: this TaskManager is silent for up to
        26 minutes of log time, 13 s at this speed.)"""
        logs = scenario(tmp_path, "recurring")
        workers.append(WorkerProcess(stack, "live").start())
        replay = threading.Thread(target=stack.cli, args=("replay", str(logs), "--cluster", "live", "--speed", "120"),
                                  kwargs={"timeout": 120})
        replay.start()
        try:
            got = stack.read("verdicts", until=2, timeout_s=45)
            streaming = replay.is_alive()
        finally:
            replay.join(120)
        assert len(got) >= 2, f"{len(got)} verdicts while the stream flowed: {workers[0].tail()}"
        assert streaming, "the verdicts came only after the replay ended"


class TestOperations:
    def test_sigterm_drains_and_exits_cleanly(self, stack: Stack, tmp_path: Path) -> None:
        """SIGTERM stops the worker with exit 0 and its consumer group has committed what it read."""
        worker = WorkerProcess(stack, "term").start()
        stack.replay(scenario(tmp_path, "seed"), cluster="term")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and 'topic="correlator.events.' not in worker.metrics():
            time.sleep(0.2)
        time.sleep(2)
        assert worker.stop() == 0
        assert stack.committed_lag("logs_hdfs", stack.env["CORRELATOR_WORKER_ID"] + "-ingest") == 0


class TestEarlyWarning:
    def test_a_real_growing_state_warns_through_kafka_as_analyze_does(
        self, stack: Stack, workers: list[WorkerProcess]
    ) -> None:
        """The lab's real state-growth run replayed through the broker: the worker publishes analyze's risk records
        (raised, updated, superseded; same ids, same predictions) and the FLINK_STATE_GROWTH verdict."""
        from correlator.core.explain.risk import risk_to_dict
        from correlator.offline.analyze import ordered_events, run_analysis

        run = Path(__file__).resolve().parents[1] / "data" / "lab" / "3.3.6-1.20.1" / "state-growth"
        verdicts, risks = run_analysis(ordered_events([str(run)], cluster="growth"))
        want = [(r["risk_id"], r["status"], r["expiry_at_ms"]) for r in map(risk_to_dict, risks)]
        assert [s for _, s, _ in want][0] == "raised" and want[-1][1] == "superseded"

        workers.append(WorkerProcess(stack).start())
        stack.replay(run, cluster="growth")
        got = stack.read("risks", until=len(want))
        assert [(r["risk_id"], r["status"], r["expiry_at_ms"]) for r in got] == want
        assert streamed(stack.read("verdicts", until=1)) == [(v.verdict_id, "FLINK_STATE_GROWTH") for v in verdicts]
        assert 'correlator_risks_total{status="raised"} 1.0' in workers[0].metrics()

    def test_rest_statistics_reach_the_verdict_through_kafka(self, stack: Stack, workers: list[WorkerProcess]) -> None:
        """`flink-stats --follow` against the recorded REST responses of the lab's real backpressure run, and that
        run's logs replayed: the worker's verdict names the task that never acknowledged the expired checkpoint."""
        import subprocess

        from tests.support.fake_jobmanager import fake_jobmanager

        data = Path(__file__).resolve().parents[1] / "data"
        workers.append(WorkerProcess(stack).start())
        with fake_jobmanager(data / "flink-rest" / "1.20.1-backpressure") as url:
            poller = subprocess.Popen([*CLI, "flink-stats", "--jobmanager", url, "--follow", "--interval", "1",
                                       "--cluster", "bp"], env=stack.env, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.PIPE, text=True)
            try:
                stack.replay(data / "lab" / "3.3.6-1.20.1" / "backpressure", cluster="bp")
                [verdict] = stack.read("verdicts", until=1)
            finally:
                poller.terminate()
                _, err = poller.communicate(timeout=30)
        assert poller.returncode in (0, -15), err
        spans = [e for e in stack.read("events", until=10_000, timeout_s=5) if e.get("type") == "checkpoint_span"]
        assert any(e.get("waiting_on") for e in spans), (err, spans[-3:])
        assert verdict["root_cause"]["code"] == "FLINK_BACKPRESSURE"
        assert "keyed-state -> discard: Writer never acknowledged it" in verdict["root_cause"]["explanation"]
