"""The lab's object-store runs: Flink checkpointing to `s3://` on a real S3 server, with our fault proxy in front.

    python deploy/lab/objectstore.py run [--flink 1.20.1] [--s3-fs hadoop|native] [--scenario s3-throttling ...]
                                         [--fixtures DIR]

Per scenario, on loopback only and without Docker: s3proxy (`org.gaul:s3proxy` from Maven Central, its in-memory
blob store) serves S3; `faultproxy.py` stands in front of it, writes an S3 server access log record for every request
and, while the fault lasts, answers a share of checkpoint PUTs with `503 SlowDown` or holds them; a Flink standalone
cluster (JobManager and TaskManager, Flink's stock log4j files) with `flink-s3-fs-hadoop` from Maven Central in its
plugins directory runs the lab's job (keyed state of ~4 MB, a checkpoint every 5 s to `s3://lab-checkpoints/`, path-style
requests to the proxy, timeout 10 s). The fault starts right after a `Triggering checkpoint` line and lasts 30 s;
which checkpoints failed is read from the JobManager's log. Every process is stopped by pid. With --fixtures the
Flink logs (trimmed as the HDFS runs' are), the access log and truth.json go to `DIR/s3-<flink>/<scenario>/`.
"""

from __future__ import annotations

import argparse
import http.client
import json
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from cluster import CACHE, HERE, HOME, Cluster, LabError, _mvn, fetch, free_ports
from scenarios import COMPLETED, TRIGGERED, JobLog, iso
from trim import LEAD_SECONDS, LIMIT, copy_trimmed

S3PROXY = "2.4.1"
HADOOP = {1: "3.3.6", 2: "3.4.1"}
"""Per Flink major, the Hadoop of the Flink libs' own hdfs:// client, as the HDFS runs pair them; no HDFS daemon runs."""
BUCKET = "lab-checkpoints"
PREFIX = "flink/checkpoints"
ACCESS_LOG = "s3-access-lab-s3.log"
"""The proxy's S3 server access log; `lab-s3` is the store's host part, as the daemons' files carry theirs."""
HOLD_SECONDS = 30.0
RECOVERY_TIMEOUT = 150.0


def say(msg: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} lab-s3: {msg}", flush=True)


@dataclass(frozen=True)
class S3Scenario:
    name: str
    fault: dict[str, object]
    """The proxy's control settings while the fault lasts (empty: none)."""
    code: str | None
    """The code every failed checkpoint must get (None: no verdict is expected)."""
    settings: tuple[tuple[str, str], ...] = ()
    """Flink settings of the run beside the lab's (the S3 filesystem's own, such as its connection pool)."""
    path: str = PREFIX
    """The checkpoint directory in the bucket (an entropy marker in it is replaced per data file)."""


_WIDE = (("taskmanager.numberOfTaskSlots", "10"), ("parallelism.default", "10"))
"""Ten subtasks upload their state at once: enough writes a second for one prefix's rate to refuse some."""
SCENARIOS = {s.name: s for s in (
    S3Scenario("s3-throttling", {"put_503": 0.8, "prefix": PREFIX}, "OBJECT_STORE_THROTTLED"),
    S3Scenario("s3-slow-put", {"put_delay_s": 15, "prefix": PREFIX}, "OBJECT_STORE_SLOW"),
    S3Scenario("s3-expired-token", {"put_error": "ExpiredToken", "prefix": PREFIX}, "OBJECT_STORE_CREDENTIALS"),
    S3Scenario("s3-connection-limit", {"put_delay_s": 0.9, "prefix": PREFIX}, "OBJECT_STORE_CONNECTION_LIMIT",
               (("s3.connection.maximum", "1"), ("s3.connection.acquisition.timeout", "1s"),
                ("s3.connection.establish.timeout", "1000"), ("taskmanager.numberOfTaskSlots", "10"),
                ("parallelism.default", "10"))),
    S3Scenario("s3-throttling-bursts", {"put_503": 1.0, "burst_on_s": 3, "burst_off_s": 3, "prefix": PREFIX},
               "OBJECT_STORE_THROTTLED", _WIDE),
    S3Scenario("s3-slow-parts", {"put_delay_s": 12, "prefix": PREFIX, "ops": ["REST.PUT.PART"]}, "OBJECT_STORE_SLOW"),
    S3Scenario("s3-hot-prefix", {"prefix_rate": 1.5, "prefix": ""}, "OBJECT_STORE_THROTTLED", _WIDE),
    S3Scenario("s3-hot-prefix-entropy", {"prefix_rate": 1.5, "prefix": ""}, None,
               (*_WIDE, ("s3.entropy.key", "_entropy_"), ("s3.entropy.length", "4")), "_entropy_/checkpoints"),
    S3Scenario("s3-control", {}, None),
)}


