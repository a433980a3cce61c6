"""The correlator lab: real HDFS and Flink from Maven jars, real faults, real logs, ground truth per run.

    python deploy/lab/lab.py fetch [--hadoop V] [--flink V] [--flink-layout text|json]
    python deploy/lab/lab.py run [--hadoop 3.3.6] [--flink 1.20.1] [--scenario NAME ...] [--fixtures DIR]
                                 [--flink-layout text|json]
    python deploy/lab/lab.py live ...            (see live.py: through rsyslog, Kafka and the worker)

Every scenario gets a fresh cluster under `$LAB_HOME/<hadoop>-<flink>/<scenario>/` (conf, data, logs, truth.json;
LAB_HOME defaults to /tmp/correlator-lab);
with --fixtures the logs (trimmed to the run's relevant span) and the truth are copied to
`DIR/<hadoop>-<flink>/<scenario>/`. Loopback only; every process is stopped by pid.

--flink-layout json: the JobManager, TaskManager and client write their stock-named log files with log4j2's
JsonTemplateLayout in its ECS template (the log4j-layout-template-json jar, in the log4j version of Flink's libs, on
their class path only then); the run's directories are then named `<scenario>-json`.
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path

from broker import VERSION as broker_version
from broker import Broker
from cluster import HOME, Cluster, LabError, fetch, kafka_connector
from confs import FLINK_LAYOUTS
from rest import RestRecorder
from faults import Fault
from scenarios import (COMPLETED, SCENARIOS, SPAN_DETAIL_FROM, JobLog, Scenario, default_scenarios, flink_line,
                       flink_record, iso, truth, unsupported)
from trim import copy_trimmed

DEFAULT_HADOOP = "3.3.6"
DEFAULT_FLINK = "1.20.1"
RECOVERY_TIMEOUT = 150.0


def say(msg: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} lab: {msg}", flush=True)


def run_name(scenario: str, flink_layout: str = "text") -> str:
    """A run's directory name: the scenario's, `-json` added when the Flink logs are JSON."""
    return scenario if flink_layout == "text" else f"{scenario}-{flink_layout}"


def run_scenario(scenario: Scenario, hadoop: str, flink: str, *,
                 on_logs: Callable[[Path], None] | None = None, on_fault: Callable[[], None] | None = None,
                 flink_layout: str = "text", rest_dir: Path | None = None) -> tuple[dict[str, object], Path]:
    """One fresh cluster, one fault (repeated once when it failed no checkpoint); returns the truth and log dir.
    ``on_logs`` is called with the log directory before anything starts, ``on_fault`` as each fault starts."""
    kafka = scenario.transaction_timeout_ms is not None
    jars = fetch(hadoop, flink, flink_layout, traces=scenario.traces or flink_line(flink) >= SPAN_DETAIL_FROM,
                 kafka=kafka)
    run_dir = HOME / f"{hadoop}-{flink}" / run_name(scenario.name, flink_layout)
    shutil.rmtree(run_dir, ignore_errors=True)
    major = int(flink.split(".")[0])
    spans = jars.flink_traces_libs is not None
    cluster = Cluster(jars, run_dir, major, scenario.flink_settings(major, spans, jars.span_detail, jars.event_reporter),
                      flink_layout=flink_layout,
                      flink_hdfs=scenario.flink_hdfs(), nn_extra=dict(scenario.namenode_conf),
                      dn_common=scenario.datanode_settings(), taskmanagers=scenario.taskmanagers)
    if on_logs is not None:
        on_logs(cluster.logs)
    trigger = run_dir / "snapshot-trigger"
    fault = Fault(scenario, cluster, trigger)
    recorder: RestRecorder | None = None
    broker = Broker(run_dir) if kafka else None
    job_args = scenario.job_args
    t0 = time.monotonic()
    try:
        fault.mount()
        cluster.start_hdfs()
        say(f"{scenario.name}: HDFS up ({time.monotonic() - t0:.0f}s)")
        fault.prepare(lambda msg: say(f"{scenario.name}: {msg}"))
        if broker is not None:
            broker.start()
            job_args += ("--kafka", broker.servers, "--transaction-timeout-ms", str(scenario.transaction_timeout_ms))
            say(f"{scenario.name}: Kafka broker up on {broker.servers} ({time.monotonic() - t0:.0f}s)")
        cluster.start_flink()
        if rest_dir is not None:
            recorder = RestRecorder(int(str(cluster.ports["rest"])), rest_dir)
            recorder.start()
        job = cluster.submit(trigger, job_args)
        say(f"{scenario.name}: Flink up, job {job} submitted ({time.monotonic() - t0:.0f}s)")
        jobs = JobLog(cluster.jobmanager().log, cluster)
        jobs.wait(COMPLETED, 180)
        jobs.wait(COMPLETED, 60)
        attempts: list[dict[str, str]] = []
        failed: list[dict[str, object]] = []
        start = end = 0.0
        for _attempt in range(2):
            armed = fault.arm(lambda msg: say(f"{scenario.name}: {msg}"))
            line, said = scenario.starts_after
            m, _ = jobs.wait(line, 60, not_before=armed)
            start = time.time()
            if on_fault is not None:
                on_fault()
            fault.start()
            say(f"{scenario.name}: fault {scenario.kind} on {scenario.target or 'the cluster'} right after checkpoint "
                f"{m.group(1)} {said}")
            try:
                fault.hold(jobs)
            finally:
                fault.end()
            start, end = fault.span(start, time.time())
            attempts.append({"start": iso(start), "end": iso(end)})
            jobs.wait(COMPLETED, RECOVERY_TIMEOUT, not_before=end)
            # With a scanning DataNode every scan since the job began may have failed one: the truth has them all.
            failed = jobs.failures(since=0.0 if scenario.scan_host else start - 0.5)
            say(f"{scenario.name}: fault ended after {end - start:.1f}s; failed checkpoints: "
                f"{[f['checkpoint_id'] for f in failed] or 'none'} ({time.monotonic() - t0:.0f}s)")
            if failed or scenario.expected(hadoop) is None:
                break
        fault.settle(start)
        jobs.wait(COMPLETED, 60)  # one more after the recovery: every log runs past the failure's aftermath
        time.sleep(2)
        result = {**truth(scenario, hadoop, flink, cluster, start, end, failed, attempts, jobs), **fault.scan_truth()}
        if broker is not None:
            broker.copy_log(cluster.logs)
            result["kafka"] = kafka_truth(scenario, flink, broker, cluster.logs)
        (run_dir / "truth.json").write_text(json.dumps(result, indent=2) + "\n")
        return result, cluster.logs
    finally:
        if recorder is not None:
            recorder.stop.set()
            recorder.join(10)
        cluster.stop()
        if broker is not None:
            broker.stop()
        fault.cleanup()
        say(f"{scenario.name}: stopped every process ({time.monotonic() - t0:.0f}s in all)")


def kafka_truth(scenario: Scenario, flink: str, broker: Broker, logs: Path) -> dict[str, object]:
    """What the Kafka-sink scenarios must show: the producer's transaction timeout, every transaction the broker
    aborted for it (its id and when, from the broker's log; a loss record is expected for each), and every commit the
    sink's committer then failed (from the TaskManager's log)."""
    aborted = broker.aborted()
    return {"broker_version": broker_version, "connector": kafka_connector(flink),
            "transaction_timeout_ms": scenario.transaction_timeout_ms, "transactional_id_prefix": "lab-eos",
            "checkpoint_interval_ms": 5000, "aborted": aborted, "loss_expected": bool(aborted),
            "commit_failed": committer_failures(logs)}


def committer_failures(logs: Path) -> list[dict[str, str]]:
    """Each commit the sink's committer could not make, as the TaskManager logged it (time and message)."""
    out = []
    for tm in sorted(logs.glob("flink-*-taskexecutor-*.log")):
        for raw in tm.read_text(errors="replace").splitlines():
            t, line = flink_record(raw)
            failed = "Unable to commit" in line or "potentially lost" in line
            if t is not None and "KafkaCommitter" in line and failed:
                out.append({"at": iso(t), "message": line.split(" - ", 1)[-1][:300]})
    return out


