"""The Flink and HDFS client rule tables: every wording they read can fire, through the prefilter, on a record of it.

As ``test_rules`` for the HDFS table: the prefilter's Flink triggers are the tables' phrases, and here each row,
given a record of its wording (Flink 1.7-2.x JobManager and TaskManager, the Hadoop 2.7-3.4 client inside them), takes
it (the row is asked), no earlier row does and the dispatch picks it, the prefilter keeps one of its lines, its handler
reads it into the events the row names, and it becomes an event. A row shadowed by an earlier one, or whose handler's
regex refuses its own phrase, fails.
"""

from __future__ import annotations

import pytest
from sample_cases import run

from correlator.core.events import Event
from correlator.core.ingest.parse import hdfs_client
from correlator.core.ingest.parse.emit import Emit
from correlator.core.ingest.parse.flink import DISPATCH, RULES
from correlator.core.ingest.parse.header import parse_header
from correlator.core.ingest.parse.wording import Handler, Wording
from correlator.core.ingest.prefilter import FLINK_TRIGGERS, NOTHING, ReScanner

JOB = "1f7d4b8c2e3a49f0a6b5c4d3e2f1a0b9"
ATTEMPT = "0a1b2c3d4e5f60718293a4b5c6d7e8f9"
COORDINATOR = "org.apache.flink.runtime.checkpoint.CheckpointCoordinator"
TASK = "org.apache.flink.runtime.taskmanager.Task"
STREAMER = "org.apache.hadoop.hdfs.DataStreamer"
PATH = f"hdfs://nn:8020/flink/checkpoints/{JOB}/chk-61/3c9e1a"
FLUSH = f"java.io.IOException: Could not flush and close the file system output stream to {PATH} in order to obtain the stream state handle"
PIPELINE = "[DatanodeInfoWithStorage[10.20.30.42:9866,DS-0c9d8e7f,DISK]]"

