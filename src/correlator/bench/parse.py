"""``correlator bench parse``: our parsing rate against a naive per-line regex loop and ``grep -cE``, in one run.

Generated corpora and a real one, all by default: ``real`` (``correlator.bench.real``: the lab's real DataNode and
TaskManager logs laid end to end in time — the yardstick), ``datanode`` (``correlator.bench.datanode``: a busy DataNode, mostly routine
block writes and reads, the shape of a real cluster's HDFS traffic) and ``mixed`` (Flink JobManager/TaskManager and
DataNode lines, at least 99 % noise; the rest are the records the parsers exist for: checkpoint lifecycle, the
incident's failed task with its cause chain, lock reports with their stacks, scan statistics, slow IO, pauses).
Corpora are written to a temporary directory and deleted afterwards.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from dataclasses import dataclass
from typing import TYPE_CHECKING

from correlator.bench.proc import PeakRss
from correlator.core.ingest.prefilter import PHRASES, ReScanner, Scanner, grep_pattern
from correlator.core.ingest.write_lines import StdlibWriteReader, WriteReader

if TYPE_CHECKING:
    from correlator.adapters.scanners import NamedScanner

_JOB = "1a3bc71ac57f33961637adf340e9c28f"
_CP = "org.apache.flink.runtime.checkpoint.CheckpointCoordinator    [] - "
_DN = "org.apache.hadoop.hdfs.server.datanode.DataNode: "
_BP = "BP-1473651231-10.20.30.40-1546300800000"

NOISE = (
    "{ts} INFO " + _DN + "PacketResponder: " + _BP + ":blk_{n}_{m}, type=HAS_DOWNSTREAM_IN_PIPELINE, downstreams=2:"
    "[DatanodeInfoWithStorage[10.20.30.43:9866,DS-0c9d8e7f,DISK]] terminating",
    "{ts} INFO " + _DN + "Successfully sent block report 0x{n:x},  containing 1 storage report(s), of which we sent 1. "
    "The reports had {m} total blocks and used 1 RPC(s). This took 3 msec to generate and 40 msecs for RPC.",
    "{ts} INFO org.apache.hadoop.hdfs.server.datanode.fsdataset.impl.FsDatasetAsyncDiskService: Deleted " + _BP
    + " blk_{n}_{m} URI file:/data/{d}/dfs/dn/current/" + _BP + "/current/finalized/subdir0/subdir21/blk_{n}",
    "{ts} INFO org.apache.hadoop.hdfs.server.datanode.VolumeScanner: VolumeScanner(/data/{d}/dfs/dn, DS-{n:x}): "
    "finished scanning block pool " + _BP,
    "{ts} INFO  org.apache.flink.runtime.taskexecutor.TaskExecutor           [] - Receive slot request {n:x} for "
    "job " + _JOB + " from resource manager with leader id 00000000000000000000000000000000.",
    "{ts} INFO  org.apache.flink.runtime.state.heap.HeapKeyedStateBackend    [] - Initializing heap keyed state "
    "backend with stream factory.",
    "{ts} INFO  org.apache.kafka.clients.consumer.internals.ConsumerCoordinator [] - [Consumer clientId=c-{d}, "
    "groupId=g] Setting offset for partition topic-{d} to the committed offset FetchPosition{{offset={n}}}",
    "{ts} INFO  org.apache.flink.runtime.resourcemanager.slotmanager.DeclarativeSlotManager [] - Received resource "
    "requirements from job " + _JOB + ": [ResourceRequirement{{resourceProfile=ResourceProfile{{UNKNOWN}}, "
    "numberOfRequiredSlots={d}}}]",
)
SIGNAL = (
    "{ts} INFO  " + _CP + "Triggering checkpoint {n} (type=CHECKPOINT) @ 1614651053497 for job " + _JOB + ".",
    "{ts} INFO  " + _CP + "Completed checkpoint {n} for job " + _JOB + " (8872 bytes in 3120 ms).",
    "{ts} INFO  " + _CP + "Checkpoint {n} of job " + _JOB + " expired before completing.",
    "{ts} INFO  org.apache.flink.runtime.executiongraph.ExecutionGraph       [] - Source: s -> Map (1/1) "
    "(c2e77749126a67db62d38bdb166b5696) switched from RUNNING to FAILED.\n"
    "AsynchronousException{{java.lang.Exception: Could not materialize checkpoint {n} for operator Source: s -> Map "
    "(1/1).}}\n\tat org.apache.flink.streaming.runtime.tasks.StreamTask.run(StreamTask.java:1153)\n"
    "Caused by: java.io.IOException: Could not flush and close the file system output stream to hdfs:/ck/" + _JOB
    + "/chk-{n}/253fc668 in order to obtain the stream state handle\n\t... 7 more",
    "{ts} WARN org.apache.hadoop.hdfs.server.datanode.fsdataset.impl.FsDatasetImpl: Lock held time above threshold: "
    "lock identifier: org.apache.hadoop.hdfs.server.datanode.fsdataset.impl.FsDatasetImpl lockHeldTimeMs={m} ms. "
    "Suppressed 0 lock warnings. The stack trace is: java.lang.Thread.getStackTrace(Thread.java:1559)\n"
    "org.apache.hadoop.util.InstrumentedLock.unlock(InstrumentedLock.java:133)\n"
    "org.apache.hadoop.hdfs.server.datanode.DirectoryScanner.scan(DirectoryScanner.java:395)\n"
    "org.apache.hadoop.hdfs.server.datanode.DirectoryScanner.run(DirectoryScanner.java:318)\n",
    "{ts} INFO org.apache.hadoop.hdfs.server.datanode.DirectoryScanner: BlockPool " + _BP + " Total blocks: {m}, "
    "missing metadata files:0, missing block files:0, missing blocks in memory:12, mismatched blocks:0",
    "{ts} WARN " + _DN + "Slow BlockReceiver write data to disk cost:{d}873ms (threshold=300ms), "
    "volume=file:/data/5/dfs/dn, blockId={n}",
    "{ts} INFO " + _DN + "Receiving " + _BP + ":blk_{n}_{m} src: /10.20.30.41:53412 dest: /10.20.30.42:9866",
    "{ts} WARN org.apache.hadoop.util.JvmPauseMonitor: Detected pause in JVM or host machine (eg GC): pause of "
    "approximately {m}ms\nGC pool 'ParNew' had collection(s): count=1 time=45ms",
)


def _stamp(i: int) -> str:
    seconds = i // 50
    return f"2020-01-02 {seconds // 3600 % 24:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d},{i % 1000:03d}"


def corpus_lines(count: int, *, signal_per_mille: int = 4, seed: int = 7) -> Iterator[str]:
    rng = random.Random(seed)
    for i in range(count):
        template = SIGNAL[rng.randrange(len(SIGNAL))] if rng.randrange(1000) < signal_per_mille else NOISE[
            rng.randrange(len(NOISE))]
        yield template.format(ts=_stamp(i), n=rng.randrange(10**9), m=rng.randrange(10**6), d=rng.randrange(1, 9))


def write_corpus(path: str, size_mb: int) -> tuple[int, int]:
    """A corpus of ``size_mb`` MiB; a 4 MiB block of lines is generated once and repeated. Returns (bytes, lines)."""
    block = "\n".join(corpus_lines(25_000)) + "\n"
    data = block.encode()
    lines = data.count(b"\n")
    target = size_mb * 1024 * 1024
    written = count = 0
    with open(path, "wb") as out:
        while written < target:
            out.write(data)
            written += len(data)
            count += lines
    return written, count


@dataclass(frozen=True, slots=True)
class Rate:
    name: str
    seconds: float
    megabytes: float
    lines: int
    found: int

    @property
    def mb_s(self) -> float:
        return self.megabytes / self.seconds if self.seconds else float("inf")

    @property
    def lines_s(self) -> float:
        return self.lines / self.seconds if self.seconds else float("inf")


def _timed(name: str, size: int, lines: int, run: Callable[[], int]) -> Rate:
    start = time.perf_counter()
    found = run()
    return Rate(name, time.perf_counter() - start, size / 1e6, lines, found)


def measure_ours(path: str, size: int, lines: int, scanner: Scanner | None = None) -> Rate:
    from correlator.offline.files import iter_events

    return _timed("correlator (offline path, events)", size, lines, lambda: sum(1 for _ in iter_events([path], scanner=scanner)))


def measure_naive(path: str, limit_bytes: int) -> Rate:
    """Every trigger phrase as its own ``re`` pattern, tried on every line (on a prefix: the loop is slow)."""
    patterns = [re.compile(re.escape(p)) for p in PHRASES]
    size = lines = found = 0
    start = time.perf_counter()
    with open(path, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            size += len(line)
            lines += 1
            for pattern in patterns:
                if pattern.search(line):
                    found += 1
                    break
            if size >= limit_bytes:
                break
    return Rate("naive loop: each pattern with re per line", time.perf_counter() - start, size / 1e6, lines, found)


def measure_grep(path: str, size: int, lines: int) -> Rate | None:
    """GNU grep stops at the first match when its output is /dev/null; a pipe makes it read everything."""
    grep = shutil.which("grep")
    if grep is None:
        return None

    def run() -> int:
        env = {**os.environ, "LC_ALL": "C"}
        done = subprocess.run([grep, "-cE", grep_pattern(), path], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              text=True, env=env, check=False)
        return int(done.stdout.strip() or 0)

    return _timed("grep -cE (same trigger phrases, LC_ALL=C)", size, lines, run)


PARSE_GOAL = 0.25
"""``correlator parse`` (and the offline path) against ``grep -cE`` over the same phrases."""
ANALYZE_GOAL = 0.2


def _scan_only(s: NamedScanner) -> str:
    return f"prefilter scan only: {s.name} + {s.write_reader.name} write reader"


def measure_scanners(path: str, limit_bytes: int) -> list[Rate]:
    """The prefilter engines alone, scanning the same bytes for the trigger phrases (each with the write reader it
    uses in a block), then the write readers alone."""
    with open(path, "rb") as handle:
        data = handle.read(limit_bytes)
    lines = data.count(b"\n")
    from correlator.adapters.scanners import NamedScanner, available_scanners
    from correlator.adapters.write_readers import fastest_write_reader

    def hit_count(s: NamedScanner) -> Callable[[], int]:
        return lambda: len(s.hits(data))

    def open_count(r: WriteReader) -> Callable[[], int]:
        return lambda: len(r.find(data).opens)

    scanners: list[NamedScanner] = [ReScanner(), *available_scanners()]
    readers = {reader.name: reader for reader in (StdlibWriteReader(), fastest_write_reader())}
    return [_timed(_scan_only(s), len(data), lines,
                   hit_count(s)) for s in scanners] + [
            _timed(f"write reader only: {name}", len(data), lines, open_count(reader))
            for name, reader in readers.items()]


def _parse_command(path: str, command: str = "parse") -> list[str]:
    import sys

    return [sys.executable, "-m", "correlator.cli", command, *(["--no-errors"] if command == "parse" else []), path]


def measure_cli(path: str, size: int, lines: int, command: str = "parse") -> tuple[Rate, float, int]:
    """``correlator parse FILE`` (or ``analyze``: the same reading, then the decisions) as a user runs it, output to
    a pipe: rate, CPU us per line, peak RSS (KiB)."""
    start = time.perf_counter()
    process = subprocess.Popen(_parse_command(path, command),
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    peak = PeakRss(process.pid)
    stdout = process.stdout
    assert stdout is not None
    found = sum(chunk.count(b"\n") for chunk in iter(lambda: stdout.read(1 << 16), b""))
    peak.stop()
    _, _, rusage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - start
    cpu_us = (rusage.ru_utime + rusage.ru_stime) * 1e6 / max(1, lines)
    rate = Rate(f"correlator {command} FILE (CLI, stdout to a pipe)", seconds, size / 1e6, lines, found)
    return rate, cpu_us, peak.kib


def measure_startup() -> float:
    """Seconds ``correlator parse`` takes on an empty file: the part of the CLI's time no corpus size changes."""
    with tempfile.NamedTemporaryFile(suffix=".log") as empty:
        start = time.perf_counter()
        subprocess.run(_parse_command(empty.name), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        return time.perf_counter() - start


def _corpus(kind: str, workdir: str, size_mb: int, echo: Callable[[str], None],
            real_dir: Path | None = None) -> tuple[str, int, int]:
    from correlator.bench.datanode import write_datanode_corpus
    from correlator.bench.incident import write_incident_corpus

    path = os.path.join(workdir, f"{kind}.log")
    if kind == "datanode":
        size, lines = write_datanode_corpus(path, size_mb)
        echo(f"corpus 'datanode': {size / 1e6:.0f} MB, {lines:,} lines (one DataNode; ~78 % block-write lines,"
             " ~20 % reads)")
    elif kind == "real":
        from correlator.bench.real import LAB_DIR, real_files, write_real_corpus

        root = real_dir or LAB_DIR
        size, lines = write_real_corpus(path, size_mb, root)
        echo(f"corpus 'real': {size / 1e6:.0f} MB, {lines:,} lines (REAL: the {len(real_files(root))} DataNode and"
             f" TaskManager logs of the lab's runs in {root.name if real_dir is None else root}, time-shifted end to"
             " end)")
    elif kind == "incident":
        size, lines = write_incident_corpus(path, size_mb)
        echo(f"corpus 'incident': {size / 1e6:.0f} MB, {lines:,} lines (the same DataNode on a bad day: two in"
             " five writes >= 1 s, writer-paced small writes, deletions and stacks, slow-IO storms, reconcile bursts,"
             " a clock step back)")
    else:
        size, lines = write_corpus(path, size_mb)
        echo(f"corpus 'mixed': {size / 1e6:.0f} MB, {lines:,} lines (generated, >= 99 % noise)")
    return path, size, lines


def run_bench(size_mb: int, corpus: str | None, echo: Callable[[str], None], kinds: tuple[str, ...] = ("real",
              "datanode", "incident", "mixed"), real_dir: Path | None = None) -> dict[str, float]:
    """Each corpus in turn; the result keys of a corpus are prefixed with its kind (``datanode.ours_over_grep``).
    ``real_dir``: where the lab's logs are (default: the clone's ``tests/data/lab``)."""
    result: dict[str, float] = {}
    workdir = tempfile.mkdtemp(prefix="correlator-bench-")
    try:
        for kind in kinds if corpus is None else ("file",):
            if corpus is None:
                path, size, lines = _corpus(kind, workdir, size_mb, echo, real_dir)
            else:
                path = corpus
                size = os.path.getsize(path)
                with open(path, "rb") as handle:
                    lines = sum(block.count(b"\n") for block in iter(lambda: handle.read(1 << 22), b""))
                echo(f"corpus: {size / 1e6:.0f} MB, {lines:,} lines ({path})")
            echo(f"  shape (first {SHAPE_LINES:,} lines): {_shape(path)}")
            for key, value in _bench_one(path, size, lines, echo).items():
                result[f"{kind}.{key}"] = value
            if kind == "incident":
                result["incident.step_back_cost"] = _step_back_cost(path, size, lines, workdir, size_mb, echo)
            if corpus is None:
                os.unlink(path)
        return result
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


SHAPE_LINES = 300_000


def _shape(path: str) -> str:
    """What makes the corpus hard on the reader (``correlator.bench.realism``), to set beside the real one's."""
    import itertools

    from correlator.bench.realism import shape_of

    with open(path, "rb") as handle:
        return str(shape_of(itertools.islice(handle, SHAPE_LINES)))


STEP_BACK_GOAL = 1.5


def _step_back_cost(path: str, size: int, lines: int, workdir: str, size_mb: int, echo: Callable[[str], None]) -> float:
    """The offline path's time per MB on the incident corpus over its time on the same day without the clock step,
    measured back to back (``STEP_BACK_GOAL``: a clock step must not switch a source to the slow path for good)."""
    from correlator.bench.incident import write_incident_corpus

    steady = os.path.join(workdir, "incident-steady.log")
    steady_size, steady_lines = write_incident_corpus(steady, size_mb, step_back=False)
    stepped, calm = measure_ours(path, size, lines), measure_ours(steady, steady_size, steady_lines)
    os.unlink(steady)
    cost = calm.mb_s / stepped.mb_s
    echo(f"  clock step back: offline path {stepped.mb_s:.1f} MB/s with it, {calm.mb_s:.1f} MB/s without:"
         f" {cost:.2f} x the time   (goal <= {STEP_BACK_GOAL})")
    return cost


ROUNDS = 3
"""Each of ours, the CLI's two commands and grep is run this many times, interleaved, and its best time kept: on
shared cores one run of each can meet a neighbour's burst, which would make a ratio of two single runs a lottery."""


def _best(rates: list[Rate]) -> Rate:
    return min(rates, key=lambda r: r.seconds)


def _bench_one(path: str, size: int, lines: int, echo: Callable[[str], None]) -> dict[str, float]:
    scans = measure_scanners(path, min(size, 64 * 1024 * 1024))
    for rate in scans:
        echo(f"  {rate.name:<56} {rate.mb_s:10.1f} MB/s")
    runs: dict[str, list[Rate]] = {"ours": [], "cli": [], "analyze": [], "grep": []}
    cpu_us, rss_kib = float("inf"), 0
    for _ in range(ROUNDS):
        runs["ours"].append(measure_ours(path, size, lines))
        cli_run, cli_cpu, cli_rss = measure_cli(path, size, lines)
        runs["cli"].append(cli_run)
        cpu_us, rss_kib = min(cpu_us, cli_cpu), max(rss_kib, cli_rss)
        runs["analyze"].append(measure_cli(path, size, lines, "analyze")[0])
        if (grep_run := measure_grep(path, size, lines)) is not None:
            runs["grep"].append(grep_run)
    ours, cli, analyze = _best(runs["ours"]), _best(runs["cli"]), _best(runs["analyze"])
    grep = _best(runs["grep"]) if runs["grep"] else None
    startup_s = measure_startup()
    naive = measure_naive(path, min(size, 16 * 1024 * 1024))
    rows = [ours, cli, analyze, naive] + ([grep] if grep else [])
    echo(f"  best of {ROUNDS} interleaved rounds each (the naive loop: one)")
    for rate in rows:
        echo(f"{rate.name:<50} {rate.lines_s:14,.0f} lines/s {rate.mb_s:10.1f} MB/s   ({rate.found:,} found)")
    echo(f"  correlator parse: {cpu_us:.2f} CPU us/line, peak RSS {rss_kib / 1024:.0f} MB,"
         f" {cli.found / max(1, lines):.4f} events per line, start-up {startup_s:.2f} s of its {cli.seconds:.2f} s")
    result = {"ours_mb_s": ours.mb_s, "ours_lines_s": ours.lines_s, "naive_mb_s": naive.mb_s, "cli_mb_s": cli.mb_s,
              "analyze_mb_s": analyze.mb_s,
              "cli_cpu_us_per_line": cpu_us, "cli_peak_rss_mb": rss_kib / 1024, "cli_startup_s": startup_s,
              "events_per_line": cli.found / max(1, lines)}
    echo(f"ratio ours / naive: {ours.mb_s / naive.mb_s:.2f}")
    if grep:
        result["grep_mb_s"] = grep.mb_s
        for run, name, rate, goal in (("ours", "ours", ours, PARSE_GOAL),
                                      ("cli", "correlator parse", cli, PARSE_GOAL),
                                      ("analyze", "correlator analyze", analyze, ANALYZE_GOAL)):
            result[f"{run}_over_grep"] = rate.mb_s / grep.mb_s
            each = [g.seconds / r.seconds for r, g in zip(runs[run], runs["grep"], strict=False)]
            echo(f"ratio {name} / grep: {result[f'{run}_over_grep']:.2f}   (goal >= {goal}; round by round "
                 f"{min(each):.2f}-{max(each):.2f})")
        from correlator.adapters.scanners import fastest_scanner

        theirs = _scan_only(fastest_scanner())  # the engine the CLI runs
        scan = next((r for r in scans if r.name == theirs), None)
        if scan is not None and cli.found:
            result.update(_per_event(size, cli, startup_s, scan, grep, echo))
    return result


def _per_event(size: int, cli: Rate, startup_s: float, scan: Rate, grep: Rate,
               echo: Callable[[str], None]) -> dict[str, float]:
    """What ``correlator parse`` spends per event found past its start-up and the prefilter's scan of the bytes, and
    what the goal leaves per event at this corpus's density: the scan is fast, so a corpus dense with events is bound
    by the per-event work (the record's parse, its checks, its output) however fast the noise is skipped."""
    scan_s = size / 1e6 / scan.mb_s
    spent_us = (cli.seconds - startup_s - scan_s) / cli.found * 1e6
    left_us = (size / 1e6 / (PARSE_GOAL * grep.mb_s) - startup_s - scan_s) / cli.found * 1e6
    echo(f"  correlator parse past start-up and scan: {spent_us:.0f} us per event found; the goal leaves "
         f"{max(0.0, left_us):.0f} us per event at {cli.found / max(1, cli.lines):.2%} events per line")
    return {"cli_us_per_event": spent_us, "goal_us_per_event": left_us}
