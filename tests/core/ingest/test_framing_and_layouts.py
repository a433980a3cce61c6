"""Container framing, JSON layouts, Kubernetes names and HDFS identities: each unwrapped to what the daemon wrote.

Formats as their owners document them: the kubelet's CRI log format (``<RFC 3339 nano> <stream> <F|P> <text>``),
Docker's json-file driver (``{"log", "stream", "time"}``), log4j2's JsonTemplateLayout ``EcsLayout.json`` (flat
dotted keys), log4j2's classic ``JsonLayout``, logstash-logback-encoder, and GELF 1.1.
"""

from __future__ import annotations

import json
from zoneinfo import ZoneInfo

from hypothesis import given
from hypothesis import strategies as st

from correlator.core.ingest.clusters import identity, split
from correlator.core.ingest.envelopes import decode
from correlator.core.ingest.framing import Framing, Unframer, is_cri, sniff_framing, unframe_records
from correlator.core.ingest.ingest import Ingest, IngestConfig, SourceHint
from correlator.core.ingest.kubernetes import pod_of_metadata, pod_of_path
from correlator.core.ingest.layouts import read_layout, render
from correlator.core.ingest.sources import HostFrom, facts_from_path

UTC = ZoneInfo("UTC")
LINE = "2026-12-01 07:16:23,879 INFO  org.apache.flink.runtime.checkpoint.CheckpointCoordinator [] - Triggering"
STACK = "java.io.IOException: Could not flush and close\n\tat org.apache.flink.Foo.bar(Foo.java:12)"


def _cri(line: str, tag: str = "F") -> bytes:
    return f"2026-12-01T07:16:23.879123456Z stdout {tag} {line}".encode()


class TestContainerFraming:
    def test_cri_lines_lose_their_prefix_and_partials_join(self) -> None:
        unframer = Unframer(Framing.CRI)
        block = b"\n".join([_cri(LINE[:30], "P"), _cri(LINE[30:60], "P"), _cri(LINE[60:]), _cri("\tat x.y(Z.java:1)")])
        assert unframer.block(block + b"\n") == (LINE + "\n\tat x.y(Z.java:1)\n").encode()

    def test_a_partial_left_open_at_the_end_is_kept(self) -> None:
        unframer = Unframer(Framing.CRI)
        assert unframer.block(_cri("half", "P") + b"\n") == b""
        assert unframer.flush() == b"half"

    def test_docker_json_file(self) -> None:
        framed = "\n".join(json.dumps({"log": piece, "stream": "stdout", "time": "2026-12-01T07:16:23.879Z"})
                           for piece in (LINE[:40], LINE[40:] + "\n", "\tat a.b(C.java:2)\n"))
        assert sniff_framing(framed) is Framing.DOCKER
        assert Unframer(Framing.DOCKER).block(framed.encode() + b"\n") == (LINE + "\n\tat a.b(C.java:2)\n").encode()

    def test_sniffed_by_content_not_name(self) -> None:
        assert sniff_framing(_cri(LINE).decode()) is Framing.CRI
        assert sniff_framing(LINE) is Framing.PLAIN
        assert is_cri(_cri(LINE)) and not is_cri(LINE.encode())

    @given(st.lists(st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=0x2FF), max_size=300), max_size=20),
           st.integers(min_value=1, max_value=50))
    def test_any_lines_split_anywhere_come_back_whole(self, lines: list[str], cut: int) -> None:
        framed: list[bytes] = []
        for line in lines:
            pieces = [line[i:i + cut] for i in range(0, len(line), cut)] or [""]
            framed += [_cri(p, "P") for p in pieces[:-1]] + [_cri(pieces[-1])]
        out = Unframer(Framing.CRI).block(b"\n".join(framed) + b"\n") if framed else b""
        assert out == b"".join(line.encode() + b"\n" for line in lines)

    def test_streamed_records_joined_within_the_batch(self) -> None:
        values, offsets = unframe_records([_cri("ab", "P"), _cri("cd"), _cri("ef")], [10, 11, 12])
        assert values == [b"abcd", b"ef"] and offsets == [11, 12]


