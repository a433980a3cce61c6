"""Offline reading: discovery, hosts and roles from names, directories and banners; the block fast path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import example, given, settings
from hypothesis import strategies as st

from correlator.adapters.scanners import available_scanners, fastest_scanner
from correlator.cli import cli
from correlator.core.events import Event
from correlator.core.ingest import prefilter
from correlator.core.ingest.ingest import Ingest, IngestConfig, SourceHint
from correlator.core.ingest.prefilter import ReScanner
from correlator.offline.files import discover, iter_events

JOB = "1a3bc71ac57f33961637adf340e9c28f"
LOCK = [
    "2020-01-02 17:19:20,912 WARN org.apache.hadoop.hdfs.server.datanode.fsdataset.impl.FsDatasetImpl: Lock held time "
    "above threshold: lock identifier: org.apache.hadoop.hdfs.server.datanode.fsdataset.impl.FsDatasetImpl "
    "lockHeldTimeMs=37690 ms. Suppressed 0 lock warnings. The stack trace is: java.lang.Thread.getStackTrace(Thread.java:1559)",
    "org.apache.hadoop.util.InstrumentedLock.unlock(InstrumentedLock.java:133)",
    "org.apache.hadoop.hdfs.server.datanode.DirectoryScanner.scan(DirectoryScanner.java:395)",
    "",
]
NOISE_DN = "2020-01-02 17:19:21,000 INFO org.apache.hadoop.hdfs.server.datanode.DataNode: PacketResponder: x terminating"
TRIGGER = (f"2020-01-02 17:18:43,301 INFO  org.apache.flink.runtime.checkpoint.CheckpointCoordinator     - "
           f"Triggering checkpoint 60 @ 1577956723295 for job {JOB}.")
EXPIRED = (f"2020-01-02 17:18:53,301 INFO  org.apache.flink.runtime.checkpoint.CheckpointCoordinator     - "
           f"Checkpoint 60 of job {JOB} expired before completing.")
SLOW_ACK = ("2020-01-02 17:19:21,110 WARN  org.apache.hadoop.hdfs.DataStreamer                          [] - Slow "
            "waitForAckedSeqno took 37812ms (threshold=30000ms)")
TM_NOISE = "2020-01-02 17:19:21,111 INFO  org.apache.flink.runtime.taskmanager.Task                    [] - noise"
GC = ("[2020-01-02T17:18:53.635+0000][12383.801s][info][gc          ] GC(123) Pause Full (G1 Compaction Pause) "
      "3900M->3100M(4096M) 38123.456ms")
BANNER = [
    "2020-01-02 09:41:01,002 INFO org.apache.hadoop.hdfs.server.datanode.DataNode: STARTUP_MSG: ",
    "/************************************************************",
    "STARTUP_MSG: Starting DataNode",
    "STARTUP_MSG:   host = dn05.example.com/10.20.30.45",
    "STARTUP_MSG:   version = 3.1.0",
    "************************************************************/",
    "2020-01-02 09:42:00,000 WARN org.apache.hadoop.hdfs.server.datanode.DataNode: Slow flushOrSync took 2210ms "
    "(threshold=300ms), isSync:true, flushTotalNanos=2209871523ns",
]


def _write(path: Path, lines: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture
def mixed(tmp_path: Path) -> Path:
    """A directory like an operator's collection: daemon logs, YARN layout, GC log, a Filebeat export."""
    _write(tmp_path / "dn" / "hadoop-hdfs-datanode-dn02.example.com.log", [NOISE_DN, *LOCK, NOISE_DN])
    _write(tmp_path / "tm" / "flink-flink-taskexecutor-0-tm-1.example.com.log", [TM_NOISE, SLOW_ACK, TM_NOISE])
    _write(tmp_path / "yarn" / "jm-host" / "jobmanager.log", [TRIGGER, EXPIRED])
    _write(tmp_path / "yarn" / "jm-host" / "gc.log", [GC])
    _write(tmp_path / "logs" / "datanode.log", BANNER)
    envelope = {"@timestamp": "2020-01-02T17:19:20.950Z", "host": {"name": "dn03.example.com"},
                "log": {"file": {"path": "/var/log/hadoop/hadoop-hdfs-datanode-dn03.example.com.log"}},
                "message": "2020-01-02 17:19:20,950 WARN org.apache.hadoop.hdfs.server.datanode.fsdataset.impl."
                           "FsDatasetImpl: Removed block 1107441237 from memory with missing block file on the disk"}
    _write(tmp_path / "shipped" / "filebeat.json", [json.dumps(envelope)])
    return tmp_path


