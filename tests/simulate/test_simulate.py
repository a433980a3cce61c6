"""``correlator simulate``: realistic files with real names, deterministic, scalable."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from correlator.cli import cli
from correlator.simulate import generate


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["simulate", *args])
    return result.exit_code, result.output


class TestSimulateCommand:
    def test_writes_the_standard_file_names(self, tmp_path: Path) -> None:
        """The seed scenario writes Hadoop and Flink daemon logs named as the daemons name them."""
        code, out = run("seed", "--out", str(tmp_path))
        assert code == 0
        names = {Path(line).name for line in out.split()}
        assert "hadoop-hdfs-datanode-dn02.example.com.log" in names
        assert "hadoop-hdfs-namenode-nn01.example.com.log" in names
        assert "flink-flink-taskexecutor-0-tm01.example.com.log" in names
        assert "flink-flink-standalonesession-0-jm01.example.com.log" in names

    def test_unknown_scenario_is_a_usage_error(self, tmp_path: Path) -> None:
        code, out = run("no-such-thing", "--out", str(tmp_path))
        assert code == 2 and "no-such-thing" in out

    def test_scale_multiplies_the_traffic(self, tmp_path: Path) -> None:
        """--scale 4 writes several times the DataNode lines of --scale 1."""
        one = generate("no-failures", tmp_path / "one")
        four = generate("no-failures", tmp_path / "four", scale=4)
        size = lambda paths: sum(p.stat().st_size for p in paths if "datanode" in p.name)  # noqa: E731
        assert size(four) > 3 * size(one)

    def test_seed_changes_the_bytes_not_the_story(self, tmp_path: Path) -> None:
        """Another seed gives other ids and noise, but the same incident on the same DataNode."""
        a = generate("seed", tmp_path / "a", seed=0)
        b = generate("seed", tmp_path / "b", seed=1)
        dn02 = lambda paths: next(p for p in paths if "dn02" in p.name).read_text()  # noqa: E731
        assert dn02(a) != dn02(b)
        assert "DirectoryScanner.scan" in dn02(a) and "DirectoryScanner.scan" in dn02(b)


class TestWordings:
    def test_seed_lines_follow_the_reference_layouts(self, tmp_path: Path) -> None:
        """Flink 1.7 (log4j 1) and Hadoop 3.1 default layouts, as the reference examples print them."""
        files = {p.name: p.read_text() for p in generate("seed", tmp_path)}
        jm = files["flink-flink-standalonesession-0-jm01.example.com.log"]
        assert "INFO  org.apache.flink.runtime.checkpoint.CheckpointCoordinator     - Triggering checkpoint 60 @ " in jm
        assert "AsynchronousException{java.lang.Exception: Could not materialize checkpoint 60 for operator" in jm
        dn = files["hadoop-hdfs-datanode-dn02.example.com.log"]
        assert ("WARN org.apache.hadoop.hdfs.server.datanode.fsdataset.impl.FsDatasetImpl: Lock held time above "
                "threshold: lock identifier: org.apache.hadoop.hdfs.server.datanode.fsdataset.impl.FsDatasetImpl "
                "lockHeldTimeMs=37690 ms. Suppressed 0 lock warnings. The stack trace is: ") in dn
        assert "missing metadata files:0, missing block files:3, missing blocks in memory:1200" in dn

    def test_newer_versions_use_their_own_wordings(self, tmp_path: Path) -> None:
        """Flink 1.15 (log4j 2, failure manager) and Hadoop 3.3.0 (Scan Results, lock waits) wordings."""
        files = {p.name: p.read_text() for p in generate("hadoop-3.3", tmp_path)}
        jm = files["flink-flink-standalonesession-0-jm01.example.com.log"]
        assert "CheckpointFailureManager [] - Failed to trigger or complete checkpoint 60 for job" in jm
        assert "(type=CheckpointType{name='Checkpoint', sharingFilesStrategy=FORWARD_BACKWARD}) @ " in jm
        dn = files["hadoop-hdfs-datanode-dn02.example.com.log"]
        assert "Scan Results: BlockPool BP-" in dn
        assert "Waited above threshold to acquire lock: lock identifier: FsDatasetRWLock waitTimeMs=" in dn
        assert "Periodic Directory Tree Verification scan starting in " in dn

    def test_hadoop_34_prints_no_lock_warnings(self, tmp_path: Path) -> None:
        files = {p.name: p.read_text() for p in generate("hadoop-3.4", tmp_path)}
        dn = "".join(text for name, text in files.items() if "datanode" in name)
        assert "Lock held time above threshold" not in dn
        assert "Slow BlockReceiver write data to disk cost: " in dn and ", seqno=" in dn
