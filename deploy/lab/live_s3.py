"""The live object-store lab (`make lab LAB_STORAGE=s3`): each scenario of objectstore.py (Flink checkpointing to
s3:// on s3proxy behind the lab's fault proxy) streamed through Debian's rsyslog into Kafka and the correlator worker,
the store's access log arriving late, as S3 delivers it.

    python deploy/lab/live.py --storage s3 [--flink 1.20.1] [--scenario s3-NAME ...] [--json OUT]

Per scenario (cluster `lab-<scenario>`), one shipper tails the Flink logs into logs.flink from the daemons' start; a
second ships the access log to logs.s3 only once the worker has published its verdicts from the client's lines (or
after a bounded wait where no checkpoint failed). Judged (``judge_s3``): each first verdict still wants the store's
log; each final verdict (the latest revision per checkpoint) has the scenario's code on the bucket and, unless the
client's lines already named that cause (the worker publishes a revision only when the cause changes), names the
job's prefix and quotes the store's deciding lines; a checkpoint whose first cause differs was revised; the final
causes equal `correlator analyze`'s on the complete logs; no verdict where no checkpoint failed.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lab import exit_on_signals
from livestack import (ACCESS_TOPIC, FILES, IDLE_TIMEOUT_MS, RUN, VERDICT_WAIT, Rsyslog, Stack, Verdicts,
                       datetime_of, latest, rsyslog_conf, run_live, shutil_rm)
from objectstore import ACCESS_LOG, SCENARIOS, run_scenario, say

FLINK_FILES = {name: ship for name, ship in FILES.items() if ship[1] == "logs.flink"}
ACCESS_FILES = {ACCESS_LOG: ("lab-s3", ACCESS_TOPIC)}
QUIET = IDLE_TIMEOUT_MS / 1000 + 10
"""Where no checkpoint failed: how long to listen for a verdict that should not come, before and after the access
log (the worker decides once a silent log has been idle for its idle timeout)."""
SAID = {"OBJECT_STORE_THROTTLED": "503 SlowDown", "OBJECT_STORE_SLOW": "the store took ",
        "OBJECT_STORE_CREDENTIALS": "400 ExpiredToken", "OBJECT_STORE_CONNECTION_LIMIT": "the store took "}
"""What the store's evidence item says for each code (the fixture test's reading of the access log)."""

Timed = list[tuple[float, dict[str, Any]]]
Key = tuple[str, int]


def key(v: dict[str, Any]) -> Key:
    return (str(v["job_id"]), int(v["checkpoint_id"]))


def cause(v: dict[str, Any]) -> tuple[str, tuple[str, ...]]:
    return (v["root_cause"]["code"], tuple(v["root_cause"]["hosts"] or ()))


def settled(truth: dict[str, Any], got: Timed) -> bool:
    """Every failed checkpoint's latest verdict has the scenario's code on the bucket."""
    final = {key(v): v for _, v in latest(got)}
    return all((k := (w["job_id"], int(w["checkpoint_id"]))) in final
               and cause(final[k]) == (w["code"], (truth["fault"]["bucket"],)) for w in truth["expected"])


def _final_problems(v: dict[str, Any], code: str, bucket: str, prefix: str) -> list[str]:
    rc, chk = v["root_cause"], v["checkpoint_id"]
    problems = []
    if cause(v) != (code, (bucket,)):
        problems.append(f"checkpoint {chk}: want {code} on {bucket}, got {rc['code']} on {rc['hosts']}")
    if f"s3://{bucket}/{prefix}/{v['job_id']}/" not in rc.get("explanation", ""):
        problems.append(f"checkpoint {chk}: the explanation names no s3://{bucket}/{prefix}/{v['job_id']}/")
    store = [e for e in v.get("evidence", ()) if e["role"] == "objectstore"]
    if code in SAID and not (store and all(SAID[code] in e["summary"] for e in store)):
        problems.append(f"checkpoint {chk}: the store's evidence does not say {SAID[code]!r}")
    return problems


def judge_s3(truth: dict[str, Any], first: list[dict[str, Any]], got: Timed,
             offline: list[dict[str, Any]]) -> list[str]:
    """What went wrong between the truth, the first verdicts (published before the access log was shipped), every
    verdict published (``got``) and `analyze`'s on the complete logs (``offline``); empty when all is as expected."""
    fault, final = truth["fault"], {key(v): v for _, v in latest(got)}
    bucket, prefix = fault["bucket"], fault["prefix"]
    firsts = {key(v): v for v in first}
    failed = {(f["job_id"], int(f["checkpoint_id"])) for f in truth["failed_checkpoints"]}
    expected = {(w["job_id"], int(w["checkpoint_id"])): w["code"] for w in truth["expected"]}
    problems = [f"checkpoint {k[1]}: a verdict, but it did not fail" for k in sorted(set(final) - failed)]
    problems += [f"checkpoint {k[1]} failed where the scenario expects none" for k in sorted(failed - set(expected))]
    for k, code in sorted(expected.items()):
        v, v1 = final.get(k), firsts.get(k)
        if v is None or v1 is None:
            problems.append(f"checkpoint {k[1]}: no {'verdict' if v is None else 'first verdict'}")
            continue
        if bucket not in {m["host"] for m in v1["coverage"]["missing"]}:
            problems.append(f"checkpoint {k[1]}: the first verdict does not want {bucket}'s access log")
        if cause(v1) != cause(v) and int(v.get("revision") or 0) < 1:
            problems.append(f"checkpoint {k[1]}: the cause changed from {cause(v1)} without a revision")
        if int(v.get("revision") or 0) == 0 and cause(v) == (code, (bucket,)):
            continue  # the client's lines named the cause (a refusal's code in its chain): nothing to revise
        problems += _final_problems(v, code, bucket, prefix)
    streamed = {v["verdict_id"]: cause(v) for v in final.values()}
    analyzed = {v["verdict_id"]: cause(v) for v in offline}
    if streamed != analyzed:
        problems.append(f"final verdicts {streamed} differ from analyze's {analyzed}")
    return problems