class TestDiscover:
    def test_families_hosts_roles(self, mixed: Path) -> None:
        """Families come from content; hosts from standard names or directories; GC logs adopt their neighbour."""
        found = {Path(f.path).name: (f.family, f.host, f.role) for f in discover([str(mixed)])}
        assert found == {
            "hadoop-hdfs-datanode-dn02.example.com.log": ("hdfs", "dn02.example.com", "datanode"),
            "flink-flink-taskexecutor-0-tm-1.example.com.log": ("flink", "tm-1.example.com", "taskmanager"),
            "jobmanager.log": ("flink", "jm-host", "jobmanager"),
            "gc.log": ("gc", "jm-host", "jobmanager"),
            "datanode.log": ("hdfs", "unknown", "datanode"),
            "filebeat.json": ("envelope", "shipped", None),
        }

    def test_missing_path(self, tmp_path: Path) -> None:
        """A path that does not exist is an error, not silently skipped."""
        with pytest.raises(FileNotFoundError):
            discover([str(tmp_path / "nope")])


class TestParseCommand:
    def test_mixed_directory(self, mixed: Path) -> None:
        """``correlator parse DIR`` prints every event as JSON with the right host and role."""
        result = CliRunner().invoke(cli, ["parse", str(mixed)])
        assert result.exit_code == 0, result.output
        events = [json.loads(line) for line in result.stdout.splitlines()]
        seen = {(e["type"], e["host"], e["role"]) for e in events}
        assert seen == {
            ("dn_lock_held", "dn02.example.com", "datanode"),
            ("hdfs_client_slow", "tm-1.example.com", "taskmanager"),
            ("checkpoint_triggered", "jm-host", "jobmanager"),
            ("checkpoint_expired", "jm-host", "jobmanager"),
            ("jvm_pause", "jm-host", "jobmanager"),
            ("daemon_start", "dn05.example.com", "datanode"),
            ("slow_io", "dn05.example.com", "datanode"),
            ("directory_scan_reconcile", "dn03.example.com", "datanode"),
        }
        lock = next(e for e in events if e["type"] == "dn_lock_held")
        assert lock["ref"].endswith("hadoop-hdfs-datanode-dn02.example.com.log:2")
        assert lock["at"] == "2020-01-02T17:19:20.912Z" and lock["holder"] == "DirectoryScanner.scan"

    def test_zone_and_cluster_options(self, mixed: Path) -> None:
        """``--tz`` shifts zone-less stamps; ``--cluster`` names inputs that carry none."""
        path = str(mixed / "yarn" / "jm-host" / "jobmanager.log")
        result = CliRunner().invoke(cli, ["parse", "--tz", "Asia/Shanghai", "--cluster", "c1", path])
        trigger = json.loads(result.stdout.splitlines()[0])
        assert trigger["ts_ms"] - trigger["trigger_ts_ms"] == 6 and trigger["cluster"] == "c1"

    def test_missing_file_exits_1(self, tmp_path: Path) -> None:
        """A missing input is a runtime failure with a one-line reason."""
        result = CliRunner().invoke(cli, ["parse", str(tmp_path / "absent.log")])
        assert result.exit_code == 1 and "no such file" in result.stderr


POOL = [NOISE_DN, TM_NOISE, TRIGGER, EXPIRED, SLOW_ACK, *LOCK, *BANNER, "\tat org.x.Y.z(Y.java:1)",
        "Caused by: java.lang.Exception: Could not materialize checkpoint 3 for operator x.", "garbage \u00e9\u4e2d",
        "2020-01-02 17:19:21,000 INFO org.apache.hadoop.hdfs.server.datanode.DataNode: Receiving BP-1:blk_1_1 "
        "src: /1.2.3.4:5 dest: /1.2.3.5:9866"]


