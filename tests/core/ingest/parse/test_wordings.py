"""Every wording and version of the references and every real excerpt, parsed into the right event and fields.

One row per example: (source, case, expected events as (type, subset of fields)). Rows with no expected events are
noise or messages no rule of the parsers' tables is about and must yield neither events nor parse errors.
"""

from __future__ import annotations

from typing import Any

import pytest
from sample_cases import real_sample, reference_cases, run

from correlator.core.event_dicts import event_to_dict
from correlator.core.events import Event, iso_ms
from correlator.core.ingest.ingest import SourceHint
from correlator.core.ingest.parse.header import parse_header
from correlator.core.ingest.records import ParseError

JOB = "1a3bc71ac57f33961637adf340e9c28f"
ATTEMPT = "c2e77749126a67db62d38bdb166b5696"
BLOCK = "BP-1473651231-10.20.30.40-1546300800000:blk_1107441237_33718412"
PIPELINE = ["10.20.30.42:9866", "10.20.30.43:9866", "10.20.30.44:9866"]
CHK60 = f"hdfs:/saas/app/flink/checkpoints/{JOB}/chk-60/253fc668-3b1f-4a5e-9d0e-6c2f1b7a8e41"
OPERATOR = "Source: analytics_standarddata_weapp_share-druid -> Map (1/1)"
Expect = list[tuple[str, dict[str, Any]]]