EXAMPLES: dict[str, tuple[str, str]] = {
    # phrase of the row -> (logger, record: its message and the lines after it)
    "Triggering checkpoint ": (COORDINATOR, f"Triggering checkpoint 61 (type=CHECKPOINT) @ 1577955930001 for job {JOB}."),
    "Completed checkpoint ": (COORDINATOR, f"Completed checkpoint 60 for job {JOB} (1048576 bytes, "
                                           "checkpointDuration=2301 ms, finalizationTime=12 ms)."),
    "expired before completing": (COORDINATOR, f"Checkpoint 61 of job {JOB} expired before completing."),
    "Decline checkpoint ": (COORDINATOR, f"Decline checkpoint 61 by task {ATTEMPT} of job {JOB} at tm01:41234."),
    "Discarding checkpoint ": (COORDINATOR, f"Discarding checkpoint 61 of job {JOB}.\n"
                                            "org.apache.flink.runtime.checkpoint.CheckpointException: Checkpoint "
                                            "expired before completing."),
    "Received late message": (COORDINATOR, f"Received late message for now expired checkpoint attempt 61 from task "
                                           f"{ATTEMPT} of job {JOB} at tm01:41234."),
    "asynchronous part of checkpoint": ("org.apache.flink.streaming.runtime.tasks.AsyncCheckpointRunnable",
                                        "Map (1/4)#0 - asynchronous part of checkpoint 61 could not be completed.\n"
                                        f"java.util.concurrent.ExecutionException: {FLUSH}"),
    "Failed to trigger": ("org.apache.flink.runtime.checkpoint.CheckpointFailureManager",
                          f"Failed to trigger or complete checkpoint 61 for job {JOB}. (0 consecutive failed attempts "
                          "so far)\norg.apache.flink.runtime.checkpoint.CheckpointException: Checkpoint expired before "
                          "completing."),
    "Triggering Checkpoint ": (COORDINATOR, f"Triggering Checkpoint 61 for job {JOB} failed due to "
                                            "java.io.IOException: Filesystem closed"),
    "Could not complete snapshot ": ("org.apache.flink.streaming.runtime.tasks.StreamTask",
                                     "Could not complete snapshot 61 for operator Map (1/4)#0. Failure reason: "
                                     f"Checkpoint was declined.\n{FLUSH}"),
    "eartbeat of TaskManager with id ": ("org.apache.flink.runtime.jobmaster.JobMaster",
                                         "Heartbeat of TaskManager with id 10.20.30.41:39217-7a1b2c timed out."),
    " switched from state ": ("org.apache.flink.runtime.executiongraph.ExecutionGraph",
                              f"Job wordcount ({JOB}) switched from state RUNNING to RESTARTING."),
    " to FAILED": (TASK, f"Map (1/4)#0 ({ATTEMPT}) switched from RUNNING to FAILED with failure cause: "
                               "java.io.IOException: Stream closed."),
    "(Version: ": ("org.apache.flink.runtime.taskexecutor.TaskManagerRunner",
                   " Starting TaskManager (Version: 1.20.1, Scala: 2.12, Rev:9c2b3b5, Date:2025-02-03T13:18:41+01:00)"),
    **{f"Loading configuration property: {key}, ": ("org.apache.flink.configuration.GlobalConfiguration",
                                                    f"Loading configuration property: {key}, {value}")
       for key, value in (("execution.checkpointing.timeout", "10s"), ("execution.checkpointing.interval", "5 s"),
                          ("heartbeat.timeout", "15000"), ("state.checkpoints.dir", "hdfs://lab-nn:9000/flink/cp"),
                          ("execution.checkpointing.dir", "s3://lab-checkpoints/flink/checkpoints"))},
    "Reported span: ": ("org.apache.flink.traces.slf4j.Slf4jTraceReporter",
                        "Reported span: SimpleSpan{scope=org.apache.flink.runtime.checkpoint.CheckpointStatsTracker, "
                        "name=Checkpoint, startTsMillis=1796337035474, endTsMillis=1796337035496, attributes={jobId="
                        f"{JOB}, checkpointId=4, checkpointStatus=FAILED, fullSize=265, checkpointedSize=265}}}}"),
    "Deploying ": ("org.apache.flink.runtime.executiongraph.ExecutionGraph",
                   "Deploying keyed-state -> discard: Writer (1/1) (attempt #0) with attempt id "
                   "ae98bc9094d0fd7e1a497c93475e1c0f_90bea66de1c231edf33913ecd54406c1_0_0 and vertex id "
                   "90bea66de1c231edf33913ecd54406c1_0 to 127.0.0.1:48563-c7ca34 @ localhost (dataPort=41233) with "
                   "allocation id 6b3f5d0e8a1c4b2f9e7d6c5b4a392817"),
    "Starting TaskManager with ResourceID: ": ("org.apache.flink.runtime.taskexecutor.TaskManagerRunner",
                                               "Starting TaskManager with ResourceID: 127.0.0.1:48563-c7ca34"),
    "Could not materialize checkpoint ": (TASK, "Error during disposal of stream operator.\njava.lang.Exception: "
                                                "Could not materialize checkpoint 61 for operator Map (1/4)#0.\n"
                                                f"Caused by: {FLUSH}"),
    "Could not perform checkpoint ": (TASK, "Error in task code.\norg.apache.flink.runtime.checkpoint."
                                            "CheckpointException: Could not perform checkpoint 61 for operator "
                                            "Map (1/4)#0."),
    "Could not finalize the pending checkpoint ": (COORDINATOR, "Error in checkpoint coordinator.\norg.apache.flink."
                                                   "runtime.checkpoint.CheckpointException: Could not finalize the "
                                                   f"pending checkpoint 61.\nCaused by: {FLUSH}"),
    "Could not complete the pending checkpoint ": (COORDINATOR, "Error in checkpoint coordinator.\norg.apache.flink."
                                                   "runtime.checkpoint.CheckpointException: Could not complete the "
                                                   f"pending checkpoint 61.\nCaused by: {FLUSH}"),
}
CLIENT_EXAMPLES: dict[str, str] = {
    # phrase of the row -> record of org.apache.hadoop.hdfs.DataStreamer (DFSOutputStream's streamer, 2.7-3.4)
    "Exception in createBlockOutputStream": ("Exception in createBlockOutputStream blk_1073741825_1001\n"
                                             "java.io.IOException: Got error, status=ERROR, status message , ack with "
                                             "firstBadLink as 10.20.30.43:9866"),
    "Abandoning ": "Abandoning BP-1473651231-10.20.30.40-1546300800000:blk_1073741825_1001",
    "Excluding datanode ": "Excluding datanode DatanodeInfoWithStorage[10.20.30.43:9866,DS-0c9d8e7f,DISK]",
    "Could not get block locations.": ('Could not get block locations. Source file "/flink/chk-61/_metadata" - '
                                       "Aborting...block==null"),
    "DataStreamer Exception": "DataStreamer Exception\njava.io.IOException: Broken pipe",
    "Error while syncing": "Error while syncing\njava.io.IOException: All datanodes are bad. Aborting...",
    "Slow waitForAckedSeqno": ("Slow waitForAckedSeqno took 37812ms (threshold=30000ms). File being written: "
                               "/flink/chk-61/3c9e1a, block: BP-1:blk_1073741825_1001, Write pipeline datanodes: "
                               f"{PIPELINE}."),
    "No ack received, took ": ("No ack received, took 65001ms (threshold=30000ms). File being written: "
                               "/flink/chk-61/3c9e1a, block: BP-1:blk_1073741825_1001, Write pipeline datanodes: "
                               f"{PIPELINE}."),
    "Slow ReadProcessor read fields": ("Slow ReadProcessor read fields for block BP-1:blk_1073741825_1001 took "
                                       "31000ms (threshold=30000ms); ack: seqno: 5 reply: SUCCESS "
                                       f"downstreamAckTimeNanos: 0 flag: 0, targets: {PIPELINE}"),
}
TABLES = [(rule, EXAMPLES) for rule in RULES] + [(rule, {p: (STREAMER, m) for p, m in CLIENT_EXAMPLES.items()})
                                                  for rule in hdfs_client.RULES]


