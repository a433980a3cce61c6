"""`correlator flink-stats`: a real JobManager's recorded REST responses, served on loopback, as checkpoint spans."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from correlator.adapters.flink_rest import CheckpointPoller, FlinkRest
from correlator.cli import cli
from correlator.core.ingest.checkpoint_stats import children_of, placements_of, span_of
from tests.support.fake_jobmanager import fake_jobmanager

RECORDED = Path(__file__).resolve().parents[1] / "data" / "flink-rest" / "1.20.1-backpressure"
JOB = "63fda3488d0e6ac8c94df87d5ee5a453"
KEYED = "90bea66de1c231edf33913ecd54406c1"
SOURCE = "cbc357ccb763df2852fee8c4fc7d55f2"


def recorded(path: str) -> Any:
    return json.loads((RECORDED / (path.strip("/").replace("/", "__") + ".json")).read_text())


def names() -> dict[str, str]:
    return {v["id"]: v["name"] for v in recorded(f"/jobs/{JOB}")["vertices"]}


def span(chk: int) -> Any:
    path = f"/jobs/{JOB}/checkpoints/details/{chk}"
    subtasks = {v: recorded(f"{path}/subtasks/{v}") for v in (KEYED, SOURCE)}
    return span_of(JOB, names(), recorded(path), subtasks, cluster="lab", host="jm", ref=path)


def test_the_expired_checkpoint_names_the_task_that_never_acknowledged_it() -> None:
    failed = span(4)
    assert (failed.status, failed.checkpoint_id, failed.job_id) == ("FAILED", 4, JOB)
    assert failed.waiting_on == ("keyed-state -> discard: Writer",)
    assert failed.end_ms - failed.start_ms == 64
    assert dict(failed.phases)["unacknowledgedSubtasks"] == 1
    assert failed.ts_ms == recorded(f"/jobs/{JOB}/checkpoints/details/4")["failure_timestamp"]


def test_a_completed_checkpoint_carries_its_phases() -> None:
    done = span(3)
    assert done.status == "COMPLETED" and done.waiting_on == ()
    phases = dict(done.phases)
    assert phases["maxStartDelayMs"] == 31 and phases["maxAsyncMs"] >= 244 and phases["unacknowledgedSubtasks"] == 0


def test_a_checkpoint_still_running_or_of_another_shape_is_no_span() -> None:
    details = dict(recorded(f"/jobs/{JOB}/checkpoints/details/4"), status="IN_PROGRESS")
    assert span_of(JOB, {}, details, {}, cluster="c", host="h", ref="r") is None
    assert span_of(JOB, {}, {"status": "FAILED"}, {}, cluster="c", host="h", ref="r") is None


def children(chk: int) -> Any:
    path = f"/jobs/{JOB}/checkpoints/details/{chk}"
    subtasks = {v: recorded(f"{path}/subtasks/{v}") for v in (KEYED, SOURCE)}
    return children_of(JOB, recorded(path), subtasks, cluster="lab", host="jm", ref=path)


def test_the_rest_statistics_give_the_subtask_spans_the_2_3_logs_give() -> None:
    """Checkpoint 4 expired behind backpressure (1.20.1): the writer's task has no end and no subtask span, the
    source's subtask acknowledged with its phases, as Flink 2.3 logs them."""
    failed = children(4)
    assert [(c.level, c.job_vertex_id, c.subtask, c.end_ms is None) for c in failed] == [
        ("task", KEYED, None, True), ("task", SOURCE, None, False), ("subtask", SOURCE, 0, False)]
    sub = failed[2]
    assert sub.start_ms == recorded(f"/jobs/{JOB}/checkpoints/details/4")["trigger_timestamp"]
    assert sub.end_ms is not None and sub.start_delay_ms is not None and sub.async_ms is not None
    done = [c for c in children(3) if c.level == "subtask" and c.job_vertex_id == KEYED]
    assert [(c.subtask, c.start_delay_ms) for c in done] == [(0, 31)] and (done[0].async_ms or 0) >= 244