FLINK: dict[str, Expect] = {
    "flink-1.2-1": [("checkpoint_expired", {"job_id": JOB, "checkpoint_id": 8, "at": "2021-05-10T11:02:03.456Z"})],
    "flink-1.2-3": [("checkpoint_expired", {"job_id": JOB, "checkpoint_id": 8, "at": "2021-05-10T11:02:03.456Z"})],
    "flink-1.2-4": [("checkpoint_expired", {"job_id": JOB, "checkpoint_id": 8, "role": "jobmanager"})],
    "flink-1.7-1": [("daemon_start", {"component": "TaskManager", "version": "1.7.1", "role": "taskmanager"})],
    "flink-1.7-2": [],
    "flink-1.7-3": [("daemon_start", {"component": "StandaloneSessionClusterEntrypoint", "version": "1.15.3",
                                      "role": "jobmanager"})],
    "flink-2.1-1": [("checkpoint_triggered", {"job_id": JOB, "checkpoint_id": 60, "trigger_ts_ms": 1577956723295,
                                              "at": "2020-01-02T17:18:43.301Z", "role": "jobmanager"})],
    "flink-2.1-2": [("checkpoint_triggered", {"checkpoint_id": 60, "trigger_ts_ms": 1614651053497,
                                              "checkpoint_type": "CHECKPOINT"})],
    "flink-2.1-3": [("checkpoint_triggered", {"checkpoint_id": 60, "trigger_ts_ms": 1683172800104,
                                              "checkpoint_type": "CheckpointType{name='Checkpoint', "
                                                                 "sharingFilesStrategy=FORWARD_BACKWARD}"})],
    "flink-2.2-1": [("checkpoint_completed", {"job_id": JOB, "checkpoint_id": 59, "size_bytes": 8872, "duration_ms": 3120})],
    "flink-2.2-2": [("checkpoint_completed", {"job_id": JOB, "checkpoint_id": 59, "size_bytes": 8872, "duration_ms": 383})],
    "flink-2.3-1": [("checkpoint_expired", {"job_id": JOB, "checkpoint_id": 60})],
    "flink-2.3-2": [("checkpoint_expired", {"job_id": JOB, "checkpoint_id": 60})],
    "flink-2.4-1": [("checkpoint_declined", {"job_id": JOB, "checkpoint_id": 60, "attempt_id": ATTEMPT})],
    "flink-2.4-2": [("checkpoint_failed", {"job_id": JOB, "checkpoint_id": 60, "kind": "async_materialize",
                                           "operator": OPERATOR})],
    "flink-2.4-3": [
        ("checkpoint_declined", {"job_id": JOB, "checkpoint_id": 60, "attempt_id": ATTEMPT}),
        ("checkpoint_failed", {"job_id": JOB, "checkpoint_id": 60, "kind": "async_materialize",
                               "operator": OPERATOR + "#0", "path": CHK60}),
    ],
    "flink-2.5-1": [("checkpoint_late_ack", {"job_id": JOB, "checkpoint_id": 60, "attempt_id": ATTEMPT})],
    "flink-2.5-2": [("checkpoint_late_ack", {"job_id": JOB, "checkpoint_id": 60, "attempt_id": ATTEMPT})],
    "flink-2.6-1": [],
    "flink-2.6-2": [],
    "flink-2.6-3": [("checkpoint_failed", {"job_id": JOB, "checkpoint_id": 60, "kind": "expired"})],
    "flink-2.7-1": [],
    "flink-2.7-2": [("job_status", {"job_id": JOB, "from_state": "RUNNING", "to_state": "RESTARTING",
                                    "job_name": "analytics_standarddata_weapp_share"})],
    "flink-2.8-1": [("checkpoint_failed", {"job_id": JOB, "checkpoint_id": 60, "kind": "finalize",
                                           "path": f"hdfs:/saas/app/flink/checkpoints/{JOB}/chk-60/_metadata"})],
    "flink-2.9-1": [],
    "flink-3.1-1": [("checkpoint_failed", {"job_id": JOB, "checkpoint_id": 60, "kind": "async_materialize",
                                           "operator": OPERATOR + "#0", "path": CHK60, "role": "taskmanager"})],
    "flink-3.3-1": [("checkpoint_failed", {"checkpoint_id": 60, "kind": "declined", "operator": OPERATOR + "#0"})],
    "flink-3.4-1": [],
    "flink-3.4-2": [
        ("task_status", {"task": OPERATOR, "attempt_id": ATTEMPT, "from_state": "RUNNING", "to_state": "FAILED",
                         "role": "taskmanager"}),
        ("checkpoint_failed", {"checkpoint_id": 60, "kind": "async_materialize", "attempt_id": ATTEMPT}),
    ],
    "flink-3.4-3": [
        ("task_status", {"task": OPERATOR + "#0", "attempt_id": ATTEMPT, "to_state": "FAILED"}),
        ("checkpoint_failed", {"checkpoint_id": 60, "kind": "declined", "operator": OPERATOR + "#0",
                               "attempt_id": ATTEMPT}),
    ],
    "flink-3.4-4": [],
    "flink-5.1-1": [("job_status", {"job_id": JOB, "from_state": "RUNNING", "to_state": "FAILING"})],
    "flink-5.1-2": [("job_status", {"job_id": JOB, "from_state": "RUNNING", "to_state": "RESTARTING"})],
    "flink-5.2-1": [
        ("task_status", {"task": OPERATOR, "attempt_id": ATTEMPT, "to_state": "FAILED", "role": "jobmanager"}),
        ("checkpoint_failed", {"checkpoint_id": 60, "kind": "async_materialize", "operator": OPERATOR}),
    ],
    "flink-5.2-2": [("task_status", {"task": OPERATOR, "to_state": "FAILED",
                                     "attempt_id": "5f1c0b9e8d7a6c4b3a29180716f5e4d3_bc764cd8ddf7a0cff126f51c16239658_0_0"})],
    "flink-5.3-1": [], "flink-5.3-2": [], "flink-5.3-3": [], "flink-5.3-4": [], "flink-5.3-5": [], "flink-5.3-6": [],
    "flink-6-1": [("hdfs_client_slow", {"op": "waitForAckedSeqno", "duration_ms": 37812, "threshold_ms": 30000,
                                        "block": BLOCK, "datanodes": PIPELINE, "role": "taskmanager",
                                        "path": CHK60.removeprefix("hdfs:")})],
    "flink-6-2": [("hdfs_client_slow", {"op": "waitForAckedSeqno", "duration_ms": 37812, "datanodes": []})],
    "flink-6-3": [("hdfs_client_slow", {"op": "waitForAckedSeqno", "duration_ms": 37812, "threshold_ms": 30000})],
    "flink-6-4": [("hdfs_client_slow", {"op": "readAck", "duration_ms": 35102, "block": BLOCK, "datanodes": PIPELINE})],
    "flink-6-5": [("hdfs_client_error", {"kind": "create_block_output_stream", "block": "blk_1107441238_33718413",
                                         "datanode": "10.20.30.43:9866"})],
    "flink-6-6": [("hdfs_client_error", {"kind": "abandon_block",
                                         "block": "BP-1473651231-10.20.30.40-1546300800000:blk_1107441238_33718413"})],
    "flink-6-7": [("hdfs_client_error", {"kind": "exclude_datanode", "datanode": "10.20.30.43:9866"})],
    "flink-6-8": [],
    "flink-6-9": [("hdfs_client_slow", {"op": "noAck", "duration_ms": 480012, "block": BLOCK, "datanodes": PIPELINE})],
}
HDFS: dict[str, Expect] = {
    "hdfs-3-1": [("daemon_start", {"component": "DataNode", "version": "3.1.0", "role": "datanode"})],
    "hdfs-4.2-1": [("directory_scan_config", {"interval_ms": 21600000, "first_scan_ms": 1577935120000})],
    "hdfs-4.2-2": [("directory_scan_config", {"interval_ms": 21600000, "first_scan_ms": 1577935120000})],
    # JDK 8's SHORT date-time format, read to the minute in the line's zone
    "hdfs-4.2-3": [("directory_scan_config", {"interval_ms": 21600000, "first_scan_ms": 1577963880000})],
    "hdfs-4.2-4": [("directory_scan_config", {"interval_ms": 21600000, "throttle_ms_per_s": -1,
                                              "first_scan_ms": 1715334065120 + 7963125})],
    "hdfs-4.4-1": [("directory_scan_stats", {"block_pool": "BP-1473651231-10.20.30.40-1546300800000",
                                             "total_blocks": 4213377, "missing_memory": 12, "duplicate": None})],
    "hdfs-4.4-2": [("directory_scan_stats", {"total_blocks": 4213377, "missing_memory": 12, "duplicate": 0})],
    "hdfs-4.6-1": [("directory_scan_reconcile", {"action": "remove_from_memory", "block": "1107441237"})],
    "hdfs-4.6-2": [("directory_scan_reconcile", {"action": "add_to_memory", "block": "blk_1107441301_33718476"})],
    "hdfs-5.1-1": [("dn_lock_held", {"held_ms": 37690, "holder": "DirectoryScanner.scan", "suppressed": 0,
                                     "lock": "org.apache.hadoop.hdfs.server.datanode.fsdataset.impl.FsDatasetImpl",
                                     "at": "2020-01-02T17:19:20.912Z", "role": "datanode"})],
    "hdfs-5.1-2": [("dn_lock_wait", {"wait_ms": 4210, "waiter": "FsDatasetImpl.createRbw", "lock": "FsDatasetRWLock"})],
    "hdfs-5.2-1": [("nn_lock_held", {"kind": "write", "held_ms": 5324, "role": "namenode"})],
    "hdfs-5.2-2": [("nn_lock_held", {"kind": "write", "held_ms": 5324, "start_ts_ms": 1715326463694})],
    "hdfs-6.1-1": [("slow_io", {"kind": "disk_write", "duration_ms": 1873, "threshold_ms": 300,
                                "volume": "file:/data/5/dfs/dn", "block_id": "1107441290"})],
    "hdfs-6.1-2": [("slow_io", {"kind": "mirror_write", "duration_ms": 1667, "threshold_ms": 300})],
    "hdfs-6.1-3": [("slow_io", {"kind": "flush_or_sync", "duration_ms": 2210, "block_id": "1107441237"})],
    "hdfs-6.1-4": [("slow_io", {"kind": "ack_upstream", "duration_ms": 912, "block_id": "1107441290",
                                "downstream": ["10.20.30.43:9866"]})],
    "hdfs-6.3-1": [("block_write", {"block": BLOCK, "src": "10.20.30.41:53412", "dest": "10.20.30.42:9866",
                                    "phase": "receiving"})],
    "hdfs-6.3-2": [("block_write", {"block": BLOCK, "dest": "10.20.30.42:9866", "duration_ms": 1, "phase": "finished"})],
    "hdfs-6.3-3": [],
    "hdfs-7.1-1": [("block_allocated", {"block": "blk_1093762277_20372563", "role": "namenode",
                                        "replicas": ["10.20.4.15:9866", "10.20.4.13:9866", "10.20.4.11:9866"],
                                        "path": "/saas/app/flink/checkpoints/a8a3f78785ba2d44eb1788f974452ac4/chk-110/"
                                                "96644fad-dbee-4e4a-9d33-f25a50326366"})],
    "hdfs-8-1": [("jvm_pause", {"pause_ms": 12345, "gc": True})],
    "hdfs-8-2": [("jvm_pause", {"pause_ms": 1630, "gc": False})],
}
GC: dict[str, Expect] = {
    "gc-2-1": [("jvm_pause", {"pause_ms": 50, "gc": True, "at": "2020-01-02T09:18:15.562Z"})],
    "gc-2-2": [("jvm_pause", {"pause_ms": 38120, "gc": True})],
    "gc-2-3": [("jvm_pause", {"pause_ms": 50, "gc": True})],
    "gc-2-4": [("jvm_pause", {"pause_ms": 38120, "gc": True, "at": "2020-01-02T09:18:53.632Z"})],
    "gc-2-5": [("jvm_pause", {"pause_ms": 38130, "gc": True, "at": "2020-01-02T09:18:53.643Z"})],
    "gc-3-1": [],
    "gc-3-2": [("jvm_pause", {"pause_ms": 38123, "gc": True, "at": "2020-01-02T09:18:53.635Z"})],
    "gc-3-3": [],
    "gc-3-4": [("jvm_pause", {"pause_ms": 12, "gc": True})],
    "gc-3-5": [("jvm_pause", {"pause_ms": 38130, "gc": True})],
    "gc-3-6": [("jvm_pause", {"pause_ms": 38124, "gc": True})],
    "gc-3-7": [],
}
FLINK.update({f"flink-1.1-{n}": [] for n in range(1, 17)})
FLINK["flink-1.2-2"] = [("checkpoint_expired", {"checkpoint_id": 8, "at": "2021-05-10T11:02:03.456Z"})]