def test_every_row_has_an_example_and_every_trigger_is_a_row() -> None:
    assert [r.phrase for r in RULES if r.phrase not in EXAMPLES] == []
    assert [r.phrase for r in hdfs_client.RULES if r.phrase not in CLIENT_EXAMPLES] == []
    assert set(FLINK_TRIGGERS) == {r.phrase for r in RULES + hdfs_client.RULES}


@pytest.mark.parametrize(("rule", "examples"), TABLES, ids=[r.phrase.strip() for r, _ in TABLES])
def test_every_row_fires_on_its_wording(rule: Wording[Handler], examples: dict[str, tuple[str, str]]) -> None:
    logger, record = examples[rule.phrase]
    line = f"2020-01-02 09:05:30,001 INFO {logger} [] - {record}"
    first, *rest = line.split("\n")
    header = parse_header(first)
    assert header is not None
    message = header.message.strip()
    client = header.segment.startswith(hdfs_client.LOGGERS)
    table, dispatch = (hdfs_client.RULES, hdfs_client.DISPATCH) if client else (RULES, DISPATCH)
    assert rule.takes(message, line), "the row does not take its own wording"
    assert [r.phrase for r in table[:table.index(rule)] if r.takes(message, line)] == [], \
        "an earlier row takes this wording"
    assert dispatch.first(message, line) is rule
    assert any(ReScanner().classify(one) != NOTHING for one in line.split("\n")), "the prefilter drops it"
    emitted: list[Event] = []
    rule.handler(message, [first, *rest], line, Emit(1, "c", "h", "jobmanager", "case:1", emitted))
    assert emitted and {type(e) for e in emitted} <= set(rule.emits), "the row emits other events than it names"
    events = [e for e in run([first, *rest]) if isinstance(e, Event)]
    assert events, f"no event from {line[:100]!r}"


@pytest.mark.parametrize(("value", "ms"), [("10s", 10_000), ("10 s", 10_000), ("600000", 600_000), ("10 min", 600_000),
                                           ("1 h", 3_600_000), ("90 SECONDS", 90_000), ("500 ms", 500),
                                           ("ten seconds", None), ("10 fortnights", None), ("", None)])
