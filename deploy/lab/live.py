"""The live lab: every daemon's log file shipped as it is written by Debian's rsyslog (imfile → omkafka) into a real
Kafka broker, the correlator worker deciding, and a table of truth against verdict.

    python deploy/lab/live.py [--hadoop V] [--flink V] [--scenario NAME ...] [--json OUT] [--silent-shipper]
    python deploy/lab/live.py --storage s3 [--flink V] [--scenario s3-NAME ...] [--json OUT]   (live_s3.py)

One broker (deploy/local/kafka.sh on a free port) and one worker serve the whole run; each scenario gets its own
rsyslogd instance (own config, pid file and work dir — never the system's) that tails that scenario's log directory,
and its own cluster name, so one worker keeps the scenarios apart as it would keep real clusters apart.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from lab import DEFAULT_FLINK, DEFAULT_HADOOP, exit_on_signals, run_scenario, say
from livestack import (IDLE_TIMEOUT_MS, RUN, VERDICT_WAIT, Rsyslog, Stack, Verdicts, datetime_of, latest,
                       rsyslog_conf, run_live, shutil_rm)
from scenarios import SCENARIOS, default_scenarios, unsupported


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


def failed_row(name: str, error: str) -> dict[str, Any]:
    return {"truth": {"scenario": name, "fault": {"kind": "lab error", "host": None, "start": "", "end": ""},
                      "failed_checkpoints": [], "expected": []}, "verdicts": [], "delays": [],
            "judged": {"ok": False, "problems": [error]}}


def scenario_row(name: str, args: argparse.Namespace, stack: Stack, reader: Verdicts) -> dict[str, Any]:
    """One HDFS scenario shipped live (the faulted DataNode's shipper silent during its fault with --silent-shipper),
    judged on what the worker published."""
    cluster = f"lab-{name}"
    shipper = Rsyslog(RUN / "rsyslog" / name)
    silent = SCENARIOS[name].target if args.silent_shipper else None
    late = Rsyslog(RUN / "rsyslog" / f"{name}-{silent}")
    logs_at: list[Path] = []

    def ship(logs: Path) -> None:
        shutil_rm(shipper.dir)
        shutil_rm(late.dir)
        logs_at.append(logs)
        shipper.start(rsyslog_conf(logs, shipper.dir / "work", stack.broker, cluster, stack.topics(),
                                   lambda host: host != silent))
        if silent is not None:
            late.start(rsyslog_conf(logs, late.dir / "work", stack.broker, cluster, stack.topics(),
                                    lambda host: host == silent))

    def hush() -> None:
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
    finally:
        shipper.stop()
        late.stop()
    got = reader.of(cluster)
    if silent is not None:
        row = judge_silent(truth, first, latest(got), logs_at[0], cluster, silent, reader.risks_of(cluster))
        say(f"{name}: {'as expected' if row['judged']['ok'] else row['judged']['problems']}")
        return row
    fault_end = datetime_of(truth["fault"]["end"])
    row = {"truth": truth, "verdicts": [v for _, v in got], "delays": [t - fault_end for t, _ in got],
           "judged": judge(truth, got, reader.risks_of(cluster)), "shipped_until": end,
           "risks": reader.risks_of(cluster)}
    say(f"{name}: {len(got)} verdict(s); {'as expected' if row['judged']['ok'] else row['judged']['problems']}")
    return row


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
    ap.add_argument("--storage", choices=["hdfs", "s3"], default="hdfs",
                    help="s3: the object-store scenarios, Flink checkpointing to s3:// (see live_s3.py)")
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--storage", choices=["hdfs", "s3"], default="hdfs")
    storage, rest = pre.parse_known_args(argv)
    if storage.storage == "s3":
        import live_s3

        return live_s3.main(rest)
    args = ap.parse_args(argv)
    exit_on_signals()
    names = args.scenario or default_scenarios(args.hadoop)
    if unsupported(names, args.hadoop):
        raise SystemExit(f"cannot run with Hadoop {args.hadoop} here: {', '.join(unsupported(names, args.hadoop))}")
    if not args.scenario and (left := unsupported(list(SCENARIOS), args.hadoop)):
        say(f"not run with Hadoop {args.hadoop} here: {', '.join(left)}")
    t0 = time.monotonic()
    rows = run_live(names, lambda name, stack, reader: scenario_row(name, args, stack, reader), failed_row, say)
    print(table(rows))
    print(f"\nmake lab: {len(names)} scenario(s) in {time.monotonic() - t0:.0f}s "
          f"(Hadoop {args.hadoop}, Flink {args.flink})")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")
    return 0 if all(r["judged"]["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
