"""Real HDFS and Flink logs from the lab judge every commit: `correlator analyze` on each captured run vs its truth.

Each directory under tests/data/lab/<hadoop>-<flink>/<scenario>/ holds the daemon logs of one lab run (real lines,
trimmed to the run's span) and truth.json: the fault injected, the checkpoints the JobManager logged as failed, and the
root cause each must get. No JVM runs here; the assertions are the ones `make lab` makes live.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from correlator.cli import cli
from correlator.offline.analyze import analyze

DATA = Path(__file__).resolve().parents[1] / "data" / "lab"
RUNS = sorted(p.parent for p in DATA.glob("*/*/truth.json"))
FILE_HOST = re.compile(r"^(?:hadoop|flink)-.+-(?:namenode|datanode|standalonesession-\d+|taskexecutor-\d+|client)"
                       r"-(?P<host>.+)\.log$")


RISKS: dict[Path, list[dict[str, Any]]] = {}
"""Each run's early-warning records, from the same `analyze --risks` as its verdicts."""


def _analyze(run: Path) -> list[dict[str, Any]]:
    """`correlator analyze --risks <dir>`, in process: the verdicts (the risks go to ``RISKS``)."""
    result = CliRunner().invoke(cli, ["analyze", "--risks", str(run)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    RISKS[run] = [r for r in records if r["schema"] == "correlator.risk/v1"]
    return [r for r in records if r["schema"] == "correlator.verdict/v1"]


@pytest.fixture(scope="module", params=RUNS, ids=[f"{p.parent.name}/{p.name}" for p in RUNS])
def run(request: pytest.FixtureRequest) -> tuple[dict[str, Any], list[dict[str, Any]], Path]:
    path: Path = request.param
    truth = json.loads((path / "truth.json").read_text())
    return truth, _analyze(path), path


def _by_checkpoint(verdicts: list[dict[str, Any]]) -> dict[tuple[str, int], dict[str, Any]]:
    return {(v["job_id"], int(v["checkpoint_id"])): v for v in verdicts}


MATRIX = ("3.3.6-1.20.1", "3.4.1-2.1.1")
"""The version pairs every fault scenario ran on; other pairs hold the scenarios of one version line (the real
DirectoryScanner stall needs a DataNode from before HDFS-15415: 3.2.1)."""


def test_the_lab_captured_both_version_pairs() -> None:
    pairs = {p.parent.name for p in RUNS}
    assert set(MATRIX) <= pairs, pairs
    for pair in MATRIX:
        scenarios = {p.name for p in RUNS if p.parent.name == pair}
        assert "control" in scenarios and len(scenarios) >= 6, (pair, scenarios)


def test_the_real_directory_scan_stall_is_judged() -> None:
    """The seed's cause, reproduced by a real 3.2.1 DataNode's own scanner: its fixture is here and expects the
    scanner on the scanning DataNode for every checkpoint it failed."""
    [run] = [p for p in RUNS if p.parent.name.startswith("3.2.1-") and p.name == "directory-scan"]
    truth = json.loads((run / "truth.json").read_text())
    assert truth["failed_checkpoints"] and all(w["code"] == "HDFS_DIRECTORY_SCAN" for w in truth["expected"])


def test_the_same_replicas_after_the_fix_cost_a_write_nothing() -> None:
    """3.3.6 compares outside the lock (HDFS-15415): the same 3 M replicas, the scanning DataNode in every pipeline,
    each scan held the lock well under a second, no checkpoint failed, and no verdict came out of its logs."""
    [run] = [p for p in RUNS if p.parent.name.startswith("3.3.6-") and p.name == "directory-scan"]
    truth = json.loads((run / "truth.json").read_text())
    scans = truth["directory_scans"]
    assert scans["replicas"] == 3_000_000 and len(scans["holds"]) >= 2
    assert all(h["held_ms"] < 1_000 for h in scans["holds"])
    assert truth["failed_checkpoints"] == [] and analyze([str(run)]) == []


SUBTASK_PAIR = "3.4.1-2.3.0"
"""The pair whose Flink logs each checkpoint's span with a child per task and subtask (2.3.0,
``CHILDREN_SPANS_PER_SUBTASK``)."""
STORAGE_PHASE = "asynchronous part (the upload of"
BEFORE_UPLOAD = "its upload never began: the time went in its start delay (barriers stuck behind buffered records)"


def test_the_subtask_pair_ran_the_hdfs_faults_that_matter_with_per_subtask_spans() -> None:
    runs = {p.name: p for p in RUNS if p.parent.name == SUBTASK_PAIR}
    assert {"control", "slow-disk", "lock-held", "datanode-pause", "backpressure"} <= set(runs), sorted(runs)
    for name, run in runs.items():
        truth = json.loads((run / "truth.json").read_text())
        assert truth["span_detail_level"] == "CHILDREN_SPANS_PER_SUBTASK", name
        jm = next(run.glob("flink-*-standalonesession-*.log"))
        assert "name=Checkpoint_Subtask" in jm.read_text(), name


def test_each_verdict_names_the_subtask_its_taskmanager_and_the_phase(
        run: tuple[dict[str, Any], list[dict[str, Any]], Path]) -> None:
    """Where the spans have children, every verdict says which subtask held the checkpoint, on which TaskManager
    (its log's host), and, for a checkpoint that expired, where its time went: the upload for a storage stall,
    before it for backpressure. With two TaskManagers and every state file on one DataNode, it is the one whose file
    the slow DataNode took."""
    truth, verdicts, _ = run
    if truth.get("span_detail_level") is None:
        return
    found = _by_checkpoint(verdicts)
    expired = {(f["job_id"], int(f["checkpoint_id"])) for f in truth["failed_checkpoints"] if f["reason"] == "expired"}
    wrong = []
    for want in truth["expected"]:
        key = (want["job_id"], int(want["checkpoint_id"]))
        text = found[key]["root_cause"]["explanation"]
        phase = BEFORE_UPLOAD if want["code"] == "FLINK_BACKPRESSURE" else STORAGE_PHASE
        phase = phase if key in expired else "acknowledged"
        writers = truth.get("slow_writers", {}).get(str(want["checkpoint_id"]))
        hosts = writers if writers is not None else ["lab-tm"]
        named = [h for h in ("lab-tm", "lab-tm2") if f"({h})" in text and " on TaskManager" in text]
        if "Flink's per-subtask spans show" not in text or phase not in text or not set(named) <= set(hosts) \
                or not named:
            wrong.append(f"checkpoint {want['checkpoint_id']}: want {hosts}, {phase!r}: {text}")
    assert not wrong, "\n".join(wrong)


def test_every_failed_checkpoint_gets_a_verdict(run: tuple[dict[str, Any], list[dict[str, Any]], Path]) -> None:
    truth, verdicts, _ = run
    found = _by_checkpoint(verdicts)
    lost = [(f["job_id"], f["checkpoint_id"]) for f in truth["failed_checkpoints"]
            if (f["job_id"], int(f["checkpoint_id"])) not in found]
    assert not lost, f"no verdict for failed checkpoints {lost}; verdicts for {sorted(found)}"


def test_expected_code_on_the_faulted_host(run: tuple[dict[str, Any], list[dict[str, Any]], Path]) -> None:
    truth, verdicts, _ = run
    found = _by_checkpoint(verdicts)
    wrong = []
    for want in truth["expected"]:
        got = found.get((want["job_id"], int(want["checkpoint_id"])))
        cause = got["root_cause"] if got else {}
        if cause.get("code") != want["code"] or not set(want["hosts"]) <= set(cause.get("hosts") or ()):
            wrong.append(f"checkpoint {want['checkpoint_id']}: want {want['code']} on {want['hosts']}, "
                         f"got {cause.get('code')} on {cause.get('hosts')}: {cause.get('title')}")
    assert not wrong, "\n".join(wrong)


def test_no_directory_scan_blame_without_the_truth_saying_so(
        run: tuple[dict[str, Any], list[dict[str, Any]], Path]) -> None:
    truth, verdicts, _ = run
    allowed = {(w["job_id"], int(w["checkpoint_id"])) for w in truth["expected"] if w["code"] == "HDFS_DIRECTORY_SCAN"}
    blamed = [(v["checkpoint_id"], v["root_cause"]["title"]) for v in verdicts
              if v["root_cause"]["code"] == "HDFS_DIRECTORY_SCAN" and (v["job_id"], int(v["checkpoint_id"])) not in allowed]
    assert not blamed, blamed


def test_no_log_in_the_input_is_reported_missing(run: tuple[dict[str, Any], list[dict[str, Any]], Path]) -> None:
    """Every daemon of the lab cluster has its log in the run, so coverage has nothing to call missing: an entry is a
    present log misread (a file whose name or lines were not recognised, coverage not advanced by its own lines)."""
    _, verdicts, path = run
    present = sorted(m["host"] for f in path.iterdir() if (m := FILE_HOST.match(f.name)))
    reported = sorted({(v["checkpoint_id"], m["host"], m["role"], m.get("why")) for v in verdicts
                       for m in v["coverage"]["missing"]}, key=str)
    assert not reported, f"reported missing: {reported}; logs in the input: {present}"


def test_no_verdict_without_a_failed_checkpoint(run: tuple[dict[str, Any], list[dict[str, Any]], Path]) -> None:
    truth, verdicts, _ = run
    if truth["failed_checkpoints"]:
        return
    assert not verdicts, [(v["checkpoint_id"], v["root_cause"]["code"]) for v in verdicts]


def test_scanner_verdicts_name_the_fix_the_stack_shows(run: tuple[dict[str, Any], list[dict[str, Any]], Path]) -> None:
    """A scanner blamed on a DataNode before HDFS-15415 (3.2.1, a hold in DirectoryScanner.scan) names that issue,
    an upgrade only to releases with its fix, and no setting that would not shorten the locked part."""
    truth, verdicts, _ = run
    for v in verdicts:
        if v["root_cause"]["code"] != "HDFS_DIRECTORY_SCAN":
            continue
        assert not any("throttle" in step for step in v["remediation"]), v["remediation"]
        if truth["hadoop"] in ("3.2.1", "3.3.0"):
            assert v["root_cause"]["known_issue"] == "HDFS-15415", v["root_cause"]
            upgrade = [step for step in v["remediation"] if step.startswith("Upgrade HDFS")]
            assert upgrade and "3.2.2, 3.3.1" in upgrade[0], v["remediation"]


def test_an_outlook_uses_only_what_was_logged_before_it(
        run: tuple[dict[str, Any], list[dict[str, Any]], Path]) -> None:
    _, verdicts, _ = run
    for v in verdicts:
        outlook = v.get("outlook")
        if not outlook:
            continue
        for w in outlook["windows"]:
            assert w["last"] is None or w["last"] <= outlook["as_of"], (outlook["as_of"], w)
            assert w["expected"] is None or w["expected"] > outlook["as_of"], (outlook["as_of"], w)


def test_an_early_warning_only_where_the_truth_expects_one(
        run: tuple[dict[str, Any], list[dict[str, Any]], Path]) -> None:
    """Where the state grew toward the timeout, a risk is raised at least two checkpoints before the first failure;
    the last prediction before the failure has the failure inside its window and its point within one and a half
    trigger spacings (the first checkpoint past the crossing expires, and a duration's noise near the timeout moves
    that by a checkpoint either way). On every other real run no such risk is raised at all (a Kafka sink's
    transaction warnings are judged in test_kafka_fixtures)."""
    truth, _, path = run
    raised = [r for r in RISKS[path] if r["status"] == "raised" and r["cause"] != "transaction_timeout"]
    want = truth.get("risk")
    if not want:
        assert not raised, [(r["as_of"], r["headline"]) for r in raised]
        return
    first_ms = datetime.fromisoformat(want["first_failure"].replace("Z", "+00:00")).timestamp() * 1000
    spacing = want["trigger_spacing_ms"]
    before = [r for r in raised if r["as_of_ms"] < first_ms - 2 * spacing]
    assert before, f"no risk raised two checkpoints before the first failure at {want['first_failure']}: {RISKS[path]}"
    states = [r for r in RISKS[path] if r["risk_id"] == before[0]["risk_id"]]
    last = [r for r in states if r["status"] in ("raised", "updated") and r["as_of_ms"] < first_ms][-1]
    if last["timeout_source"] == "checkpoint_interval":
        # no log shows a timeout set in the job's code: judged against the spacing, which checkpoints outgrow before
        # they outgrow any timeout longer than it
        assert last["expiry_at_ms"] <= first_ms, (last["as_of"], last["expiry_at_ms"] - first_ms)
    else:
        assert last["expiry_earliest_ms"] <= first_ms <= last["expiry_latest_ms"], last
        assert abs(last["expiry_at_ms"] - first_ms) <= 1.5 * spacing, (last["as_of"], last["expiry_at_ms"] - first_ms)
    assert states[-1]["status"] == "superseded", [r["status"] for r in states]


def test_a_timeout_set_in_code_is_judged_against_the_interval_or_the_jobs_rest_configuration() -> None:
    """The timeout the job set in its code shows in no log: the warning comes from the logs alone, judged against
    the checkpoints' spacing; with `flink-stats`' reading of the job's REST configuration (recorded in the same run)
    it is judged against the job's real timeout and still comes before the first expiry."""
    from correlator.adapters.flink_rest import CheckpointPoller, FlinkRest
    from correlator.core.explain.risk import RiskWatch
    from correlator.offline.analyze import ordered_events
    from tests.support.fake_jobmanager import fake_jobmanager

    run = DATA / "3.3.6-1.20.1" / "state-growth-timeout-in-code"
    truth = json.loads((run / "truth.json").read_text())
    first_ms = datetime.fromisoformat(truth["risk"]["first_failure"].replace("Z", "+00:00")).timestamp() * 1000
    assert not any("execution.checkpointing.timeout" in f.read_text() for f in run.glob("*.log"))
    logs_only = [r for r in RISKS.get(run) or _risks(run) if r["status"] == "raised"]
    assert logs_only and logs_only[0]["timeout_source"] == "checkpoint_interval"
    assert logs_only[0]["as_of_ms"] < first_ms
    with fake_jobmanager(DATA.parent / "flink-rest" / "1.20.1-state-growth-timeout-in-code") as url:
        [setting] = CheckpointPoller(FlinkRest(url), "default").job_settings()
    assert setting.value_ms == 10_000 and setting.job_id == truth["failed_checkpoints"][0]["job_id"]
    watch = RiskWatch()
    with_rest = [r for e in sorted([setting, *ordered_events([str(run)])], key=lambda e: e.ts_ms)
                 for r in watch.observe(e)]
    raised = [r for r in with_rest if r.status == "raised"]
    assert raised and (raised[0].timeout_source, raised[0].timeout_ms) == ("job_configuration", 10_000)
    assert raised[0].as_of_ms < first_ms
    last = [r for r in with_rest if r.status in ("raised", "updated") and r.as_of_ms < first_ms][-1]
    assert last.expiry_earliest_ms is not None and last.expiry_latest_ms is not None
    assert last.expiry_earliest_ms <= first_ms <= last.expiry_latest_ms, last.headline


def test_the_one_slow_taskmanager_is_named_on_1_20_through_the_rest_statistics() -> None:
    """Flink 1.20.1 logs no span: the REST answers recorded in the same run (`flink-stats`' reading) give the
    subtask spans and placements, and the verdict names the subtask, the TaskManager whose file the slow DataNode took
    (the truth's, read from the logs) and the phase, as on 2.3."""
    from correlator.adapters.flink_rest import CheckpointPoller, FlinkRest
    from correlator.offline.analyze import ordered_events, run_engine
    from tests.support.fake_jobmanager import fake_jobmanager

    run = DATA / "3.3.6-1.20.1" / "slow-disk-one-taskmanager"
    truth = json.loads((run / "truth.json").read_text())
    assert not any("Reported span" in f.read_text() for f in run.glob("*.log"))
    with fake_jobmanager(DATA.parent / "flink-rest" / "1.20.1-slow-disk-one-taskmanager") as url:
        spans, detail = CheckpointPoller(FlinkRest(url), "default").poll_with_subtasks()
    events = sorted([*ordered_events([str(run)]), *spans, *detail], key=lambda e: e.ts_ms)
    found = {(v.job_id, v.checkpoint_id): v for v in run_engine(events)}
    for want in truth["expected"]:
        verdict = found[(want["job_id"], int(want["checkpoint_id"]))]
        text = verdict.root_cause.explanation
        [writer] = truth["slow_writers"][str(want["checkpoint_id"])]
        other = "lab-tm" if writer == "lab-tm2" else "lab-tm2"
        assert verdict.root_cause.code == want["code"] and set(want["hosts"]) <= set(verdict.root_cause.hosts)
        assert f"({writer}) never acknowledged the checkpoint" in text and f"({other})" not in text, text
        assert STORAGE_PHASE in text, text


def _risks(run: Path) -> list[dict[str, Any]]:
    _analyze(run)
    return RISKS[run]


NOT_FROM_THE_LAB = {
    "TASKMANAGER_JVM_PAUSE": "judged on generated logs: the lab makes no GC pause long enough",
    "HDFS_TOKEN_EXPIRED": "judged on the sources' wordings: a real delegation token needs Kerberos",
    "UNEXPLAINED": "no cause",
    "INSUFFICIENT_DATA": "no cause",
}


def test_every_cause_code_but_the_named_ones_comes_out_of_a_real_daemon() -> None:
    """The README says which codes the lab does not prove, and why; every other code is some run's truth."""
    from correlator.core.explain.causes import Code

    proved = {w["code"] for p in RUNS for w in json.loads((p / "truth.json").read_text())["expected"]}
    assert proved == set(Code) - set(NOT_FROM_THE_LAB)
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    assert all(f"`{code}` is judged on" in readme or code in ("UNEXPLAINED", "INSUFFICIENT_DATA")
               for code in NOT_FROM_THE_LAB)