def _check(outputs: list[Event | ParseError], expected: Expect) -> None:
    errors = [o for o in outputs if isinstance(o, ParseError)]
    assert errors == []
    events = [event_to_dict(o) for o in outputs if isinstance(o, Event) and o.type != "source_progress"]
    assert sorted(e["type"] for e in events) == sorted(t for t, _ in expected)
    for kind, fields in expected:
        matching = [e for e in events if e["type"] == kind and all(e.get(k) == v for k, v in fields.items())]
        assert matching, f"no {kind} with {fields} in {events}"


def _rows() -> list[Any]:
    rows = []
    for family, table in (("flink", FLINK), ("hdfs", HDFS), ("gc", GC)):
        cases = reference_cases(family)
        assert set(cases) == set(table), f"reference cases without a row: {set(cases) ^ set(table)}"
        for case_id, expected in table.items():
            rows.append(pytest.param(family, cases[case_id], expected, id=case_id))
    return rows


@pytest.mark.parametrize(("family", "lines", "expected"), _rows())
def test_reference_example(family: str, lines: list[str], expected: Expect) -> None:
    """Each reference example yields exactly the listed events (fields as the template names them)."""
    hint = SourceHint(family="gc") if family == "gc" else None
    shipper = "2021-05-10T11:02:04.000Z" if any(l.startswith("11:02:03,456 ") for l in lines) else None
    _check(run(lines, hint=hint, shipper_ts=shipper), expected)


