"""``correlator bench stream``: the worker's end-to-end rate against two baselines, on the same topic, in one run.

The corpus is DataNode-heavy (``correlator.bench.datanode``: busy DataNodes, mostly routine block writes, one line
per record keyed by host + file over the raw topics' partitions) plus the 'recurring' scenario, whose failures the
worker must still decide. Contenders:

1. a bare confluent-kafka consume loop over the raw records (the physical reference: no parsing at all), with
   librdkafka's defaults and tuned (``TUNED_FETCH``); the tuned one is the baseline;
2. a bare Faust agent that only counts records (``correlator.bench.bare_faust``): the transport's own ceiling;
3. a naive per-record Faust agent doing the same work (``correlator.bench.naive_agent``);
4. the worker, end to end (raw records in, events, verdicts out), and its verdict latency in a live replay.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import orjson
from confluent_kafka import Consumer

from correlator.adapters import topics as topic_admin
from correlator.adapters.shipping import merged_lines, ship
from correlator.bench.datanode import routine_share, write_datanode_logs
from correlator.bench.incident import write_incident_logs
from correlator.bench.proc import tree_usage
from correlator.bench.worker_metrics import live_latency, metric_sum, scrape
from correlator.config import Settings
from correlator.offline.files import discover

Echo = Callable[[str], None]
LIVE_IDLE_TIMEOUT_MS = 10_000
CLI = [sys.executable, "-m", "correlator.cli"]
RAW_PROCESSES = max(2, min(4, os.cpu_count() or 1))
"""The second worker run: one raw-ingest process per core (two at least, four at most)."""
SCRAPE_EVERY_S = 0.25
"""Each scrape renders every metric in the worker's process, on its interpreter: scraped too often, the bench would
measure its own scraping."""


def contender_settings(base: Settings, contender: str, suffix: str, raw_suffix: str) -> Settings:
    """Raw topics shared by every contender; events, verdicts, tables and group private to each."""
    return base.model_copy(
        update={
            "topic_logs_flink": f"bench.logs.flink.{raw_suffix}",
            "topic_logs_hdfs": f"bench.logs.hdfs.{raw_suffix}",
            "topic_logs_s3": f"bench.logs.s3.{raw_suffix}",
            "topic_events": f"bench.events.{contender}.{suffix}",
            "topic_verdicts": f"bench.verdicts.{contender}.{suffix}",
            "topic_deadletter": f"bench.deadletter.{contender}.{suffix}",
            "worker_id": f"bench-{contender}-{suffix}",
        }
    )


def _env(settings: Settings, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    for name in Settings.model_fields:
        value = getattr(settings, name)
        if value is not None and not hasattr(value, "get_secret_value"):
            env[f"CORRELATOR_{name.upper()}"] = str(value)
    env.update(extra)
    return env


def create_topics(settings: Settings, topics_dir: Path | None) -> None:
    admin = topic_admin.admin_client(settings)
    specs = topic_admin.load_specs(topics_dir, settings)
    topic_admin.apply(admin, specs, topic_admin.plan(admin, specs))


TUNED_FETCH = {"fetch.queue.backoff.ms": 10, "queued.min.messages": 200_000}
"""librdkafka's defaults wait up to a second between fetches once its queue is full; these keep it fed."""


def _bare_loop(settings: Settings, expected: int, tuned: bool) -> tuple[float, float, float]:
    """The physical reference: consume(10000) and touch each value. Returns (records/s, MB/s, CPU us/record)."""
    extra = TUNED_FETCH if tuned else {}
    consumer = Consumer(settings.kafka_client(**{"group.id": f"bench-bare-{uuid.uuid4().hex[:8]}",
                                                 "auto.offset.reset": "earliest", "enable.auto.commit": False,
                                                 **extra}))
    consumer.subscribe(list(settings.raw_topics))
    seen, size, first, cpu0 = 0, 0, 0.0, 0.0
    deadline = time.monotonic() + 300
    while seen < expected and time.monotonic() < deadline:
        batch = consumer.consume(10_000, timeout=1.0)
        if batch and not first:
            first, cpu0 = time.monotonic(), time.process_time()
        for msg in batch:
            if msg.error() is None:
                seen += 1
                size += len(msg.value() or b"")
    elapsed, cpu = time.monotonic() - first, time.process_time() - cpu0
    consumer.close()
    return seen / elapsed, size / 1e6 / elapsed, cpu * 1e6 / max(1, seen)