class TestBlockPath:
    @settings(max_examples=150, deadline=None)
    @given(st.lists(st.sampled_from(POOL), max_size=60), st.lists(st.integers(min_value=1, max_value=400), max_size=6))
    @example([NOISE_DN, TM_NOISE, POOL[-1]], [])  # a noise record open when a write line comes: file order still holds
    # a trigger continuation line after a write line is a record of its own (a write line heads none), and the record
    # after it still gets its continuation lines
    @example([POOL[-1], POOL[-1], BANNER[2], TM_NOISE, POOL[-3], POOL[-1]], [])
    def test_blocks_equal_lines(self, lines: list[str], cuts: list[int]) -> None:
        """Any split into blocks gives exactly the events of feeding the same file line by line."""
        data = ("\n".join(lines) + "\n").encode() if lines else b""
        hint = SourceHint(file="/d/hadoop-hdfs-datanode-dn1.log")
        by_line = Ingest(IngestConfig())
        expected: list[object] = []
        for number, line in enumerate(lines, start=1):
            expected += by_line.feed_line(line, ref=f"/d/hadoop-hdfs-datanode-dn1.log:{number}", hint=hint)
        expected += by_line.flush_all()
        by_block = Ingest(IngestConfig(), fastest_scanner())
        got: list[object] = []
        pos, line_no = 0, 1
        for cut in [*sorted(cuts), len(data)]:
            end = data.find(b"\n", min(cut, len(data)) - 1) + 1 if cut < len(data) else len(data)
            if end <= pos:
                continue
            block = data[pos:end]
            read = by_block.feed_block(block, file_ref="/d/hadoop-hdfs-datanode-dn1.log", first_line=line_no, hint=hint)
            got += read.outputs
            assert read.newlines == block.count(b"\n")  # the next block's first line, known without a recount
            line_no += read.newlines
            pos = end
        got += by_block.flush_all()
        findings = [o for o in got if isinstance(o, Event) and o.type != "source_progress"]
        assert findings == [o for o in expected if isinstance(o, Event) and o.type != "source_progress"]
        times = {o.ts_ms for o in got if isinstance(o, Event)}
        edges = {o.ts_ms for o in expected if isinstance(o, Event) and o.type == "source_progress"
                 and o.ref.rsplit(":", 1)[-1] in ("1", "end")}
        assert edges <= times  # the file's first line and its last line report their time on both paths

    def test_scanners_agree(self) -> None:
        """Every available prefilter engine finds the same trigger lines as the stdlib one."""
        data = ("\n".join(POOL * 3) + "\n").encode()
        reference = {(data.rfind(b"\n", 0, o), i) for o, i in ReScanner().hits(data).merged()}
        for scanner in available_scanners():
            found = scanner.hits(data)
            assert {(data.rfind(b"\n", 0, o), i) for o, i in found.merged()} == reference, scanner.name
            assert found.opens == sorted(found.opens) and found.triggers == sorted(found.triggers)
            assert scanner.classify(EXPIRED) == prefilter.TRIGGER
            assert scanner.classify(NOISE_DN) == prefilter.NOTHING
            assert scanner.classify(POOL[-1]) == prefilter.WRITE

    def test_iter_events_reads_stdin_dash(self, mixed: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """``-`` reads standard input through the same pipeline."""
        import io
        import sys

        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO((EXPIRED + "\n").encode())))
        [event] = [e for e in iter_events(["-"]) if isinstance(e, Event) and e.type != "source_progress"]
        assert isinstance(event, Event) and event.type == "checkpoint_expired" and event.ref == "-:1"


def test_unknown_zone_is_a_usage_error(tmp_path: Path) -> None:
    """An unknown ``--tz`` exits 2 with a message instead of a traceback."""
    _write(tmp_path / "a.log", [EXPIRED])
    result = CliRunner().invoke(cli, ["parse", "--tz", "Mars/Olympus", str(tmp_path / "a.log")])
    assert result.exit_code == 2 and "unknown time zone" in result.output


class TestNotLogs:
    """Files that are no logs are left out of analyze and replay alike, each with its reason."""

    def test_skipped_with_reasons(self, mixed: Path) -> None:
        odd = mixed / "odd"
        odd.mkdir()
        (odd / "expected.json").write_text(json.dumps({"verdicts": [{"code": "X"}]}, indent=2))
        (odd / "verdicts.jsonl").write_text('{"verdict_id": "a", "root_cause": {}}\n')
        (odd / "logs.tar.gz").write_bytes(b"\x1f\x8b\x08\x00" + bytes(range(256)))
        (odd / "README.txt").write_text("How to read these logs.\n")
        skipped: list[tuple[str, str]] = []
        found = {Path(f.path).name for f in discover([str(mixed)], skipped)}
        reasons = {Path(path).name: why for path, why in skipped}
        assert set(reasons) == {"expected.json", "verdicts.jsonl", "logs.tar.gz", "README.txt"}
        assert not found & set(reasons)
        assert "filebeat.json" in found
        assert reasons["expected.json"].startswith("JSON, but not one shipper record per line (bad_json")
        assert reasons["verdicts.jsonl"].startswith("JSON, but not one shipper record per line (bad_envelope")
        assert reasons["logs.tar.gz"].startswith("unreadable (damaged gzip file"), reasons["logs.tar.gz"]
        assert reasons["README.txt"].startswith("no Flink, Hadoop or JVM GC log line")

    def test_one_huge_record_is_not_judged_by_its_head(self, tmp_path: Path) -> None:
        record = {"message": "2020-01-02 17:19:20,950 WARN org.apache.hadoop.hdfs.server.datanode.DataNode: "
                  + "x" * 70_000, "host": "dn1"}
        (tmp_path / "big.json").write_text(json.dumps(record) + "\n")
        assert [f.family for f in discover([str(tmp_path)], [])] == ["envelope"]