FILESYSTEMS = ("hadoop", "native")
"""Flink's S3 filesystems the lab runs: flink-s3-fs-hadoop (S3A, shaded), and since Flink 2.3 flink-s3-fs-native (the
AWS SDK v2 without Hadoop)."""


def line_name(flink: str, fs: str) -> str:
    """The run's directory: `s3-<flink>`, `s3-<flink>-native` for the native filesystem."""
    return f"s3-{flink}" + ("" if fs == "hadoop" else f"-{fs}")


def fetch_s3(flink: str, fs: str = "hadoop") -> tuple[Path, Path]:
    """s3proxy and its dependencies, and Flink's S3 plugin, from Maven Central once (a `.complete` marker each)."""
    libs = CACHE / f"s3proxy-{S3PROXY}" / "libs"
    plugins = CACHE / f"flink-{flink}-s3{'' if fs == 'hadoop' else '-' + fs}" / "plugins"
    pom = HERE / "s3" / "pom.xml"
    if not (libs / ".complete").exists():
        _mvn(pom, {"s3proxy.version": S3PROXY}, ["dependency:copy-dependencies", "-DincludeScope=runtime",
                                                 f"-DoutputDirectory={libs}"], CACHE / "log" / "mvn-s3proxy.log")
        (libs / ".complete").touch()
    if not (plugins / ".complete").exists():
        _mvn(pom, {"flink.version": flink, "lab.s3.plugin": str(plugins / f"s3-fs-{fs}"),
                   "lab.s3.artifact": f"flink-s3-fs-{fs}"},
             ["dependency:copy@s3-plugin"], CACHE / "log" / f"mvn-s3-plugin-{flink}-{fs}.log")
        (plugins / ".complete").touch()
    return libs, plugins


def _request(port: int, method: str, path: str) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request(method, path, headers={"Content-Length": "0"} if method == "PUT" else {})
        resp = conn.getresponse()
        resp.read()
        return resp.status
    finally:
        conn.close()


