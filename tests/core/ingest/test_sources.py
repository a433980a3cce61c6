"""Host, role and family from standard file names, logger names and content (README: Where your logs come from)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from correlator.core.ingest.sources import facts_from_path, role_of_logger, sniff_family


@pytest.mark.parametrize(
    ("path", "host", "role", "family"),
    [
        ("/var/log/hadoop/hadoop-hdfs-datanode-dn02.example.com.log", "dn02.example.com", "datanode", "hdfs"),
        ("logs/hadoop-hdfs-namenode-nn1.log.3", "nn1", "namenode", "hdfs"),
        ("hadoop-my-user-datanode-dn7.log.2020-01-02", "dn7", "datanode", "hdfs"),
        ("flink-flink-taskexecutor-0-tm-3.example.com.log", "tm-3.example.com", "taskmanager", "flink"),
        ("flink-u-standalonesession-1-jm1.log.2", "jm1", "jobmanager", "flink"),
        ("/yarn/container_01/worker-07/taskmanager.log", "worker-07", "taskmanager", None),
        ("pods/jm-0/jobmanager.log", "jm-0", "jobmanager", None),
        ("tm-host/taskmanager-gc.log.0.current", "tm-host", "taskmanager", "gc"),
        ("gc.log", None, None, "gc"),
        ("stray.log", None, None, None),
        ("log/flink-alice-client-lab-host.log", "lab-host", "client", "flink"),
    ],
)
def test_file_names(path: str, host: str | None, role: str | None, family: str | None) -> None:
    """Hadoop and Flink daemon file names name the host; YARN/Kubernetes layouts name it by directory."""
    facts = facts_from_path(path)
    assert (facts.host, facts.role, facts.family) == (host, role, family)


@pytest.mark.parametrize(
    ("logger", "role"),
    [
        ("org.apache.flink.runtime.checkpoint.CheckpointCoordinator", "jobmanager"),
        ("org.apache.flink.runtime.executiongraph.ExecutionGraph", "jobmanager"),
        ("o.a.f.r.c.CheckpointCoordinator", "jobmanager"),
        ("org.apache.flink.runtime.taskmanager.Task", "taskmanager"),
        ("org.apache.flink.streaming.runtime.tasks.AsyncCheckpointRunnable", "taskmanager"),
        ("org.apache.hadoop.hdfs.server.datanode.DirectoryScanner", "datanode"),
        ("datanode.DirectoryScanner", "datanode"),
        ("org.apache.hadoop.hdfs.server.namenode.FSNamesystem", "namenode"),
        ("namenode.FSNamesystem", "namenode"),
        ("org.apache.hadoop.hdfs.DataStreamer", None),
        ("org.apache.hadoop.util.JvmPauseMonitor", None),
    ],
)
def test_role_of_logger(logger: str, role: str | None) -> None:
    """Loggers prove a role, except those that run in every process (HDFS client, pause monitor)."""
    assert role_of_logger(logger) == role


def test_sniff_family() -> None:
    """JSON lines are envelopes; GC stamps are GC logs; logger packages decide Flink vs Hadoop."""
    assert sniff_family('{"message": "x"}\n') == "envelope"
    assert sniff_family("[2020-01-02T17:18:15.512+0800][12345.678s][info][gc] Using G1\n") == "gc"
    assert sniff_family("2020-01-02T17:18:15.512+0800: 1.2: [GC (Allocation Failure) 1K->1K(2K), 0.1 secs]\n") == "gc"
    assert sniff_family("2020-01-02 17:18:53,337 INFO  org.apache.flink.runtime.taskmanager.Task - x\n") == "flink"
    assert sniff_family("2020-01-02 17:18:53,337 INFO org.apache.hadoop.hdfs.server.datanode.DataNode: x\n") == "hdfs"


class TestInputSide:
    """Which raw topic a discovered log file is shipped to."""

    def test_flink_logs_and_flink_gc_logs_go_to_the_flink_topic(self) -> None:
        from correlator.core.ingest.sources import input_side

        assert input_side("flink", "taskmanager") == "flink"
        assert input_side("gc", "taskmanager") == "flink"
        assert input_side("gc", "datanode") == "hdfs"
        assert input_side("hdfs", "namenode") == "hdfs"

    def test_envelope_files_are_judged_by_their_content(self) -> None:
        from correlator.core.ingest.sources import input_side

        flink = '{"message": "2020-01-02 17:18:53,337 INFO  org.apache.flink.runtime.taskmanager.Task - x"}'
        hadoop = '{"message": "2020-01-02 17:18:53,337 INFO org.apache.hadoop.hdfs.server.datanode.DataNode: x"}'
        assert input_side("envelope", None, flink) == "flink"
        assert input_side("envelope", None, hadoop) == "hdfs"


@pytest.mark.parametrize(
    ("key", "host", "file"),
    [
        ("dn02.example.com:/var/log/hadoop/hadoop-hdfs-datanode-dn02.log", "dn02.example.com",
         "/var/log/hadoop/hadoop-hdfs-datanode-dn02.log"),
        ("dn02.example.com/hadoop-hdfs-datanode-dn02.log", "dn02.example.com", "hadoop-hdfs-datanode-dn02.log"),
        ("dn02//var/log/x.log", "dn02", "/var/log/x.log"),
        ("dn02|/var/log/a:b.log", "dn02", "/var/log/a:b.log"),
        ("dn02|C:\\hadoop\\logs\\dn.log", "dn02", "C:\\hadoop\\logs\\dn.log"),
        ("dn02:C:\\hadoop\\logs\\dn.log", "dn02", "C:\\hadoop\\logs\\dn.log"),
        ("C:\\hadoop\\logs\\dn.log", None, "C:\\hadoop\\logs\\dn.log"),
        ("C:/hadoop/logs/dn.log", None, "C:/hadoop/logs/dn.log"),
        ("/var/log/hadoop/x.log", None, "/var/log/hadoop/x.log"),
        ("var/log/hadoop/x.log", None, "var/log/hadoop/x.log"),
        ("logs/taskmanager.log", None, "logs/taskmanager.log"),
        ("./x.log", None, "./x.log"),
        ("10.0.0.5:/var/log/x.log", "10.0.0.5", "/var/log/x.log"),
        ("hadoop-hdfs-datanode-dn02.log", None, "hadoop-hdfs-datanode-dn02.log"),
        ("not a host:/x", None, "not a host:/x"),
        ("|/x.log", None, "/x.log"),
        ("", None, None),
    ],
)
def test_keys_name_host_and_file(key: str, host: str | None, file: str | None) -> None:
    """``host|path``, ``host:path`` (never a Windows drive), ``host/path`` (never a top-level directory)."""
    from correlator.core.ingest.sources import source_of_key

    facts = source_of_key(key)
    assert (facts.host, facts.file) == (host, file)


_HOST = st.from_regex(r"[a-z0-9][a-z0-9-]{0,12}[a-z0-9](\.[a-z0-9]([a-z0-9-]{0,8}[a-z0-9])?){0,3}", fullmatch=True)
_UNIX = st.from_regex(r"(/[\w.:-]{1,12}){1,5}", fullmatch=True)
_WINDOWS = st.from_regex(r"[A-Z]:(\\([\w .-]{0,9}[\w-])){1,4}", fullmatch=True)
"""Windows names never end in a space or a dot (the file system drops them), so keys may be stripped."""


@given(_HOST, _UNIX | _WINDOWS)
def test_keys_round_trip(host: str, path: str) -> None:
    """Any host name with any Unix or Windows path comes back out of ``host|path`` and ``host:path``."""
    from correlator.core.ingest.sources import source_of_key

    for sep in ("|", ":"):
        facts = source_of_key(f"{host}{sep}{path}")
        assert (facts.host, facts.file) == (host, path)


@given(_UNIX | _WINDOWS)
def test_a_bare_path_names_no_host(path: str) -> None:
    """A path alone (absolute Unix, or with a drive letter) is a file, never a host."""
    from correlator.core.ingest.sources import source_of_key

    assert source_of_key(path).host is None


@given(st.text(max_size=60))
def test_any_key_is_read_without_error(key: str) -> None:
    """Keys are untrusted bytes: any text yields a (possibly empty) answer, and a named host is a host name."""
    from correlator.core.ingest.sources import _HOSTNAME, source_of_key

    facts = source_of_key(key)
    assert facts.host is None or _HOSTNAME.match(facts.host)