REAL: list[tuple[str, dict[str, Any], Expect]] = [
    ("flink-A-pr8322.log", {}, [
        ("checkpoint_triggered", {"job_id": "dd4f07c1f866b7afff42759d7a35de3f", "checkpoint_id": 66,
                                  "trigger_ts_ms": 1558107788056}),
        ("checkpoint_declined", {"checkpoint_id": 66, "attempt_id": "e65ff0e6f0ff8e14a1b53410aa8bb019"}),
        ("checkpoint_failed", {"checkpoint_id": 66, "kind": "declined"}),
        ("job_status", {"job_name": "Flink Streaming Job", "from_state": "RUNNING", "to_state": "FAILING"}),
    ]),
    ("flink-C-pr13180.log", {}, [
        ("checkpoint_declined", {"job_id": "815316dcc17ceea916d2a4da019aca13", "checkpoint_id": 4,
                                 "attempt_id": "5271c210329e73bd743f3227edfb3b71_0_0"}),
        ("checkpoint_failed", {"checkpoint_id": 4, "kind": "async_materialize",
                               "operator": "ArtificalKeyedStateMapper_Kryo_and_Custom_Stateful (1/2)"}),
    ]),
    ("flink-E-hudi5457.log", {}, [
        ("checkpoint_failed", {"checkpoint_id": 66, "kind": "declined",
                               "operator": "stream_write -> Sink: clean_commits (1/1)#63", "role": "taskmanager"}),
    ]),
    ("flink-G-flinkcdc1171.log", {"tz": "Asia/Shanghai"}, [
        ("checkpoint_triggered", {"checkpoint_id": 429, "trigger_ts_ms": 1652446614519, "ts_ms": 1652446614525}),
        ("checkpoint_completed", {"checkpoint_id": 429, "size_bytes": 4069, "duration_ms": 39}),
    ]),
    ("flink-I-rocketmqexternals129.log", {}, []),
    ("flink-K-paimon5434.log", {}, []),
    ("flink-O-incident-blog.log", {}, [
        ("task_status", {"attempt_id": ATTEMPT, "from_state": "RUNNING", "to_state": "FAILED", "job_id": JOB,
                         "task": "Source: analytics_standarddata_weapp_share-druid -> XXXXXXXXXX (1/1)"}),
        ("checkpoint_failed", {"job_id": JOB, "checkpoint_id": 60, "kind": "async_materialize", "attempt_id": ATTEMPT,
                               "operator": "Source: analytics_standarddata_weapp_share-druid -> XXXXXXXXXX (1/1)",
                               "path": f"hdfs:/saas/app/flink/checkpoints/{JOB}/chk-60/"
                                       "253fc668-9241-41c7-994d-3e72aa7281ef",
                               "at": "2020-01-02T17:18:53.337Z", "role": "jobmanager"}),
    ]),
    ("flink-O2-incident-instrumented.log", {}, []),
    ("flink-S2-pr20404.log", {"shipper_ts": "2022-08-04T09:34:31.300Z"}, [
        ("checkpoint_completed", {"job_id": "90dd9b9d1170496b98b83499d94bab24", "checkpoint_id": 3,
                                  "duration_ms": 339, "at": "2022-08-04T09:34:31.289Z"}),
    ]),
    ("hdfs-B-kafkadockerplayground7868.log", {}, []),
    ("hdfs-C-tensorflowonyarn5.log", {"shipper_ts": "2017-06-01T10:00:00.000Z"}, [
        ("slow_io", {"kind": "mirror_write", "duration_ms": 1667, "threshold_ms": 300, "role": "datanode"}),
    ]),
    ("hdfs-D-hadoop-pr3928.log", {}, [
        ("nn_lock_held", {"kind": "read", "held_ms": 16013, "op": "scanDatanodeStorage", "role": "namenode"}),
        ("nn_lock_held", {"kind": "read", "held_ms": 5491, "at": "2021-12-22T07:49:01.279Z"}),
    ]),
    ("hdfs-E-hadoop-pr3861.log", {}, [  # two reconcile warnings back to back: one burst, the first one's facts
        ("directory_scan_reconcile", {"action": "not_regular_file", "block": "1073741828", "count": 2}),
    ]),
    ("hdfs-F-hadoop-pr817.log", {}, []),
    ("hdfs-G-redsnow-notes8.log", {}, [
        ("block_write", {"block": "BP-2098612987-10.46.73.192-1488507853695:blk_1075805288_2064980",
                         "src": "10.28.33.149:51124", "dest": "10.46.77.74:50010", "phase": "receiving"}),
        ("block_write", {"block": "BP-2098612987-10.46.73.192-1488507853695:blk_1075805288_2064980",
                         "duration_ms": 3, "phase": "finished"}),
        ("block_write", {"block": "BP-2098612987-10.46.73.192-1488507853695:blk_1075805297_2064989"}),
    ]),
    ("hdfs-H-datax1448.log", {}, [("dn_write_error", {"kind": "dataxceiver_write_block", "peer": "172.16.9.143:36326",
                                                      "local": "172.16.9.142:50010"})]),
    ("hdfs-I-colinmarc-hdfs210.log", {}, [("dn_write_error", {"kind": "block_exception"})]),
    ("hdfs-J-cloudera-jvmpause.log", {"shipper_ts": "2023-03-01T10:00:00.000Z", "role": "namenode"}, [
        ("jvm_pause", {"pause_ms": 143694, "gc": True, "role": "namenode", "at": "2023-03-01T10:00:00.000Z"}),
    ]),
    ("hdfs-K-ozone-pr939.log", {}, [("jvm_pause", {"pause_ms": 25546, "gc": True, "at": "2020-05-18T16:17:15.693Z"})]),
    ("hdfs-L-hadoop-pr3315.log", {}, []),
    ("hdfs-M-hdfs9668-jstack.log", {}, []),
    ("hdfs-N-hadoop-pr4568.log", {}, []),
    ("hdfs-P-loghub22.log", {}, []),
    ("hdfsclient-S1-uniffle2162.log", {}, []),
]


