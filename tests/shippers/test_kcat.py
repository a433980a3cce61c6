"""kcat for real, the ad-hoc recipe of deploy/shippers/README.md: one ``kcat -P`` per log file, one record per line,
fed as the daemons write. With a key (``host/file``) or ``host`` headers the worker's verdicts equal ``analyze`` on the
same files; with neither, the host is never guessed: verdicts say ``unknown`` and the worker counts and warns."""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tests.faults.harness import ROWS, Row
from tests.shippers.live import LogSource, Processes, merged, require, sources_of, write_live
from tests.shippers.verdicts import GOLDEN, offline, streamed
from tests.support.hog import cpu_hog
from tests.support.worker import Stack, WorkerProcess, duplicates, latest

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def kcat_args(stack: Stack, source: LogSource, mode: str, cluster: str) -> list[str]:
    """The recipe's command line for one file: ``key`` (-k host/file), ``headers`` (-k host:path plus -H),
    ``headers_only`` (-H and a pinned partition, no key), ``bare`` (neither)."""
    args = ["kcat", "-P", "-b", stack.bootstrap, "-t", stack.topic(f"logs_{source.side}"), "-z", "lz4",
            "-X", "message.max.bytes=10485760"]
    if mode == "key":
        args += ["-k", f"{source.host}/{source.path.name}"]
    if mode == "headers":
        args += ["-k", f"{source.host}:{source.path}"]
    if mode in ("headers", "headers_only"):
        args += ["-H", f"host={source.host}", "-H", f"file={source.path}", "-H", f"cluster={cluster}"]
    if mode == "headers_only":
        args += ["-p", "0"]  # no key: librdkafka would spread a file's lines over partitions and lose their order
    return args


def ship_with_kcat(stack: Stack, processes: Processes, logs: Path, mode: str, cluster: str, workdir: Path,
                   first: str | None = None) -> None:
    """Every file of ``logs`` shipped live by its own kcat; ``first`` (``flink`` or ``hdfs``): that side's files are
    written out entirely before the other side's begin, as when one side's shippers lag."""
    sources = sources_of(logs)
    procs = [processes.start(kcat_args(stack, s, mode, cluster), env=stack.env, log=workdir / f"kcat-{i}.out",
                             stdin=subprocess.PIPE)
             for i, s in enumerate(sources)]
    sinks = [p.stdin for p in procs]
    assert all(sinks)
    lines = merged(sources)
    try:
        if first is None:
            write_live(lines, sinks, seconds=8)  # type: ignore[arg-type]
        else:
            for side in (first, "hdfs" if first == "flink" else "flink"):
                write_live([line for line in lines if sources[line[1]].side == side], sinks, seconds=4)  # type: ignore[arg-type]
    finally:
        for sink in sinks:
            sink.close()  # type: ignore[union-attr]
    for proc in procs:
        assert proc.wait(60) == 0, (workdir / "kcat-0.out").read_text()


@pytest.mark.parametrize("mode", ["key", "headers", "headers_only"])
def test_kcat_keyed_or_with_headers_gives_the_offline_verdicts(
    mode: str, stack: Stack, workers: list[WorkerProcess], processes: Processes, tmp_path: Path
) -> None:
    require("kcat")
    logs = GOLDEN / "recurring"
    cluster = "default" if mode == "key" else "lab-kcat"
    expected = offline(logs, cluster)
    assert len(expected) >= 4
    workers.append(WorkerProcess(stack).start())
    ship_with_kcat(stack, processes, logs, mode, cluster, tmp_path)
    got = streamed(stack.read("verdicts", until=len(expected), timeout_s=120))
    assert sorted(got) == expected
    assert "correlator_unknown_source_records_total{" not in workers[0].metrics()


def test_kcat_without_key_or_headers_never_guesses_a_host(
    stack: Stack, workers: list[WorkerProcess], processes: Processes, tmp_path: Path
) -> None:
    """Unkeyed lines scatter over partitions and mix files there; a banner on a partition names no other line."""
    require("kcat")
    logs = GOLDEN / "recurring"
    expected = {vid: hosts for vid, _, hosts in offline(logs, "default")}
    worker = WorkerProcess(stack).start()
    workers.append(worker)
    ship_with_kcat(stack, processes, logs, "bare", "default", tmp_path)
    got = latest(stack.read("verdicts", until=len(expected), timeout_s=90))
    assert got, "no verdict at all"
    for verdict in got:
        right = set(expected.get(verdict["verdict_id"], ()))
        wrong = set(verdict["root_cause"]["hosts"]) - right - {"unknown"}
        assert not wrong, (verdict["root_cause"], right)
        if "unknown" in verdict["root_cause"]["hosts"]:
            assert "'unknown' is a source whose records name no host" in verdict["root_cause"]["explanation"]
    assert any("unknown" in v["root_cause"]["hosts"] for v in got), "no verdict could have named a host"
    assert all(any(c["host"] == "unknown" for c in v["coverage"]["covered"] + v["coverage"]["missing"]) for v in got)
    unknown = re.findall(r'correlator_unknown_source_records_total\{topic="[^"]+"\} (\d+)', worker.metrics())
    assert unknown and sum(float(n) for n in unknown) > 0
    assert "name no host" in worker.log_path.read_text()


RUNS = 1
IDLE_TIMEOUT_MS = 12_000
"""A new cluster's decisions wait one idle timeout for its other side to show up; here that side starts about 4 s after
the first (``ship_with_kcat``), and busy loops on every core stretch the tests' usual 4 s race to a flake."""