def exit_on_signals() -> None:
    """SIGTERM/SIGINT run the clean-ups (every daemon stopped by pid), also when started in the background."""
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda n, _f: sys.exit(128 + n))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="lab.py", description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("command", choices=["fetch", "run"])
    ap.add_argument("--hadoop", default=DEFAULT_HADOOP)
    ap.add_argument("--flink", default=DEFAULT_FLINK)
    ap.add_argument("--scenario", action="append", choices=sorted(SCENARIOS),
                    help="repeatable; default: all but the directory-scan ones")
    ap.add_argument("--fixtures", type=Path, help="copy trimmed logs and truth to DIR/<hadoop>-<flink>/<scenario>/")
    ap.add_argument("--rest", type=Path, help="also record the JobManager's REST checkpoint statistics into\n"
                                              "DIR/<hadoop>-<flink>/<scenario>/ (tests of correlator flink-stats)")
    ap.add_argument("--flink-layout", choices=FLINK_LAYOUTS, default="text",
                    help="the Flink logs' layout: text (stock pattern) or json (log4j2 JsonTemplateLayout, ECS);\n"
                         "json runs are named <scenario>-json")
    args = ap.parse_args(argv)
    exit_on_signals()
    try:
        if args.command == "fetch":
            fetch(args.hadoop, args.flink, args.flink_layout)
            return 0
        names = args.scenario or default_scenarios(args.hadoop)
        if unsupported(names, args.hadoop):
            raise SystemExit(f"cannot run with Hadoop {args.hadoop} here: "
                             f"{', '.join(unsupported(names, args.hadoop))}")
        if not args.scenario and (left := unsupported(list(SCENARIOS), args.hadoop)):
            say(f"not run with Hadoop {args.hadoop} here: {', '.join(left)}")
        failures = 0
        for name in names:
            try:
                rest = args.rest / f"{args.hadoop}-{args.flink}" / name if args.rest else None
                result, logs = run_scenario(SCENARIOS[name], args.hadoop, args.flink, flink_layout=args.flink_layout,
                                            rest_dir=rest)
            except LabError as e:
                say(f"{name}: FAILED: {e}")
                failures += 1
                continue
            if args.fixtures:
                dest = args.fixtures / f"{args.hadoop}-{args.flink}" / run_name(name, args.flink_layout)
                copy_trimmed(logs, dest, result)
                say(f"{name}: fixtures in {dest}")
        return 1 if failures else 0
    except LabError as e:
        say(f"FAILED: {e}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