@pytest.mark.parametrize(("name", "options", "expected"), [pytest.param(*row, id=row[0]) for row in REAL])
def test_real_excerpt(name: str, options: dict[str, Any], expected: Expect) -> None:
    """Each real public excerpt yields its events; layouts of other products and noise yield nothing."""
    hint = SourceHint(role=options["role"]) if "role" in options else None
    outputs = run(real_sample(name), hint=hint, shipper_ts=options.get("shipper_ts"), tz=options.get("tz", "UTC"))
    _check(outputs, expected)


def test_mail_wrapped_scan_stats() -> None:
    """The mail-quoted, wrapped S1 stats line of Hadoop 2.6 (hdfs-A) parses once the quoting is undone."""
    text = " ".join(line.removeprefix("> ").strip() for line in real_sample("hdfs-A-mailinglist-directoryscanner.log"))
    outputs = run([text.strip()])
    _check(outputs, [("directory_scan_stats", {"block_pool": "BP-1850109981-", "total_blocks": 3896197,
                                               "missing_meta": 214, "missing_block": 214, "missing_memory": 103,
                                               "mismatched": 0})])


def test_trigger_line_in_the_jobmanager_zone() -> None:
    """With the JM's zone configured, the line time lands 6 ms after the trigger's own epoch ms."""
    [event] = run(reference_cases("flink")["flink-2.1-1"], tz="Asia/Shanghai")
    assert isinstance(event, Event)
    assert event.ts_ms - 1577956723295 == 6