class TestLayouts:
    def test_ecs_record_becomes_the_text_record(self) -> None:
        record = read_layout({"@timestamp": "2026-12-01T07:16:23.879Z", "ecs.version": "1.2.0", "log.level": "WARN",
                              "message": "Checkpoint 3 expired", "process.thread.name": "Checkpoint Timer",
                              "log.logger": "org.apache.flink.runtime.checkpoint.CheckpointCoordinator",
                              "error.stack_trace": STACK})
        assert record is not None and record.layout == "ecs"
        assert render(record, UTC) == ("2026-12-01 07:16:23,879 WARN  org.apache.flink.runtime.checkpoint."
                                       "CheckpointCoordinator - Checkpoint 3 expired\n" + STACK)

    def test_rendered_in_the_ingest_zone(self) -> None:
        record = read_layout({"@timestamp": "2026-12-01T07:16:23.879Z", "log.level": "INFO", "message": "m",
                              "log.logger": "a.B"})
        assert record is not None and render(record, ZoneInfo("Europe/Berlin")).startswith("2026-12-01 08:16:23,879 ")

    def test_log4j2_json_layout_with_frames_and_cause(self) -> None:
        record = read_layout({"instant": {"epochSecond": 1796109383, "nanoOfSecond": 879000000}, "level": "ERROR",
                              "loggerName": "a.B", "message": "failed", "thread": "t",
                              "thrown": {"name": "java.io.IOException", "message": "flush",
                                         "extendedStackTrace": [{"class": "a.C", "method": "m", "file": "C.java",
                                                                 "line": 3}],
                                         "cause": {"name": "java.net.SocketTimeoutException", "message": "slow"}}})
        assert record is not None and record.ts_ms == 1796109383879
        assert render(record, UTC).splitlines()[1:] == [
            "java.io.IOException: flush", "\tat a.C.m(C.java:3)", "Caused by: java.net.SocketTimeoutException: slow"]

    def test_logstash_and_gelf(self) -> None:
        logstash = read_layout({"@timestamp": "2026-12-01T07:16:23.879+00:00", "@version": "1", "level": "INFO",
                                "logger_name": "a.B", "thread_name": "t", "message": "m", "stack_trace": STACK})
        gelf = read_layout({"version": "1.1", "host": "tm-1", "short_message": "m", "full_message": "m\n" + STACK,
                            "timestamp": 1796109383.879, "level": 4, "_logger": "a.B"})
        assert logstash is not None and logstash.stack == STACK
        assert gelf is not None and (gelf.level, gelf.stack, gelf.ts_ms) == ("WARN", STACK, 1796109383879)

    def test_a_shipper_envelope_is_not_a_layout(self) -> None:
        assert read_layout({"message": LINE, "host": {"name": "dn1"}, "@timestamp": "2026-12-01T07:16:23Z"}) is None

    def test_streamed_layout_records_and_layouts_inside_a_shipper(self) -> None:
        ecs = {"@timestamp": "2026-12-01T07:16:23.879Z", "log.level": "INFO", "message": "m", "log.logger": "a.B"}
        assert decode(json.dumps(ecs).encode()).text == "2026-12-01 07:16:23,879 INFO  a.B - m"
        wrapped = {"log": json.dumps(ecs) + "\n", "kubernetes": {"pod_name": "flink-taskmanager-1-1",
                                                                 "namespace_name": "flink", "host": "node-3"}}
        decoded = decode(json.dumps(wrapped).encode())
        assert (decoded.text.rstrip(), decoded.host, decoded.role) == (
            "2026-12-01 07:16:23,879 INFO  a.B - m", "flink-taskmanager-1-1", "taskmanager")

    def test_a_raw_cri_record_through_the_ingest(self) -> None:
        ingest = Ingest(IngestConfig())
        values = [_cri("2026-12-01 07:16:23,879 INFO  org.apache.flink.runtime.checkpoint.CheckpointCoordinator"
                       " [] - Triggering checkpoint 7 (type=CheckpointType{name='Checkpoint'}) @ 1796109383879 for"
                       " job 0123456789abcdef0123456789abcdef.")]
        out = ingest.feed_records(values, [5], stream_ref="logs.flink/0") + ingest.flush_all()
        assert [e.type for e in out if hasattr(e, "type") and e.type == "checkpoint_triggered"], out