def checkpoint_rows(truth: dict[str, Any], first: Timed, got: Timed, fault_end: float,
                    shipped: float) -> list[dict[str, Any]]:
    """Per failed or decided checkpoint: its first and final cause, revisions, and when each came."""
    firsts = {key(v): (t, v) for t, v in first}
    final = {key(v): (t, v) for t, v in latest(got)}
    keys = sorted({(f["job_id"], int(f["checkpoint_id"])) for f in truth["failed_checkpoints"]} | set(final))
    out = []
    for k in keys:
        t1, v1 = firsts.get(k, (None, None))
        tn, vn = final.get(k, (None, None))
        rev = int(vn.get("revision") or 0) if vn else 0
        out.append({"checkpoint": k[1], "first": cause(v1)[0] if v1 else None, "final": cause(vn)[0] if vn else None,
                    "hosts": list(cause(vn)[1]) if vn else [], "revisions": rev,
                    "first_after_fault_s": None if t1 is None else round(t1 - fault_end, 1),
                    "revised_after_access_log_s": round(tn - shipped, 1) if tn is not None and rev else None})
    return out


def table(rows: list[dict[str, Any]]) -> str:
    head = ["scenario", "failed", "ckpt", "first verdict", "final verdict", "target", "rev", "first after fault",
            "revised after access log", "ok"]
    lines = []
    for r in rows:
        t = r["truth"]
        target = f"{t['fault'].get('bucket')}/{t['fault'].get('prefix')}"
        failed = ",".join(str(c["checkpoint_id"]) for c in t["failed_checkpoints"]) or "-"
        for i, c in enumerate(r["checkpoints"] or [None]):
            lines.append([
                t["scenario"] if i == 0 else "", failed if i == 0 else "", str(c["checkpoint"]) if c else "-",
                (c and c["first"]) or "-", (c and c["final"]) or "-", target if c and c["hosts"] else "-",
                str(c["revisions"]) if c else "-",
                f"{c['first_after_fault_s']:.0f}s" if c and c["first_after_fault_s"] is not None else "-",
                f"{c['revised_after_access_log_s']:.0f}s" if c and c["revised_after_access_log_s"] is not None
                else "-", ("yes" if r["judged"]["ok"] else "NO") if i == 0 else ""])
    widths = [max(len(str(x)) for x in col) for col in zip(head, *lines, strict=False)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return "\n".join([fmt.format(*head), fmt.format(*("-" * w for w in widths))] + [fmt.format(*ln) for ln in lines])


def _wait(reader: Verdicts, cluster: str, done: Callable[[Timed], bool], seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not done(reader.of(cluster)):
        reader.poll(1)


def run_one(name: str, flink: str, stack: Stack, reader: Verdicts) -> dict[str, Any]:
    """One scenario: the Flink logs shipped live, the access log once the client-side verdicts are out; judged."""
    from correlator.core.explain.verdict import verdict_to_dict
    from correlator.offline.analyze import analyze

    cluster = f"lab-{name}"
    client, store = Rsyslog(RUN / "rsyslog" / name), Rsyslog(RUN / "rsyslog" / f"{name}-access-log")

    def ship(logs: Path) -> None:
        shutil_rm(client.dir)
        shutil_rm(store.dir)
        client.start(rsyslog_conf(logs, client.dir / "work", stack.broker, cluster, stack.topics(),
                                  files=FLINK_FILES))

    try:
        result, logs = run_scenario(SCENARIOS[name], flink, on_logs=ship)
        truth: dict[str, Any] = dict(result)
        want = {(f["job_id"], int(f["checkpoint_id"])) for f in truth["failed_checkpoints"]}
        decided: Callable[[Timed], bool] = lambda got: bool(want) and want <= {key(v) for _, v in got}
        _wait(reader, cluster, decided, VERDICT_WAIT if want else QUIET)
        reader.poll(3)
        first = reader.of(cluster)
        shipped = time.time()
        say(f"{name}: {len(first)} verdict(s) from the Flink logs; shipping the access log now")
        store.start(rsyslog_conf(logs, store.dir / "work", stack.broker, cluster, stack.topics(), files=ACCESS_FILES))
        _wait(reader, cluster, lambda got: bool(want) and settled(truth, got), VERDICT_WAIT if want else QUIET)
        reader.poll(5)
    finally:
        client.stop()
        store.stop()
    got = reader.of(cluster)
    read = [str(logs / n) for n in (*FLINK_FILES, *ACCESS_FILES) if (logs / n).exists()]
    offline = [verdict_to_dict(v) for v in analyze(read, cluster=cluster)]
    problems = judge_s3(truth, [v for _, v in first], got, offline)
    row = {"truth": truth, "first": [v for _, v in first], "verdicts": [v for _, v in got],
           "checkpoints": checkpoint_rows(truth, first, got, datetime_of(str(truth["fault"]["end"])), shipped),
           "risks": reader.risks_of(cluster), "judged": {"ok": not problems, "problems": problems}}
    say(f"{name}: {'as expected' if not problems else problems}")
    return row


def failed_row(name: str, error: str) -> dict[str, Any]:
    return {"truth": {"scenario": name, "fault": {}, "failed_checkpoints": []}, "checkpoints": [],
            "judged": {"ok": False, "problems": [error]}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="live.py --storage s3", description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--flink", default="1.20.1")
    ap.add_argument("--scenario", action="append", choices=sorted(SCENARIOS), help="repeatable; default: all")
    ap.add_argument("--json", type=Path, help="also write the rows (truth, verdicts, judgement) here")
    args = ap.parse_args(argv)
    exit_on_signals()
    names = args.scenario or list(SCENARIOS)
    t0 = time.monotonic()
    rows = run_live(names, lambda name, stack, reader: run_one(name, args.flink, stack, reader), failed_row, say)
    print(table(rows))
    print(f"\nmake lab LAB_STORAGE=s3: {len(names)} scenario(s) in {time.monotonic() - t0:.0f}s (Flink {args.flink})")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")
    return 0 if all(r["judged"]["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