def test_flink_durations_as_the_configuration_writes_them(value: str, ms: int | None) -> None:
    from correlator.core.ingest.parse.flink import duration_ms

    assert duration_ms(value) == ms


def test_only_the_duration_settings_a_verdict_reads_become_events() -> None:
    from correlator.core.events import FlinkSetting
    from correlator.core.ingest.parse.flink import SETTINGS

    assert SETTINGS == ("execution.checkpointing.timeout", "execution.checkpointing.interval", "heartbeat.timeout")
    for line, want in ((f"Loading configuration property: {SETTINGS[0]}, 2 min", 120_000),
                       ("Loading configuration property: heartbeat.timeout, 15000", 15_000),
                       ("Loading configuration property: rest.port, 8081", None),
                       ("Loading configuration property: execution.checkpointing.timeout, soon", None)):
        record = f"2020-01-02 09:05:30,001 INFO org.apache.flink.configuration.GlobalConfiguration [] - {line}"
        events = [e for e in run([record]) if isinstance(e, FlinkSetting)]
        assert [e.value_ms for e in events] == ([want] if want else []), line


def test_a_checkpoint_span_as_flink_1_20_logs_it() -> None:
    """A real line of Flink 1.20.1's Slf4jTraceReporter (the lab's backpressure run): a failed checkpoint's span, its
    end the last acknowledgement; other spans (job initialization) and other span names are not checkpoint spans."""
    from correlator.core.events import CheckpointSpan

    real = ("2026-12-03 22:30:45,480 INFO  org.apache.flink.traces.slf4j.Slf4jTraceReporter             [] - Reported "
            "span: SimpleSpan{scope=org.apache.flink.runtime.checkpoint.CheckpointStatsTracker, name=Checkpoint, "
            "startTsMillis=1796337035474, endTsMillis=1796337035496, attributes={jobId=5191cd2430f1da30149005cbaab9339d,"
            " checkpointId=4, checkpointStatus=FAILED, fullSize=265, checkpointedSize=265}}")
    [span] = [e for e in run([real]) if isinstance(e, CheckpointSpan)]
    assert (span.job_id, span.checkpoint_id, span.status) == ("5191cd2430f1da30149005cbaab9339d", 4, "FAILED")
    assert (span.end_ms - span.start_ms, span.full_size, span.phases) == (22, 265, ())
    later = real.replace("checkpointedSize=265}", "checkpointedSize=265, MaxAlignmentDurationMs=9100}")
    [span] = [e for e in run([later]) if isinstance(e, CheckpointSpan)]
    assert span.phases == (("MaxAlignmentDurationMs", 9100),)
    other = real.replace("name=Checkpoint,", "name=JobInitialization,")
    assert not [e for e in run([other]) if isinstance(e, CheckpointSpan)]


TM_ID = "tm01.example.com:39217-7a1b2c"
TM_CHAIN = (f"Map (1/1)#0 ({ATTEMPT}) switched from RUNNING to FAILED on {TM_ID} @ tm01.example.com "
            f"(dataPort=40211).\njava.util.concurrent.TimeoutException: Heartbeat of TaskManager with id {TM_ID} timed "
            "out.\n\tat org.apache.flink.runtime.jobmaster.JobMaster$TaskManagerHeartbeatListener."
            "notifyHeartbeatTimeout(JobMaster.java:1557) ~[flink-dist-1.20.1.jar:1.20.1]")