class TestKubernetesNames:
    def test_kubelet_files(self) -> None:
        tm = pod_of_path(f"/var/log/containers/flink-taskmanager-1-1_flink_flink-main-container-{'ab' * 32}.log")
        dn = pod_of_path("/var/log/pods/hdfs_hdfs-datanode-2_0f8e1a2b-3c4d-5e6f-7081-92a3b4c5d6e7/datanode/0.log")
        assert tm is not None and (tm.pod, tm.namespace, tm.role) == ("flink-taskmanager-1-1", "flink", "taskmanager")
        assert dn is not None and (dn.pod, dn.role) == ("hdfs-datanode-2", "datanode")

    def test_shippers_metadata(self) -> None:
        vector = pod_of_metadata({"kubernetes": {"pod_name": "jm-7d9f-x2k4p", "pod_namespace": "f",
                                                "pod_labels": {"component": "jobmanager"}, "pod_node_name": "n1"}})
        filebeat = pod_of_metadata({"kubernetes": {"pod": {"name": "hdfs-datanode-0"}, "namespace": "h",
                                                  "node": {"name": "n2"}}})
        otel = pod_of_metadata({"k8s.pod.name": "flink-taskmanager-2-1", "k8s.node.name": "n3"})
        assert vector is not None and (vector.role, vector.node) == ("jobmanager", "n1")
        assert filebeat is not None and (filebeat.pod, filebeat.role, filebeat.node) == ("hdfs-datanode-0", "datanode",
                                                                                         "n2")
        assert otel is not None and otel.role == "taskmanager"

    def test_kubectl_logs_file_names_the_pod_and_says_it_guessed(self) -> None:
        facts = facts_from_path("incident/flink-lab-taskmanager-1-1.log")
        assert (facts.host, facts.role, facts.host_from, facts.host_guessed) == (
            "flink-lab-taskmanager-1-1", "taskmanager", HostFrom.POD_FILE, True)
        assert facts_from_path("logs/hadoop-hdfs-datanode-dn1.log.2.gz").host_from is HostFrom.DAEMON_FILE

    def test_rolled_file_names_date_a_time_only_layout(self) -> None:
        assert facts_from_path("flink-root-taskexecutor-0-tm.log.2026-10-25").date == (2026, 10, 25)
        ingest = Ingest(IngestConfig())
        block = (b"23:59:59,900 INFO  org.apache.flink.runtime.checkpoint.CheckpointCoordinator [] - Triggering "
                 b"checkpoint 7 (type=CheckpointType{name='Checkpoint'}) @ 1 for job 0123456789abcdef0123456789abcdef.\n"
                 b"00:00:00,100 INFO  org.apache.flink.runtime.checkpoint.CheckpointCoordinator [] - Triggering "
                 b"checkpoint 8 (type=CheckpointType{name='Checkpoint'}) @ 1 for job 0123456789abcdef0123456789abcdef.\n")
        read = ingest.feed_block(block, file_ref="jm.log.2026-10-25", first_line=1,
                                 hint=SourceHint(file="flink-root-standalonesession-0-jm.log.2026-10-25"))
        out = read.outputs + ingest.flush_all()
        stamps = [e.ts_ms for e in out if getattr(e, "type", "") == "checkpoint_triggered"]
        assert stamps == [1792972799900, 1792972800100], out  # 2026-10-25T23:59:59.9Z, then past midnight


class TestClusters:
    def test_identities_from_heads(self) -> None:
        assert identity("Block pool BP-1581658005-127.0.0.1-1796117751576 (Datanode Uuid x) service to "
                        "nn1.example.com/10.0.0.1:8020") == {"bp:BP-1581658005-127.0.0.1-1796117751576",
                                                             "nn:10.0.0.1:8020", "nn:nn1.example.com:8020"}
        assert identity("state.checkpoints.dir, hdfs://prod/flink/ckpt") == {"ns:prod"}

    def test_split_only_when_every_group_has_flink_and_hdfs(self) -> None:
        a, b = frozenset({"nn:a:8020"}), frozenset({"nn:b:8020", "bp:BP-1-2-3"})
        told = split({"a/jm": (a, "flink"), "a/dn": (a, "hdfs"), "b/tm": (frozenset({"bp:BP-1-2-3"}), "flink"),
                      "b/nn": (b, "hdfs"), "gc": (frozenset(), "gc")})
        assert told.cluster_of == {"a/jm": "hdfs-a:8020", "a/dn": "hdfs-a:8020", "b/tm": "hdfs-b:8020",
                                   "b/nn": "hdfs-b:8020"} and told.unplaced == ("gc",)
        lone = split({"jm": (frozenset({"nn:localhost:8020"}), "flink"), "dn": (b, "hdfs"), "tm": (b, "flink")})
        assert lone.cluster_of == {} and lone.refused is not None
