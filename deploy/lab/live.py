"""The live lab: every daemon's log file shipped as it is written by Debian's rsyslog (imfile → omkafka) into a real
Kafka broker, the correlator worker deciding, and a table of truth against verdict.

    python deploy/lab/live.py [--hadoop V] [--flink V] [--scenario NAME ...] [--json OUT] [--silent-shipper]

One broker (deploy/local/kafka.sh on a free port) and one worker serve the whole run; each scenario gets its own
rsyslogd instance (own config, pid file and work dir — never the system's) that tails that scenario's log directory,
and its own cluster name, so one worker keeps the scenarios apart as it would keep real clusters apart.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cluster import HOME, ROOT, USER, LabError, free_ports, stop_process
from lab import DEFAULT_FLINK, DEFAULT_HADOOP, exit_on_signals, run_scenario, say
from scenarios import SCENARIOS, default_scenarios, unsupported

RUN = HOME / "live"
PY = Path(sys.executable)
VERDICT_WAIT = 150.0
# A lab run is short and its daemons stop right after the recovery: wait 60 s of event time for late evidence (a
# paused DataNode logs its pause when it resumes, 30 s on) and let a silent log stop holding decisions after 20 s.
LOOKAHEAD_MS = 60_000
IDLE_TIMEOUT_MS = 20_000
RSYSLOGD = os.environ.get("RSYSLOGD", "/usr/sbin/rsyslogd")
# The daemons' stock file names, and the host each one names (what a shipper on that host would report).
FILES = {
    f"hadoop-{USER}-namenode-lab-nn.log": ("lab-nn", "logs.hdfs"),
    **{f"hadoop-{USER}-datanode-{h}.log": (h, "logs.hdfs") for h in ("lab-dn1", "lab-dn2", "lab-dn3")},
    f"flink-{USER}-standalonesession-0-lab-jm.log": ("lab-jm", "logs.flink"),
    f"flink-{USER}-taskexecutor-0-lab-tm.log": ("lab-tm", "logs.flink"),
    f"flink-{USER}-taskexecutor-1-lab-tm2.log": ("lab-tm2", "logs.flink"),  # a scenario's second TaskManager
    f"flink-{USER}-client-lab-jm.log": ("lab-jm", "logs.flink"),
}


def rsyslog_conf(logs: Path, work: Path, broker: str, cluster: str, topics: dict[str, str],
                 hosts: Callable[[str], bool] = lambda _host: True) -> str:
    """imfile per daemon log (a record starts with a timestamp; stack lines join it), one JSON envelope per record;
    only the logs of the ``hosts`` it accepts."""
    out = [
        f'global(workDirectory="{work}" maxMessageSize="4m" parser.escapeControlCharactersOnReceive="off")',
        'module(load="imfile" mode="inotify")',
        'module(load="omkafka")',
        'template(name="envelope" type="list" option.jsonf="on") {',
        '  property(outname="message" name="msg" format="jsonf")',
        '  property(outname="host" name="$!host" format="jsonf")',
        '  property(outname="file" name="$!metadata!filename" format="jsonf")',
        '  property(outname="cluster" name="$!cluster" format="jsonf")',
        '}',
        'template(name="key" type="string" string="%$!host%:%$!metadata!filename%")',
    ]
    for i, (name, (host, topic)) in enumerate(sorted(FILES.items())):
        if not hosts(host):
            continue
        out += [
            f'ruleset(name="f{i}") {{',
            f'  set $!host = "{host}";',
            f'  set $!cluster = "{cluster}";',
            f'  action(type="omkafka" broker=["{broker}"] topic="{topics[topic]}" template="envelope" key="key"',
            '         dynaKey="on" confParam=["message.max.bytes=10000000", "linger.ms=50"])',
            '}',
            f'input(type="imfile" file="{logs / name}" tag="{host}" ruleset="f{i}" addMetadata="on"',
            '      startmsg.regex="^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}" readTimeout="1"',
            '      freshStartTail="off")',
        ]
    return "\n".join(out) + "\n"


@dataclass
class Rsyslog:
    """Our own rsyslogd: foreground (-n), own config and pid file; stopped by its pid."""

    dir: Path
    popen: subprocess.Popen[bytes] | None = None

    def start(self, conf: str) -> None:
        work = self.dir / "work"
        work.mkdir(parents=True, exist_ok=True)
        cfg = self.dir / "rsyslog.conf"
        cfg.write_text(conf)
        check = subprocess.run([RSYSLOGD, "-N1", "-f", str(cfg)], capture_output=True, text=True)
        if check.returncode != 0:
            raise LabError(f"rsyslogd rejects {cfg}: {check.stderr.strip() or check.stdout.strip()}")
        out = (self.dir / "rsyslogd.out").open("ab")
        self.popen = subprocess.Popen([RSYSLOGD, "-n", "-f", str(cfg), "-i", str(self.dir / "rsyslogd.pid")],
                                      stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                      start_new_session=True)

    def stop(self) -> None:
        if self.popen:
            stop_process(self.popen)


@dataclass
class Stack:
    """Kafka and the correlator worker for one live run."""

    dir: Path
    kafka_port: int = 0
    worker: subprocess.Popen[bytes] | None = None
    web_port: int = 0
    suffix: str = field(default_factory=lambda: f"lab{int(time.time())}")

    @property
    def broker(self) -> str:
        return f"127.0.0.1:{self.kafka_port}"

    def topics(self) -> dict[str, str]:
        return {n: f"{n}.{self.suffix}" for n in ("logs.flink", "logs.hdfs", "logs.s3", "correlator.events",
                                                 "correlator.verdicts", "correlator.risks", "correlator.deadletter")}

    def env(self) -> dict[str, str]:
        t = self.topics()
        return {**os.environ, "CORRELATOR_BOOTSTRAP_SERVERS": self.broker,
                "CORRELATOR_TOPIC_LOGS_FLINK": t["logs.flink"], "CORRELATOR_TOPIC_LOGS_HDFS": t["logs.hdfs"],
                "CORRELATOR_TOPIC_LOGS_S3": t["logs.s3"],
                "CORRELATOR_TOPIC_EVENTS": t["correlator.events"], "CORRELATOR_TOPIC_VERDICTS": t["correlator.verdicts"],
                "CORRELATOR_TOPIC_RISKS": t["correlator.risks"],
                "CORRELATOR_TOPIC_DEADLETTER": t["correlator.deadletter"],
                "CORRELATOR_WORKER_ID": f"correlator-{self.suffix}", "CORRELATOR_LOOKAHEAD_MS": str(LOOKAHEAD_MS),
                "CORRELATOR_IDLE_TIMEOUT_MS": str(IDLE_TIMEOUT_MS),
                "CORRELATOR_WEB_PORT": str(self.web_port), "CORRELATOR_DATA_DIR": str(self.dir / "worker-data"),
                "CORRELATOR_LOG_LEVEL": "WARNING"}

    def _kafka(self, action: str) -> None:
        env = {**os.environ, "KAFKA_PORT": str(self.kafka_port), "KAFKA_STATE_DIR": str(self.dir / "kafka"),
               "PYTHON": str(PY)}
        if subprocess.run(["bash", str(ROOT / "deploy" / "local" / "kafka.sh"), action], env=env).returncode != 0:
            raise LabError(f"kafka.sh {action} failed")

    def start(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        from correlator.demo import free_port

        self.kafka_port = free_port(3)  # kafka.sh puts the controller on the next port
        self.web_port = free_ports(1)[0]
        self._kafka("start")
        cli = [str(PY), "-m", "correlator.cli"]
        if subprocess.run([*cli, "topics", "apply"], env=self.env(), cwd=ROOT, capture_output=True).returncode:
            raise LabError("correlator topics apply failed")
        log = (self.dir / "worker.log").open("ab")
        self.worker = subprocess.Popen([*cli, "worker"], env=self.env(), cwd=ROOT, stdout=log, stderr=log,
                                       start_new_session=True)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.worker.poll() is not None:
                raise LabError(f"the worker exited ({self.worker.returncode}); see {self.dir / 'worker.log'}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.web_port}/healthz", timeout=2) as r:
                    if json.loads(r.read()).get("ready"):
                        return
            except OSError:
                pass
            time.sleep(0.5)
        raise LabError("the worker was not ready within 120 s")

    def stop(self) -> None:
        if self.worker:
            stop_process(self.worker, 60)
        if self.kafka_port:
            self._kafka("stop")


class Verdicts:
    """Reads the verdict and risk topics as the worker writes them, noting when each record arrived."""

    def __init__(self, stack: Stack) -> None:
        from confluent_kafka import Consumer

        self.c = Consumer({"bootstrap.servers": stack.broker, "group.id": f"lab-reader-{stack.suffix}",
                           "auto.offset.reset": "earliest", "enable.auto.commit": False})
        self.c.subscribe([stack.topics()["correlator.verdicts"], stack.topics()["correlator.risks"]])
        self.seen: list[tuple[float, dict[str, Any]]] = []
        self.risks: list[dict[str, Any]] = []

    def poll(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            msg = self.c.poll(0.5)
            if msg is not None and msg.error() is None:
                record = json.loads(msg.value())
                if record.get("schema") == "correlator.risk/v1":
                    self.risks.append(record)
                else:
                    self.seen.append((time.time(), record))

    def of(self, cluster: str) -> list[tuple[float, dict[str, Any]]]:
        return [(t, v) for t, v in self.seen if v.get("cluster") == cluster]

    def risks_of(self, cluster: str) -> list[dict[str, Any]]:
        return [r for r in self.risks if r.get("cluster") == cluster]

    def close(self) -> None:
        self.c.close()


def judge_risks(truth: dict[str, Any], risks: list[dict[str, Any]]) -> list[str]:
    """The fixture test's: where the truth expects an early warning, one raised at least two checkpoints before the
    first failure, whose last prediction before it has the failure in its window and its point within one and a half
    trigger spacings, superseded by the failure; no risk raised anywhere else."""
    raised = [r for r in risks if r["status"] == "raised"]
    want = truth.get("risk")
    if not want:
        return [f"risk {r['risk_id']} raised at {r['as_of']} where none was expected" for r in raised]
    first, spacing = datetime_of(want["first_failure"]) * 1000, want["trigger_spacing_ms"]
    early = [r for r in raised if r["as_of_ms"] < first - 2 * spacing]
    if not early:
        return [f"no risk raised two checkpoints before the first failure at {want['first_failure']}"]
    states = [r for r in risks if r["risk_id"] == early[0]["risk_id"]]
    last = [r for r in states if r["status"] in ("raised", "updated") and r["as_of_ms"] < first][-1]
    problems = []
    if abs(last["expiry_at_ms"] - first) > 1.5 * spacing or not (
            last["expiry_earliest_ms"] <= first <= last["expiry_latest_ms"]):
        problems.append(f"the last prediction ({last['as_of']}) was {(last['expiry_at_ms'] - first) / 1000:+.1f} s "
                        f"off the real expiry (window {(last['expiry_earliest_ms'] - first) / 1000:+.1f} s to "
                        f"{(last['expiry_latest_ms'] - first) / 1000:+.1f} s, spacing {spacing / 1000:.1f} s)")
    if states[-1]["status"] != "superseded":
        problems.append(f"the warning ended {states[-1]['status']}, not superseded by the failure")
    return problems


def judge(truth: dict[str, Any], verdicts: list[tuple[float, dict[str, Any]]],
          risks: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The fixture test's assertions, on what the worker published."""
    by_ckpt = {(v["job_id"], int(v["checkpoint_id"])): (t, v) for t, v in verdicts}
    problems = judge_risks(truth, risks or [])
    for f in truth["failed_checkpoints"]:
        if (f["job_id"], int(f["checkpoint_id"])) not in by_ckpt:
            problems.append(f"no verdict for checkpoint {f['checkpoint_id']}")
    for w in truth["expected"]:
        t_v = by_ckpt.get((w["job_id"], int(w["checkpoint_id"])))
        rc = t_v[1]["root_cause"] if t_v else {}
        if rc.get("code") != w["code"] or not set(w["hosts"]) <= set(rc.get("hosts") or ()):
            problems.append(f"checkpoint {w['checkpoint_id']}: want {w['code']} on {w['hosts']}, "
                            f"got {rc.get('code')} on {rc.get('hosts')}")
    for t, v in verdicts:
        if v["root_cause"]["code"] == "HDFS_DIRECTORY_SCAN" and not any(
                w["code"] == "HDFS_DIRECTORY_SCAN" for w in truth["expected"]):
            problems.append(f"checkpoint {v['checkpoint_id']} blamed on the DirectoryScanner")
        # every daemon's log is shipped: nothing may be called missing
        problems += [f"checkpoint {v['checkpoint_id']}: {m['host']} ({m['role']}) reported missing: {m.get('why')}"
                     for m in v["coverage"]["missing"]]
    if not truth["failed_checkpoints"] and verdicts:
        problems.append(f"{len(verdicts)} verdict(s) without a failed checkpoint")
    return {"ok": not problems, "problems": problems}