def _wait_http(port: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            _request(port, "GET", "/")
            return
        except OSError:
            time.sleep(0.5)
    raise LabError(f"nothing answered on 127.0.0.1:{port} within {timeout:.0f}s")


def run_scenario(scenario: S3Scenario, flink: str, fs: str = "hadoop",
                 on_logs: Callable[[Path], None] | None = None) -> tuple[dict[str, object], Path]:
    """One scenario's run; ``on_logs`` is called with the log directory before anything starts (a shipper tails it)."""
    major = int(flink.split(".")[0])
    jars = fetch(HADOOP[major], flink)
    s3libs, plugins = fetch_s3(flink, fs)
    run_dir = HOME / line_name(flink, fs) / scenario.name
    shutil.rmtree(run_dir, ignore_errors=True)
    s3_port, proxy_port = free_ports(2)
    settings: dict[str, object] = {
        ("state.checkpoints.dir" if major < 2 else "execution.checkpointing.dir"): f"s3://{BUCKET}/{scenario.path}",
        "s3.endpoint": f"http://127.0.0.1:{proxy_port}", "s3.path.style.access": "true",
        "s3.access-key": "lab", "s3.secret-key": "lab-secret", "s3.endpoint.region": "us-east-1",
        "s3.connection.ssl.enabled": "false", **dict(scenario.settings),
    }
    if fs == "native":  # its own names: the region, and the pool's size as s3.connection.max
        # s3proxy answers 501 to the SDK v2's chunked, checksummed uploads: plain ones, as S3A sends
        settings |= {"s3.region": "us-east-1", "s3.chunked-encoding.enabled": "false",
                     "s3.checksum-validation.enabled": "false"}
        if "s3.connection.maximum" in settings:
            settings["s3.connection.max"] = settings.pop("s3.connection.maximum")
    cluster = Cluster(jars, run_dir, major, settings, checkpoints=f"s3://{BUCKET}/{scenario.path}",
                      flink_plugins=plugins)
    control = run_dir / "control" / "faultproxy.json"
    control.parent.mkdir(parents=True, exist_ok=True)
    control.write_text("{}")
    props = run_dir / "conf" / "s3proxy.properties"
    props.parent.mkdir(parents=True, exist_ok=True)
    # jclouds' in-memory store: its filesystem store cannot delete a directory marker that has keys below it
    props.write_text(f"s3proxy.endpoint=http://127.0.0.1:{s3_port}\ns3proxy.authorization=none\n"
                     "jclouds.provider=transient\njclouds.identity=lab\njclouds.credential=lab-secret\n")
    logback = run_dir / "conf" / "s3proxy-logback.xml"
    logback.write_text('<configuration><appender name="out" class="ch.qos.logback.core.ConsoleAppender"><encoder>'
                       '<pattern>%d{ISO8601} %-5level %logger - %msg%n</pattern></encoder></appender>'
                       '<root level="WARN"><appender-ref ref="out"/></root></configuration>\n')
    access_log = cluster.logs / ACCESS_LOG
    if on_logs is not None:
        on_logs(cluster.logs)
    t0 = time.monotonic()
    try:
        s3 = cluster._spawn("s3proxy", "lab-s3", cluster.logs / "s3proxy.out", [
            "java", "-Xmx384m", "-XX:TieredStopAtLevel=1", "-Duser.timezone=UTC",
            f"-Dlogback.configurationFile={logback}", "-cp", f"{s3libs}/*",
            "org.gaul.s3proxy.Main", "--properties", str(props)])
        _wait_http(s3_port, 60)
        cluster._spawn("faultproxy", "lab-s3", access_log, [
            sys.executable, str(HERE / "faultproxy.py"), "--listen", str(proxy_port), "--upstream", str(s3_port),
            "--access-log", str(access_log), "--control", str(control), "--max-seconds", "900"])
        _wait_http(proxy_port, 20)
        if (status := _request(proxy_port, "PUT", f"/{BUCKET}")) >= 300:
            raise LabError(f"creating bucket {BUCKET} answered {status}")
        say(f"{scenario.name}: s3proxy (pid {s3.pid}) and the fault proxy up ({time.monotonic() - t0:.0f}s)")
        cluster.start_flink()
        job = cluster.submit(run_dir / "snapshot-trigger")
        say(f"{scenario.name}: Flink up, job {job} submitted ({time.monotonic() - t0:.0f}s)")
        jobs = JobLog(cluster.jobmanager().log, cluster)
        jobs.wait(COMPLETED, 180)
        jobs.wait(COMPLETED, 60)
        m, _ = jobs.wait(TRIGGERED, 60)
        start = time.time()
        control.write_text(json.dumps(scenario.fault))
        say(f"{scenario.name}: fault {scenario.fault or 'none'} right after checkpoint {m.group(1)} triggered")
        time.sleep(HOLD_SECONDS)
        control.write_text("{}")
        end = time.time()
        jobs.wait(COMPLETED, RECOVERY_TIMEOUT, not_before=end)
        failed = jobs.failures(since=start - 0.5)
        say(f"{scenario.name}: fault ended; failed checkpoints: {[f['checkpoint_id'] for f in failed] or 'none'} "
            f"({time.monotonic() - t0:.0f}s)")
        jobs.wait(COMPLETED, 60)
        time.sleep(2)
        result: dict[str, object] = {
            "scenario": scenario.name, "flink": flink, "s3_filesystem": f"flink-s3-fs-{fs} {flink}",
            "store": f"s3proxy {S3PROXY} behind the lab's fault proxy",
            "fault": {"kind": scenario.name.removeprefix("s3-") if scenario.fault else "none", "host": "lab-s3"
                      if scenario.fault else None, "addr": None, "bucket": BUCKET, "prefix": scenario.path,
                      "settings": scenario.fault, "flink_settings": dict(scenario.settings), "start": iso(start),
                      "end": iso(end)},
            "attempts": [{"start": iso(start), "end": iso(end)}],
            "failed_checkpoints": failed,
            "expected": [] if scenario.code is None else [
                {"job_id": f["job_id"], "checkpoint_id": f["checkpoint_id"], "code": scenario.code,
                 "hosts": [], "target": f"{BUCKET}/{scenario.path}"} for f in failed],
        }
        (run_dir / "truth.json").write_text(json.dumps(result, indent=2) + "\n")
        return result, cluster.logs
    finally:
        cluster.stop()
        say(f"{scenario.name}: stopped every process ({time.monotonic() - t0:.0f}s in all)")


def copy_fixture(logs: Path, dest: Path, truth: dict[str, object]) -> None:
    """The Flink logs trimmed as the HDFS runs' are; the access log whole when small, else from 30 s before the
    fault (its records are in request order, each stamped to the second)."""
    copy_trimmed(logs, dest, truth)
    data = (logs / ACCESS_LOG).read_bytes()
    if len(data) > LIMIT:
        fault = truth["fault"]
        assert isinstance(fault, dict)
        since = time.strftime("%d/%b/%Y:%H:%M:%S", time.gmtime(
            time.mktime(time.strptime(str(fault["start"])[:19], "%Y-%m-%dT%H:%M:%S")) - time.timezone
            - LEAD_SECONDS))
        lines = data.splitlines(keepends=True)
        keep = [ln for ln in lines if _stamp(ln) >= _order(since)]
        data = b"".join(keep)
    (dest / ACCESS_LOG).write_bytes(data)


def _order(stamp: str) -> float:
    return time.mktime(time.strptime(stamp, "%d/%b/%Y:%H:%M:%S"))


def _stamp(line: bytes) -> float:
    start = line.find(b"[")
    return _order(line[start + 1:start + 21].decode()) if start >= 0 else 0.0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="objectstore.py", description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("command", choices=["run"])
    ap.add_argument("--flink", default="1.20.1")
    ap.add_argument("--s3-fs", choices=FILESYSTEMS, default="hadoop", help="Flink's S3 filesystem (native: 2.3 on)")
    ap.add_argument("--scenario", action="append", choices=sorted(SCENARIOS))
    ap.add_argument("--fixtures", type=Path)
    args = ap.parse_args(argv)
    from lab import exit_on_signals
    exit_on_signals()
    failures = 0
    for name in args.scenario or list(SCENARIOS):
        try:
            result, logs = run_scenario(SCENARIOS[name], args.flink, args.s3_fs)
        except LabError as e:
            say(f"{name}: FAILED: {e}")
            failures += 1
            continue
        if args.fixtures:
            dest = args.fixtures / line_name(args.flink, args.s3_fs) / name
            copy_fixture(logs, dest, result)
            say(f"{name}: fixtures in {dest}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
