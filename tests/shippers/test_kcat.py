"""kcat for real, the ad-hoc recipe of deploy/shippers/README.md: one ``kcat -P`` per log file, one record per line,
fed as the daemons write. With a key (``host/file``) or ``host`` headers the worker's verdicts equal ``analyze`` on the
same files; with neither, the host is never guessed: verdicts say ``unknown`` and the worker counts and warns."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.shippers.live import LogSource, Processes, merged, require, sources_of, write_live
from tests.shippers.verdicts import GOLDEN, offline, streamed
from tests.support.worker import Stack, WorkerProcess, latest

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


def ship_with_kcat(stack: Stack, processes: Processes, logs: Path, mode: str, cluster: str, workdir: Path) -> None:
    sources = sources_of(logs)
    procs = [processes.start(kcat_args(stack, s, mode, cluster), env=stack.env, log=workdir / f"kcat-{i}.out",
                             stdin=subprocess.PIPE)
             for i, s in enumerate(sources)]
    sinks = [p.stdin for p in procs]
    assert all(sinks)
    try:
        write_live(merged(sources), sinks, seconds=8)  # type: ignore[arg-type]
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