def _faust_baseline(module: str, settings: Settings, expected: int, workdir: Path) -> float:
    """Run one of the baseline Faust apps to its result file; records/s between its first and last record."""
    name = module.rsplit(".", 1)[-1]
    result = workdir / f"{name}.json"
    env = _env(settings, CORRELATOR_DATA_DIR=str(workdir / f"{name}-data"))
    process = subprocess.Popen([sys.executable, "-m", module, str(result), str(expected)],
                               env=env, stdout=subprocess.DEVNULL, stderr=(workdir / f"{name}.log").open("wb"))
    deadline = time.monotonic() + 900
    try:
        while not result.exists():
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{name} did not finish: see {workdir / (name + '.log')}")
            time.sleep(0.5)
        data: dict[str, float] = orjson.loads(result.read_bytes())
        return float(data["raw"]) / (data["done"] - data["first"])
    finally:
        terminate(process, 30)


def terminate(process: subprocess.Popen[bytes], grace_s: float) -> None:
    """SIGTERM, so a Faust app shuts down cleanly; SIGKILL if it has not within ``grace_s``."""
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(grace_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(10)


def _corpus(logs: Path, scale: int, datanodes: int, lines_per_datanode: int, day: str = "good") -> None:
    """The 'recurring' scenario (failures to decide) plus busy DataNodes: on a good day mostly routine writes, on a
    bad day the incident corpus's (slow writes, slow-IO storms, reconcile bursts, a clock step back); on a real day the
    lab's real DataNode logs end to end."""
    done = subprocess.run([*CLI, "simulate", "recurring", "--out", str(logs), "--scale", str(scale)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"simulate recurring failed: {done.stderr.strip()[-300:]}")
    if day == "bad":
        write_incident_logs(str(logs / "busy"), datanodes, lines_per_datanode)
    elif day == "real":
        from correlator.bench.real import real_datanode_lines

        write_datanode_logs(str(logs / "busy"), datanodes, lines_per_datanode, real_datanode_lines)
    else:
        write_datanode_logs(str(logs / "busy"), datanodes, lines_per_datanode)


def _contenders(settings: Settings, suffix: str, topics_dir: Path | None) -> dict[str, Settings]:
    """Each contender's settings (its own events topic and group, the raw topics shared), its topics created."""
    contenders = {name: contender_settings(settings, name, suffix, suffix)
                  for name in ("bare", "naive", "worker", "workers2", "processes")}
    contenders["processes"] = contenders["processes"].model_copy(update={"raw_processes": RAW_PROCESSES})
    for name in ("naive", "worker", "workers2", "processes"):  # the bare agent only reads the shared raw topics
        create_topics(contenders[name], topics_dir)
    return contenders


def run_bench(settings: Settings, scale: int, topics_dir: Path | None, echo: Echo, *, datanodes: int = 8,
              lines_per_datanode: int = 75_000, day: str = "good") -> None:
    suffix = uuid.uuid4().hex[:8]
    with tempfile.TemporaryDirectory(prefix="correlator-bench-") as tmp:
        workdir = Path(tmp)
        logs, live = workdir / "logs", workdir / "live"
        _corpus(logs, scale, datanodes, lines_per_datanode, day)
        done = subprocess.run([*CLI, "simulate", "recurring", "--out", str(live), "--scale", "1"],
                              capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"simulate recurring failed: {done.stderr.strip()[-300:]}")
        contenders = _contenders(settings, suffix, topics_dir)
        files = discover([str(logs)])
        size = sum(os.path.getsize(f.path) for f in files)
        busy = [f for f in files if "/busy/" in f.path]
        routine = sum(routine_share(Path(f.path).read_text().splitlines()) * _lines(f.path) for f in busy)
        shipped = ship(merged_lines(files, contenders["worker"]), contenders["worker"])
        echo(f"corpus: {shipped:,} raw records ({size / 1e6:.1f} MB) from {len(files)} files: scenario 'recurring'"
             f" x{scale} and {datanodes} busy DataNodes on a {day} day; {routine / shipped:.0%} block-write lines;"
             f" {len(files)} keys over the raw topics' partitions")

        default, _, default_cpu = _bare_loop(contenders["worker"], shipped, tuned=False)
        echo(f"  bare confluent-kafka loop, defaults : {default:>10,.0f} records/s  {default_cpu:6.2f} CPU us/record")
        bare, bare_mb, bare_cpu = _bare_loop(contenders["worker"], shipped, tuned=True)
        echo(f"  bare confluent-kafka loop, tuned    : {bare:>10,.0f} records/s  {bare_cpu:6.2f} CPU us/record"
             f"  {bare_mb:6.1f} MB/s  (the baseline)")

        def tuned() -> float:
            return _bare_loop(contenders["worker"], shipped, tuned=True)[0]

        ceiling = _faust_baseline("correlator.bench.bare_faust", contenders["bare"], shipped, workdir)
        echo(f"  bare Faust agent (counts only)      : {ceiling:>10,.0f} records/s  (the Faust transport's ceiling)")
        naive = _faust_baseline("correlator.bench.naive_agent", contenders["naive"], shipped, workdir)
        echo(f"  naive per-record Faust agent        : {naive:>10,.0f} records/s  (30 s budget)")
        before = tuned()
        run = _run_worker(contenders["worker"], shipped, workdir, live, then=tuned)
        worker_bare = (before + run.bare_after) / 2
        echo(f"  correlator worker, end to end       : {run.rate:>10,.0f} records/s  {run.cpu_us:6.2f} CPU us/record"
             f"  {run.rate * size / shipped / 1e6:6.1f} MB/s  peak RSS {run.peak_rss_kib / 1024:.0f} MB (both processes)"
             f"  (tuned bare loop just before and after: {before:,.0f} and {run.bare_after:,.0f} records/s)")
        echo(f"  its raw-ingest loop, by step        : {step_line(run.steps, shipped, run.events)}")
        echo(f"  its correlate stage, by step        : {correlate_line(run.correlate, run.events, run.elapsed)}")
        processes, processes_bare = _beside(tuned, lambda: _scale_out_rate(contenders["processes"], shipped, workdir, 1))
        echo(f"  one worker, {RAW_PROCESSES} raw-ingest processes  : {processes:>10,.0f} records/s"
             f"  ({processes / run.rate:.2f} x one process; CORRELATOR_RAW_PROCESSES={RAW_PROCESSES};"
             f" tuned bare loop around it: {processes_bare:,.0f} records/s)")
        two = _scale_out_rate(contenders["workers2"], shipped, workdir, 2)
        echo(f"  two workers, one group              : {two:>10,.0f} records/s  ({two / run.rate:.2f} x one worker)")
        echo(f"  events per raw record = {run.events / shipped:.4f}   (goal <= 0.02)")
        echo(f"  worker / tuned bare loop = {run.rate / worker_bare:5.2f}   (goal >= 0.5; the loop's mean rate just"
             f" before and after: this machine's speed drifts over minutes)")
        echo(f"  worker with {RAW_PROCESSES} raw-ingest processes / tuned bare loop = {processes / processes_bare:5.2f}")
        echo(f"  worker / naive agent     = {run.rate / naive:5.2f}   (goal >= 5)")
        echo(f"  worker / bare Faust      = {run.rate / ceiling:5.2f}")
        echo(f"  verdict latency in a live replay    : {run.latency}")
        for stage, (seconds, count, largest) in run.snapshots.items():
            echo(f"  {stage} snapshots: {count:,.0f}, {seconds * 1000 / max(count, 1):.2f} ms each on average,"
                 f" largest {largest / 1024:.0f} KiB")


def _beside(baseline: Callable[[], float], measure: Callable[[], float]) -> tuple[float, float]:
    """``measure()``, and the mean of ``baseline()`` run just before and just after it: a shared machine's speed
    drifted by a quarter within seconds, so a ratio against a baseline measured minutes earlier says little."""
    before = baseline()
    rate = measure()
    return rate, (before + baseline()) / 2


def _lines(path: str) -> int:
    with open(path, "rb") as handle:
        return sum(block.count(b"\n") for block in iter(lambda: handle.read(1 << 22), b""))


@dataclass(frozen=True, slots=True)
class WorkerRun:
    rate: float
    cpu_us: float
    peak_rss_kib: int
    events: float
    latency: str
    snapshots: dict[str, tuple[float, float, float]]
    """stage → (seconds serialising, snapshots, largest snapshot bytes)."""
    bare_after: float
    """The baseline's rate, run while the worker idled after the corpus."""
    steps: dict[str, float]
    """Seconds the raw-ingest loop spent per step until the corpus was through (``correlator_ingest_seconds``)."""
    correlate: dict[str, float]
    """Seconds the correlate stage spent per step until then (``correlator_correlate_seconds``)."""
    elapsed: float
    """Seconds from the first raw record read to the corpus through."""


STEP_ORDER = ("consume", "group", "parse", "produce", "snapshot", "commit")


def step_line(steps: dict[str, float], records: int, events: float) -> str:
    """Each step's seconds and share of the loop's time; parsing's rate in records and events per second."""
    total = sum(steps.values()) or 1.0
    parts = []
    for step in STEP_ORDER:
        seconds = steps.get(step, 0.0)
        part = f"{step} {seconds:.2f} s ({seconds / total:.0%})"
        if step == "parse" and seconds:
            part += f" = {records / seconds:,.0f} records/s, {events / seconds:,.0f} events/s"
        parts.append(part)
    return ", ".join(parts)


CORRELATE_ORDER = ("feed", "publish", "snapshot")


def correlate_line(steps: dict[str, float], events: float, elapsed: float) -> str:
    """The correlate stage's seconds per step and its rate in events per second of its own time; the rest of the
    run's time its process spent in Faust's transport or waiting for events."""
    total = sum(steps.values())
    said = ", ".join(f"{step} {steps.get(step, 0.0):.2f} s" for step in CORRELATE_ORDER)
    if total:
        said += f" = {events / total:,.0f} events/s of its own time"
    if elapsed:
        said += f"; {total / elapsed:.0%} of the run's {elapsed:.1f} s"
    return said


def _metric_steps(metrics: dict[str, float], name: str) -> dict[str, float]:
    """A by-step counter's values (``name``: the counter's sample name) by step."""
    prefix = name + "{"
    return {k.split('step="', 1)[1].split('"', 1)[0]: v for k, v in metrics.items() if k.startswith(prefix)}


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_worker(settings: Settings, workdir: Path, name: str) -> tuple[subprocess.Popen[bytes], int]:
    port = _free_port()
    env = _env(settings, CORRELATOR_WEB_PORT=str(port), CORRELATOR_DATA_DIR=str(workdir / f"{name}-data"),
               CORRELATOR_LOG_LEVEL="WARNING", CORRELATOR_IDLE_TIMEOUT_MS=str(LIVE_IDLE_TIMEOUT_MS))
    log = (workdir / f"{name}.log").open("wb")
    return subprocess.Popen([*CLI, "worker"], env=env, stdout=log, stderr=log), port


def _scale_out_rate(settings: Settings, expected: int, workdir: Path, count: int) -> float:
    """Raw records/s of ``count`` workers in one consumer group, from the first record any of them read."""
    started = [start_worker(settings, workdir, f"worker{count}-{i}") for i in range(count)]
    try:
        first = 0.0
        deadline = time.monotonic() + 900
        while time.monotonic() < deadline:
            raw = 0.0
            for process, port in started:
                if process.poll() is not None:
                    raise RuntimeError(f"a worker exited: see {workdir}")
                try:
                    raw += metric_sum(scrape(port), "correlator_records_in_total", "logs.")
                except OSError:
                    continue
            if raw and not first:
                first = time.monotonic()
            if raw >= expected:
                return expected / (time.monotonic() - first)
            time.sleep(SCRAPE_EVERY_S)
        raise RuntimeError(f"{count} workers did not read the corpus within 15 minutes")
    finally:
        for process, _ in started:
            terminate(process, 60)


def _run_worker(settings: Settings, expected: int, workdir: Path, live_logs: Path,
                then: Callable[[], float]) -> WorkerRun:
    """The corpus end to end, then ``then()`` (the baseline, while the worker idles), then a live replay's
    latency."""
    process, port = start_worker(settings, workdir, "worker")
    raw_prefix = "correlator_records_in_total"
    try:
        first = end = cpu0 = cpu1 = forwarded = 0.0
        steps: dict[str, float] = {}
        correlate: dict[str, float] = {}
        peak = 0
        deadline = time.monotonic() + 900
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError(f"the worker exited: see {workdir / 'worker.log'}")
            try:
                metrics = scrape(port)
            except OSError:
                time.sleep(0.2)
                continue
            raw = metric_sum(metrics, raw_prefix, "logs.")
            events_in = metric_sum(metrics, raw_prefix, "bench.events.")
            forwarded = metric_sum(metrics, "correlator_events_total")
            if raw and not first:
                first, cpu0 = time.monotonic(), tree_usage(process.pid)[0]
            if raw >= expected and events_in >= forwarded:
                end = time.monotonic()
                steps = _metric_steps(metrics, "correlator_ingest_seconds_total")
                correlate = _metric_steps(metrics, "correlator_correlate_seconds_total")
                cpu1, peak = tree_usage(process.pid)
                break
            time.sleep(SCRAPE_EVERY_S)
        if not end:
            raise RuntimeError("the worker did not process the corpus within 15 minutes")
        rate = expected / (end - first)
        events = forwarded
        bare_after = then()

        latency, snapshots = live_latency(port, settings, live_logs)
        return WorkerRun(rate, (cpu1 - cpu0) * 1e6 / expected, peak, events, latency, snapshots, bare_after, steps,
                         correlate, end - first)
    finally:
        terminate(process, 60)