def latest(got: list[tuple[float, dict[str, Any]]]) -> list[tuple[float, dict[str, Any]]]:
    """The highest revision of each verdict, as a consumer keeps them."""
    best: dict[str, tuple[float, dict[str, Any]]] = {}
    for t, v in got:
        if v["verdict_id"] not in best or int(v.get("revision") or 0) > int(best[v["verdict_id"]][1].get("revision") or 0):
            best[v["verdict_id"]] = (t, v)
    return list(best.values())


def judge_silent(truth: dict[str, Any], first: list[dict[str, Any]], final: list[tuple[float, dict[str, Any]]],
                 logs: Path, cluster: str, silent: str, risks: list[dict[str, Any]]) -> dict[str, Any]:
    """The faulted DataNode's shipper stopped during its fault: each first verdict names it (as the cause's host or
    the suspect whose log is missing), never "nothing abnormal"; each final revision equals `analyze` on the
    complete logs and passes the fixture test's assertions (``judge``)."""
    from correlator.core.explain.verdict import verdict_to_dict
    from correlator.offline.analyze import analyze

    problems = judge(truth, final, risks)["problems"]
    for v in first:
        rc = v["root_cause"]
        suspects = {m["host"] for m in v["coverage"]["missing"] if m.get("pointed_by")}
        if rc["code"] == "UNEXPLAINED" or silent not in set(rc["hosts"]) | suspects:
            problems.append(f"first verdict of checkpoint {v['checkpoint_id']}: {rc['code']} on {rc['hosts']}, "
                            f"suspects {sorted(suspects)}")
    offline = {v["verdict_id"]: v for v in map(verdict_to_dict, analyze([str(logs)], cluster=cluster))}
    shapes = {vid: (v["root_cause"]["code"], v["root_cause"]["hosts"]) for vid, v in offline.items()}
    streamed = {v["verdict_id"]: (v["root_cause"]["code"], v["root_cause"]["hosts"]) for _, v in final}
    if streamed != shapes:
        problems.append(f"final verdicts {streamed} differ from analyze's {shapes}")
    if not first:
        problems.append("no first verdict")
    return {"truth": truth, "verdicts": [v for _, v in final], "first": first, "delays": [0.0 for _ in final],
            "judged": {"ok": not problems, "problems": problems}}