@pytest.mark.parametrize("case_id", [f"flink-1.1-{n}" for n in range(1, 17)])
def test_default_layout_prefix(case_id: str) -> None:
    """Both log4j 1 (padded, ``  - ``) and log4j 2 (`` [] - ``) prefixes split into level, full logger and message."""
    [line] = [l for l in reference_cases("flink")[case_id] if l]
    header = parse_header(line)
    assert header is not None
    assert (header.stamp, header.level, header.message) == ("2020-01-02 17:18:53,337", "INFO", "<message>")
    assert header.logger.startswith("org.apache.") and header.logger == line.split()[3]


@pytest.mark.parametrize(("when", "tz", "first"), [
    ("1/2/20 11:18 AM", "UTC", "2020-01-02T11:18:00.000Z"),          # JDK 8
    ("12/2/26, 5:18 PM", "UTC", "2026-12-02T17:18:00.000Z"),         # JDK 9+ (CLDR)
    ("12/2/26, 5:18\u202fPM", "UTC", "2026-12-02T17:18:00.000Z"),    # JDK 20+: a narrow no-break space
    ("12/2/26, 12:05 AM", "UTC", "2026-12-02T00:05:00.000Z"),
    ("12/2/26, 5:18 PM", "Asia/Shanghai", "2026-12-02T09:18:00.000Z"),  # the DataNode's zone, as its stamps
    ("12/2/26 17:18", "UTC", None),                                  # another locale: not guessed
])
def test_scanner_start_in_the_jdk_short_format(when: str, tz: str, first: str | None) -> None:
    line = (f"2026-12-02 16:40:01,120 INFO org.apache.hadoop.hdfs.server.datanode.DirectoryScanner: Periodic Directory "
            f"Tree Verification scan starting at {when} with interval of 21600000ms")
    [event] = run([line], tz=tz)
    d = event_to_dict(event)  # type: ignore[arg-type]
    assert d["interval_ms"] == 21600000
    assert (None if d["first_scan_ms"] is None else iso_ms(d["first_scan_ms"])) == first