@pytest.mark.serial  # its busy loops would stretch the timing of whatever ran beside it
@pytest.mark.parametrize("first", ["flink", "hdfs"])
def test_kcat_on_one_partition_under_a_cpu_hog_changes_no_verdict(
    first: str, stack: Stack, workers: list[WorkerProcess], processes: Processes, tmp_path: Path
) -> None:
    """kcat-style shipping (no key, ``host``/``file``/``cluster`` headers, every file on partition 0) while busy loops
    hold every core, one side's files shipped before the other's: each run's verdicts are the offline ones, first
    time and under their ids — no verdict is decided before the evidence it needs was read."""
    require("kcat")
    logs = GOLDEN / "recurring"
    stack.extra["CORRELATOR_IDLE_TIMEOUT_MS"] = str(IDLE_TIMEOUT_MS)
    workers.append(WorkerProcess(stack).start())
    wanted: list[tuple[str, str, tuple[str, ...]]] = []
    with cpu_hog(seconds=90 * RUNS):
        for run in range(RUNS):
            cluster = f"lab-hog-{first}-{run}"
            wanted += offline(logs, cluster)
            started, workdir = time.monotonic(), tmp_path / f"run-{run}"
            workdir.mkdir()
            ship_with_kcat(stack, processes, logs, "headers_only", cluster, workdir, first=first)
            records = stack.read("verdicts", until=len(wanted), timeout_s=120)
            got = streamed(records)
            revised = [r for r in records if int(r.get("revision") or 0) > 0]
            ROWS.append(Row(f"kcat, one partition, CPU hog, {first} first (run {run + 1})", None,
                            len(set(got) & set(wanted)), len(wanted), duplicates(records),
                            recovery_s=time.monotonic() - started, revised=len(revised)))
            assert sorted(got) == sorted(wanted), f"run {run + 1}"
            assert not revised, f"run {run + 1}: decided before its evidence was read: {revised}"
    assert duplicates(records) == 0


def test_a_datanode_shipped_late_is_named_missing_then_revised_to_the_offline_verdict(
    stack: Stack, workers: list[WorkerProcess], processes: Processes, tmp_path: Path
) -> None:
    """kcat-style shipping (a producer per file, one partition) of a recurring scanner incident spanning an hour of
    log time, while busy loops hold every core, with the scanning DataNode's producer started only after every
    verdict was out: its verdicts first name it as the DataNode whose log is missing (never "nothing abnormal",
    never a neighbour), and once its lines arrive, however late, each is revised to the offline verdict."""
    require("kcat")
    logs = GOLDEN / "recurring"
    cluster = "lab-late-dn"
    expected = offline(logs, cluster)
    silent = "dn02.example.com"
    waited_on = {vid for vid, _, hosts in expected if silent in hosts}
    assert waited_on, "the scanner must be on the withheld DataNode in some checkpoint"
    # what analyze says without that log: the DataNode it points at is the withheld one (its own banner's address)
    without = tmp_path / "without-the-silent-datanode"
    shutil.copytree(logs, without, ignore=shutil.ignore_patterns(f"*{silent}*"))
    pointed = {vid: hosts for vid, _, hosts in offline(without, cluster) if vid in waited_on}
    [banner] = [line for f in logs.glob(f"*{silent}*") for line in f.read_text().splitlines() if "host = " in line]
    address = banner.rsplit("/", 1)[1].strip()
    assert set(pointed) == waited_on and all(h.startswith(f"{address}:") for hs in pointed.values() for h in hs), pointed
    stack.extra["CORRELATOR_IDLE_TIMEOUT_MS"] = str(IDLE_TIMEOUT_MS)
    workers.append(WorkerProcess(stack).start())
    sources = sources_of(logs)
    with cpu_hog(seconds=150):
        for phase, chosen in enumerate(([s for s in sources if s.host != silent],
                                        [s for s in sources if s.host == silent])):
            procs = [processes.start(kcat_args(stack, s, "headers_only", cluster), env=stack.env,
                                     log=tmp_path / f"kcat-{phase}-{i}.out", stdin=subprocess.PIPE)
                     for i, s in enumerate(chosen)]
            sinks = [p.stdin for p in procs]
            try:
                write_live(merged(chosen), sinks, seconds=6)  # type: ignore[arg-type]
            finally:
                for sink in sinks:
                    sink.close()  # type: ignore[union-attr]
            for proc in procs:
                assert proc.wait(60) == 0
            if phase == 0:
                first = {r["verdict_id"]: r for r in stack.read("verdicts", until=len(expected), timeout_s=120)}
                assert set(first) == {vid for vid, _, _ in expected}
                for vid in waited_on:
                    cause = first[vid]["root_cause"]
                    suspects = {m["host"] for m in first[vid]["coverage"]["missing"] if m.get("pointed_by")}
                    assert cause["code"] == "INSUFFICIENT_DATA", cause
                    assert set(cause["hosts"]) == suspects and suspects, (cause, first[vid]["coverage"])
                    assert tuple(cause["hosts"]) == pointed[vid], (cause, pointed[vid])
        deadline = time.monotonic() + 120
        while sorted(got := streamed(stack.read("verdicts", until=len(expected), timeout_s=10))) != expected:
            assert time.monotonic() < deadline, (got, expected)
            time.sleep(1)
    records = stack.read("verdicts", until=len(expected), timeout_s=10)
    revised = {r["verdict_id"] for r in records if int(r.get("revision") or 0) > 0}
    assert waited_on <= revised
    ROWS.append(Row("kcat, CPU hog, the scanning DataNode shipped after the verdicts", None, len(expected),
                    len(expected), duplicates(records), revised=len(revised)))