def table(rows: list[dict[str, Any]]) -> str:
    head = ["scenario", "fault", "host", "window (UTC)", "failed", "verdict", "hosts", "conf", "known issue",
            "delay", "ok"]
    lines = []
    for r in rows:
        t = r["truth"]
        f = t["fault"]
        window = f"{f['start'][11:19]}–{f['end'][11:19]}"
        verdicts = r["verdicts"] or [None]
        for i, v in enumerate(verdicts):
            rc = v["root_cause"] if v else {}
            lines.append([
                t["scenario"] if i == 0 else "", f["kind"] if i == 0 else "", str(f["host"] or "-") if i == 0 else "",
                window if i == 0 else "",
                ",".join(str(c["checkpoint_id"]) for c in t["failed_checkpoints"]) or "-" if i == 0 else "",
                f"#{v['checkpoint_id']} {rc['code']}" if v else "-", ",".join(rc.get("hosts") or []) or "-",
                f"{rc['confidence']:.2f}" if v else "-", rc.get("known_issue") or "-",
                f"{r['delays'][i]:.0f}s" if v else "-", ("yes" if r["judged"]["ok"] else "NO") if i == 0 else "",
            ])
    widths = [max(len(str(x)) for x in col) for col in zip(head, *lines, strict=False)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return "\n".join([fmt.format(*head), fmt.format(*("-" * w for w in widths))] + [fmt.format(*ln) for ln in lines])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="live.py", description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--hadoop", default=DEFAULT_HADOOP)
    ap.add_argument("--flink", default=DEFAULT_FLINK)
    ap.add_argument("--scenario", action="append", choices=sorted(SCENARIOS),
                    help="repeatable; default: all but the directory-scan ones")
    ap.add_argument("--json", type=Path, help="also write the rows (truth, verdicts, judgement) here")
    ap.add_argument("--silent-shipper", action="store_true",
                    help="stop the faulted daemon's shipper when its fault starts and start it again once the first\n"
                         "verdicts are out: they must name the silent DataNode, their revisions equal `analyze`\n"
                         "on the complete logs")
    args = ap.parse_args(argv)
    exit_on_signals()
    names = args.scenario or default_scenarios(args.hadoop)
    if unsupported(names, args.hadoop):
        raise SystemExit(f"cannot run with Hadoop {args.hadoop} here: {', '.join(unsupported(names, args.hadoop))}")
    if not args.scenario and (left := unsupported(list(SCENARIOS), args.hadoop)):
        say(f"not run with Hadoop {args.hadoop} here: {', '.join(left)}")
    t0 = time.monotonic()
    stack = Stack(RUN)
    rows: list[dict[str, Any]] = []
    try:
        stack.start()
        say(f"Kafka on {stack.broker} and the worker are up ({time.monotonic() - t0:.0f}s)")
        reader = Verdicts(stack)
        for name in names:
            cluster = f"lab-{name}"
            shipper = Rsyslog(RUN / "rsyslog" / name)
            silent = SCENARIOS[name].target if args.silent_shipper else None
            late = Rsyslog(RUN / "rsyslog" / f"{name}-{silent}")
            logs_at: list[Path] = []

            def ship(logs: Path, shipper: Rsyslog = shipper, cluster: str = cluster, silent: str | None = silent,
                     late: Rsyslog = late) -> None:
                shutil_rm(shipper.dir)
                shutil_rm(late.dir)
                logs_at.append(logs)
                shipper.start(rsyslog_conf(logs, shipper.dir / "work", stack.broker, cluster, stack.topics(),
                                           lambda host: host != silent))
                if silent is not None:
                    late.start(rsyslog_conf(logs, late.dir / "work", stack.broker, cluster, stack.topics(),
                                            lambda host: host == silent))

            def hush(late: Rsyslog = late, silent: str | None = silent) -> None:
                if silent is not None and late.popen is not None and late.popen.poll() is None:
                    say(f"{name}: {silent}'s shipper stopped as its fault starts")
                    late.stop()

            try:
                truth, _ = run_scenario(SCENARIOS[name], args.hadoop, args.flink, on_logs=ship, on_fault=hush)
                end = time.time()
                want = len(truth["failed_checkpoints"])
                deadline = time.monotonic() + (VERDICT_WAIT if want else 20)
                while time.monotonic() < deadline and len(reader.of(cluster)) < want:
                    reader.poll(1)
                reader.poll(3)
                if silent is not None:
                    first = [v for _, v in reader.of(cluster)]
                    say(f"{name}: {len(first)} first verdict(s) out; {silent}'s shipper started again")
                    late.start(rsyslog_conf(logs_at[0], late.dir / "work", stack.broker, cluster, stack.topics(),
                                            lambda host: host == silent))
                    reader.poll(IDLE_TIMEOUT_MS / 1000 * 3)
            except LabError as e:
                say(f"{name}: FAILED: {e}")
                rows.append({"truth": {"scenario": name, "fault": {"kind": "lab error", "host": None, "start": "",
                             "end": ""}, "failed_checkpoints": [], "expected": []}, "verdicts": [], "delays": [],
                             "judged": {"ok": False, "problems": [str(e)]}})
                continue
            finally:
                shipper.stop()
                late.stop()
            got = reader.of(cluster)
            if silent is not None:
                rows.append(judge_silent(truth, first, latest(got), logs_at[0], cluster, silent,
                                         reader.risks_of(cluster)))
                say(f"{name}: {'as expected' if rows[-1]['judged']['ok'] else rows[-1]['judged']['problems']}")
                continue
            fault_end = datetime_of(truth["fault"]["end"])
            rows.append({"truth": truth, "verdicts": [v for _, v in got], "delays": [t - fault_end for t, _ in got],
                         "judged": judge(truth, got, reader.risks_of(cluster)), "shipped_until": end,
                         "risks": reader.risks_of(cluster)})
            say(f"{name}: {len(got)} verdict(s); {'as expected' if rows[-1]['judged']['ok'] else rows[-1]['judged']['problems']}")
        reader.close()
    finally:
        stack.stop()
    print(table(rows))
    print(f"\nmake lab: {len(names)} scenario(s) in {time.monotonic() - t0:.0f}s "
          f"(Hadoop {args.hadoop}, Flink {args.flink})")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")
    return 0 if all(r["judged"]["ok"] for r in rows) else 1


def shutil_rm(path: Path) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)


def datetime_of(iso: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


if __name__ == "__main__":
    sys.exit(main())