@pytest.mark.parametrize(("line", "tm_id", "host"), [
    # the JobMaster's own line (1.14+ names the id with its metadata, when it has any)
    (f"2020-01-02 09:05:30,001 INFO  org.apache.flink.runtime.jobmaster.JobMaster [] - Heartbeat of TaskManager with "
     f"id {TM_ID} timed out.", TM_ID, "tm01.example.com"),
    ("2020-01-02 09:05:30,001 INFO  org.apache.flink.runtime.jobmaster.JobMaster  - Heartbeat of TaskManager with id "
     "10.20.30.41:39217-7a1b2c timed out.", "10.20.30.41:39217-7a1b2c", "10.20.30.41"),
    # the ResourceManager's line (every version): a YARN container's id carries its node as metadata
    ("2020-01-02 09:05:30,001 INFO  org.apache.flink.runtime.resourcemanager.active.ActiveResourceManager [] - The "
     "heartbeat of TaskManager with id container_e05_1599000000000_0001_01_000002(worker-3.example.com:8041) timed "
     "out.",
     "container_e05_1599000000000_0001_01_000002(worker-3.example.com:8041)", "worker-3.example.com"),
    ("2020-01-02 09:05:30,001 INFO  org.apache.flink.yarn.YarnResourceManager  - The heartbeat of TaskManager with id "
     "container_1599000000000_0001_01_000002 timed out.", "container_1599000000000_0001_01_000002", None),
    # a pod name or a random id names no host that can be told from the text
    ("2020-01-02 09:05:30,001 INFO  org.apache.flink.runtime.resourcemanager.StandaloneResourceManager [] - The "
     "heartbeat of TaskManager with id flink-taskmanager-7d9f8-x2k4q timed out.", "flink-taskmanager-7d9f8-x2k4q",
     None),
    # the failed task's cause chain (every version; the only place where the JobMaster writes no line of its own)
    (f"2020-01-02 09:05:30,001 INFO  org.apache.flink.runtime.executiongraph.ExecutionGraph [] - {TM_CHAIN}", TM_ID,
     "tm01.example.com"),
])
def test_a_lost_taskmanager_in_each_wording(line: str, tm_id: str, host: str | None) -> None:
    from correlator.core.events import TaskManagerLost

    [lost] = [e for e in run(line.split("\n")) if isinstance(e, TaskManagerLost)]
    assert (lost.taskmanager_id, lost.taskmanager_host) == (tm_id, host)


def test_a_lost_taskmanager_in_a_job_failover_and_not_in_other_heartbeats() -> None:
    from correlator.core.events import JobStatus, TaskManagerLost

    record = (f"2020-01-02 09:05:30,001 INFO  org.apache.flink.runtime.executiongraph.ExecutionGraph [] - Job "
              f"wordcount ({JOB}) switched from state RUNNING to RESTARTING.\norg.apache.flink.runtime."
              "JobException: Recovery is suppressed by NoRestartBackoffTimeStrategy\nCaused by: "
              f"java.util.concurrent.TimeoutException: The heartbeat of TaskManager with id {TM_ID}  timed out.")
    events = run(record.split("\n"))
    assert [type(e) for e in events if isinstance(e, JobStatus | TaskManagerLost)] == [JobStatus, TaskManagerLost]
    jm = ("2020-01-02 09:05:30,001 INFO  org.apache.flink.runtime.taskexecutor.TaskExecutor [] - The heartbeat of "
          "JobManager with id 6a1c0e4b2d9f8a7e5c3b1d0f9e8a7c6b timed out.")
    assert not [e for e in run([jm]) if isinstance(e, TaskManagerLost)]


def test_a_lost_taskmanager_as_flink_1_20_1_logged_it() -> None:
    """The real JobManager log of the lab's taskmanager-lost run (the TaskManager stopped with ``kill -STOP`` past a
    15 s heartbeat timeout): the ResourceManager's line, its closing of the connection, the failed task's cause chain
    and the JobMaster's disconnect each name the lost TaskManager."""
    from pathlib import Path

    from correlator.core.events import TaskManagerLost

    log = (Path(__file__).resolve().parents[3] / "data" / "lab" / "3.3.6-1.20.1" / "taskmanager-lost"
           / "flink-root-standalonesession-0-lab-jm.log").read_text(encoding="utf-8").split("\n")
    lost = [e for e in run(log) if isinstance(e, TaskManagerLost)]
    assert [(e.at, e.taskmanager_id, e.taskmanager_host) for e in lost] == [
        (at, "127.0.0.1:41225-3d9136", "127.0.0.1") for at in (
            "2026-12-04T05:26:04.406Z", "2026-12-04T05:26:04.407Z", "2026-12-04T05:26:04.420Z",
            "2026-12-04T05:26:04.500Z")]