def test_a_vertex_says_where_its_subtasks_run() -> None:
    vertex = {"id": KEYED, "name": "keyed-state -> discard: Writer", "parallelism": 2, "subtasks": [
        {"subtask": 0, "attempt": 0, "host": "localhost", "start-time": 1796446600000,
         "taskmanager-id": "127.0.0.1:41001-aaaaaa"},
        {"subtask": 1, "attempt": 0, "host": "localhost", "start-time": 1796446600010,
         "taskmanager-id": "127.0.0.1:41002-bbbbbb"},
        {"subtask": 2, "attempt": 0, "start-time": -1, "taskmanager-id": "(unassigned)"}]}
    placed = placements_of(vertex, cluster="lab", host="jm", ref="/v")
    assert [(p.subtask, p.parallelism, p.taskmanager_id, p.ts_ms) for p in placed] == [
        (0, 2, "127.0.0.1:41001-aaaaaa", 1796446600000), (1, 2, "127.0.0.1:41002-bbbbbb", 1796446600010)]
    assert placements_of({"id": KEYED}, cluster="lab", host="jm", ref="/v") == []


@pytest.fixture
def jobmanager() -> Iterator[str]:
    with fake_jobmanager(RECORDED) as url:
        yield url


def test_the_poller_reports_each_final_checkpoint_once(jobmanager: str) -> None:
    poller = CheckpointPoller(FlinkRest(jobmanager), "lab")
    first = poller.poll()
    assert [s.checkpoint_id for s in first] == [1, 2, 3, 4, 5]
    assert [s.status for s in first].count("FAILED") == 1
    assert poller.poll() == first, "not confirmed (a publish that failed): reported again"
    poller.confirm(first)
    assert poller.poll() == []


def test_the_command_prints_the_spans_once(jobmanager: str) -> None:
    result = CliRunner().invoke(cli, ["flink-stats", "--jobmanager", jobmanager, "--cluster", "lab"])
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    spans = [e for e in lines if e["type"] == "checkpoint_span"]
    assert len(spans) == 5
    assert spans[3]["waiting_on"] == ["keyed-state -> discard: Writer"] and spans[3]["cluster"] == "lab"
    # each checkpoint's task and subtask parts follow the spans; this recording has no vertex answers, so no
    # placement, which the command says
    assert {e["type"] for e in lines} == {"checkpoint_span", "checkpoint_child_span"}
    failed = [e for e in lines if e["type"] == "checkpoint_child_span" and e["status"] == "FAILED"]
    assert [(e["level"], e["end_ms"] is None) for e in failed if e["level"] == "task"].count(("task", True)) == 1
    assert "no placement of the subtasks of" in result.output


def test_a_jobmanager_that_does_not_answer_is_said_in_one_line() -> None:
    result = CliRunner().invoke(cli, ["flink-stats", "--jobmanager", "http://127.0.0.1:9"])
    assert result.exit_code == 1
    assert "cannot read checkpoint statistics" in result.output and "127.0.0.1:9" in result.output


def test_a_span_survives_the_wire_and_a_snapshot() -> None:
    """Its pairs and names arrive as JSON lists: the worker must read them back as the span that was sent."""
    from correlator.adapters import codec
    from correlator.core.correlate.packing import pack, unpack

    failed = span(4)
    decoded, _ = codec.decode_event_record(codec.encode_event(failed, {}))
    assert decoded == failed and unpack(pack(decoded)) == failed


WITH_CONFIG = RECORDED.parent / "1.20.1-backpressure-config"


def test_the_jobs_own_checkpoint_timeout_is_read_once_confirmed() -> None:
    """The job's checkpoint timeout as its REST configuration gives it (a timeout set in code included), timed at
    the job's start; the early warning judges its trend against it (tests/core/explain/test_risk.py)."""
    config = json.loads((WITH_CONFIG / "jobs__7a46b4b87f365b40e97ea9b66db585c3__checkpoints__config.json").read_text())
    with fake_jobmanager(WITH_CONFIG) as url:
        poller = CheckpointPoller(FlinkRest(url), "lab")
        [setting] = poller.job_settings()
        assert (setting.job_id, setting.key, setting.value_ms) == (
            "7a46b4b87f365b40e97ea9b66db585c3", "execution.checkpointing.timeout", config["timeout"])
        assert setting.ts_ms == json.loads((WITH_CONFIG / "jobs__7a46b4b87f365b40e97ea9b66db585c3.json").read_text())[
            "start-time"]
        assert poller.job_settings() == [setting], "not confirmed: read again"
        poller.confirm_settings([setting])
        assert poller.job_settings() == []
        result = CliRunner().invoke(cli, ["flink-stats", "--jobmanager", url, "--cluster", "lab"])
    assert result.exit_code == 0, result.output
    types = [json.loads(line)["type"] for line in result.stdout.splitlines() if line.startswith("{")]
    assert types[:6] == ["flink_setting"] + ["checkpoint_span"] * 5
    assert set(types[6:]) == {"checkpoint_child_span"}
