"""NameNode block allocation, HDFS client write errors and DataNode write errors, from real wordings.

Line sources are named per case: the shared reference of Hadoop's wordings (3.x / 2.7 allocate), public bug
reports (DataXceiver, ``Exception for``), and the DataStreamer / DFSOutputStream log calls of Hadoop 3.3.6.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from sample_cases import run

from correlator.core.event_dicts import event_to_dict
from correlator.core.events import Event
from correlator.core.ingest.ingest import SourceHint
from correlator.core.ingest.records import ParseError

HDFS = SourceHint(family="hdfs", role="namenode", host="nn")
TM = SourceHint(family="flink", role="taskmanager", host="tm")
DN = SourceHint(family="hdfs", role="datanode", host="dn")
CHK = "/flink/checkpoints/a8a3f78785ba2d44eb1788f974452ac4/chk-3/96644fad-dbee-4e4a-9d33-f25a50326366"


def events(text: str, hint: SourceHint) -> list[dict[str, Any]]:
    out = run(text.strip("\n").split("\n"), hint=hint)
    assert not [o for o in out if isinstance(o, ParseError)]
    return [event_to_dict(o) for o in out if isinstance(o, Event) and o.type != "source_progress"]


def test_allocate_3x() -> None:
    # Hadoop 3.x BlockUnderConstructionFeature wording (StateChange, INFO); all DataNodes on one IP as in a lab
    [e] = events(f"2026-12-01 09:40:00,100 INFO org.apache.hadoop.hdfs.StateChange: BLOCK* allocate "
                 f"blk_1073741901_1077, replicas=127.0.0.1:9866, 127.0.0.1:9868, 127.0.0.1:9867 for {CHK}", HDFS)
    assert (e["type"], e["block"], e["path"], e["role"]) == ("block_allocated", "blk_1073741901_1077", CHK, "namenode")
    assert e["replicas"] == ["127.0.0.1:9866", "127.0.0.1:9868", "127.0.0.1:9867"]


def test_allocate_27_under_construction() -> None:
    # Hadoop 2.7: the under-construction block's own toString between the block and "for"
    [e] = events("2016-01-02 17:18:47,330 INFO org.apache.hadoop.hdfs.StateChange: BLOCK* allocate "
                 "blk_1073741825_1001{UCState=UNDER_CONSTRUCTION, truncateBlock=null, primaryNodeIndex=-1, "
                 "replicas=[ReplicaUC[[DISK]DS-3f1b:NORMAL:10.0.0.1:50010|RBW], "
                 f"ReplicaUC[[DISK]DS-aaaa:NORMAL:10.0.0.2:50010|RBW]]}} for {CHK}", HDFS)
    assert (e["block"], e["path"], e["replicas"]) == ("blk_1073741825_1001", CHK, ["10.0.0.1:50010", "10.0.0.2:50010"])


def test_allocate_block_2x() -> None:
    # Hadoop 2.0 - 2.6 FSNamesystem: "BLOCK* allocateBlock: <src>. <bpid> <block>{...}"
    [e] = events("2015-01-02 17:18:47,330 INFO org.apache.hadoop.hdfs.StateChange: BLOCK* allocateBlock: "
                 f"{CHK}. BP-1-10.0.0.1-1 blk_1073741825_1001{{blockUCState=UNDER_CONSTRUCTION, primaryNodeIndex=-1, "
                 "replicas=[ReplicaUnderConstruction[[DISK]DS-a:NORMAL:10.0.0.1:50010|RBW]]}", HDFS)
    assert (e["block"], e["path"], e["replicas"]) == ("blk_1073741825_1001", CHK, ["10.0.0.1:50010"])


def test_client_timeout_names_the_remote_first_datanode() -> None:
    # Hadoop 3.3.6 DataStreamer.createBlockOutputStream (WARN + stack), timeout to the first DataNode of the pipeline
    [e] = events("""
2026-12-01 09:40:10,004 WARN  org.apache.hadoop.hdfs.DataStreamer                          [] - Exception in createBlockOutputStream blk_1073741901_1077
java.net.SocketTimeoutException: 65000 millis timeout while waiting for channel to be ready for read. ch : java.nio.channels.SocketChannel[connected local=/127.0.0.1:50760 remote=/127.0.0.1:9866]
	at org.apache.hadoop.net.SocketIOWithTimeout.doIO(SocketIOWithTimeout.java:163) ~[hadoop-common-3.3.6.jar:?]
""", TM)
    assert (e["kind"], e["block"], e["datanode"]) == ("create_block_output_stream", "blk_1073741901_1077",
                                                      "127.0.0.1:9866")
    assert e["exception"].startswith("java.net.SocketTimeoutException")


def test_client_abort_and_sync_error_carry_the_path() -> None:
    # Hadoop 3.3.6 DataStreamer (no DataNode left) and DFSOutputStream.flushOrSync ("Error while syncing")
    found = events(f"""
2026-12-01 09:40:41,011 WARN  org.apache.hadoop.hdfs.DataStreamer                          [] - Could not get block locations. Source file "{CHK}" - Aborting...block==null
2026-12-01 09:40:41,013 WARN  org.apache.hadoop.hdfs.DFSClient                             [] - Error while syncing
java.io.IOException: Could not get block locations. Source file "{CHK}" - Aborting...block==null
	at org.apache.hadoop.hdfs.DataStreamer.setupPipelineForAppendOrRecovery(DataStreamer.java:1477) ~[?:?]
2026-12-01 09:40:41,014 WARN  org.apache.hadoop.hdfs.DataStreamer                          [] - DataStreamer Exception
java.io.IOException: Unable to create new block.
""", TM)
    assert [(e["kind"], e["path"]) for e in found] == [("aborting", CHK), ("sync_error", CHK),
                                                       ("streamer_exception", None)]
    assert found[2]["exception"] == "java.io.IOException: Unable to create new block."


def test_datanode_errors() -> None:
    # hdfs-H (DataX issue 1448, 2.x thread layout), hdfs-I (colinmarc/hdfs 210), 3.3.6 BPServiceActor WARN
    found = events("""
2022-07-16 17:13:43,182 ERROR [DataXceiver for client DFSClient_1 at /172.16.9.143:36326 [Receiving block BP-12047675-172.16.9.141-1608793845868:blk_1152735511_79014410]] org.apache.hadoop.hdfs.server.datanode.DataNode: hadoop-dn004:50010:DataXceiver error processing WRITE_BLOCK operation  src: /172.16.9.143:36326 dst: /172.16.9.142:50010
java.io.IOException: Premature EOF from inputStream
        at org.apache.hadoop.io.IOUtils.readFully(IOUtils.java:212)
2022-07-16 17:13:43,183 INFO org.apache.hadoop.hdfs.server.datanode.DataNode: opWriteBlock BP-12047675-172.16.9.141-1608793845868:blk_1152735511_79014410 received exception java.io.IOException: Premature EOF from inputStream
2022-07-16 17:13:43,184 INFO org.apache.hadoop.hdfs.server.datanode.DataNode: Exception for BP-12047675-172.16.9.141-1608793845868:blk_1152735511_79014410
java.io.IOException: Connection reset by peer
2022-07-16 17:13:44,000 WARN org.apache.hadoop.hdfs.server.datanode.DataNode: Took 23976 ms to process 1 commands from NN
""", DN)
    assert [e["kind"] for e in found] == ["dataxceiver_write_block", "op_write_block", "block_exception",
                                          "slow_nn_commands"]
    assert (found[0]["peer"], found[0]["local"]) == ("172.16.9.143:36326", "172.16.9.142:50010")
    assert found[1]["block"].endswith("blk_1152735511_79014410")
    assert found[2]["exception"] == "java.io.IOException: Connection reset by peer"
    assert found[3]["duration_ms"] == 23976


def test_datanode_tells_its_own_address() -> None:
    # Hadoop 3.3.6 DataNode.initDataXceiver at start; a wildcard bind tells nothing
    found = events("""
2026-12-01 09:00:00,000 INFO org.apache.hadoop.hdfs.server.datanode.DataNode: Opened streaming server at /127.0.0.1:9867
2026-12-01 09:00:00,001 INFO org.apache.hadoop.hdfs.server.datanode.DataNode: Opened streaming server at /0.0.0.0:9866
""", DN)
    assert [(e["type"], e["address"]) for e in found] == [("datanode_address", "127.0.0.1:9867")]


PREFIXES = ["BLOCK* allocate ", "BLOCK* allocateBlock: ", "Exception in createBlockOutputStream", "Abandoning ",
            "Excluding datanode ", "Could not get block locations.", "DataStreamer Exception", "Error while syncing",
            "DataXceiver error processing WRITE_BLOCK operation  src: ", "opWriteBlock ", "Exception for ", "Took ",
            "Opened streaming server at "]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(PREFIXES), st.text(max_size=200), st.text(max_size=120),
       st.sampled_from(["org.apache.hadoop.hdfs.StateChange", "org.apache.hadoop.hdfs.DataStreamer",
                        "org.apache.hadoop.hdfs.server.datanode.DataNode"]))
def test_arbitrary_tails_never_raise(prefix: str, tail: str, second: str, logger: str) -> None:
    """Any text after a trigger phrase yields events or nothing: no exception, no parse error."""
    line = f"2026-12-01 09:40:00,000 WARN {logger}: {prefix}{tail}".replace("\n", " ").replace("\r", " ")
    out = run([line, second.replace("\n", " ").replace("\r", " ")], hint=TM)
    assert all(not isinstance(o, ParseError) or o.reason != "internal_error" for o in out)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=80), max_size=8))
def test_user_cause_on_any_stack_never_raises(lines: list[str]) -> None:
    from correlator.core.ingest.parse.flink import user_cause

    found = user_cause(["header", *lines])
    assert found is None or (isinstance(found[0], str) and "(" in found[1])


def test_user_cause_needs_user_code_and_no_storage_exception() -> None:
    # Flink 1.20 JobManager decline chain (SerializedThrowable wrappers) of a throwing snapshotState
    from correlator.core.ingest.parse.flink import user_cause

    chain = ["head", "org.apache.flink.util.SerializedThrowable: org.apache.flink.runtime.checkpoint."
             "CheckpointException: Could not complete snapshot 7 for operator Source (1/1)#0.",
             "\tat org.apache.flink.streaming.api.operators.StreamOperatorStateHandler.snapshotState("
             "StreamOperatorStateHandler.java:269) ~[flink-dist-1.20.1.jar:1.20.1]",
             "Caused by: org.apache.flink.util.SerializedThrowable: java.lang.IllegalStateException: boom",
             "\tat lab.LabJob$Source.snapshotState(LabJob.java:88) ~[?:?]"]
    assert user_cause(chain) == ("java.lang.IllegalStateException: boom", "LabJob$Source.snapshotState(LabJob.java:88)")
    io = [*chain[:3], "Caused by: java.io.IOException: Could not flush and close the file system output stream",
          "\tat lab.LabJob$Source.snapshotState(LabJob.java:88) ~[?:?]"]
    assert user_cause(io) is None
    flink_only = [*chain[:4], "\tat org.apache.flink.runtime.tasks.StreamTask.run(StreamTask.java:1) ~[?:?]"]
    assert user_cause(flink_only) is None


def test_slow_ack_with_plain_downstream_list() -> None:
    # DataNode-side lists are DatanodeInfo (ip:port), as real 3.3.6 PacketResponder lines print them
    [e] = events("2026-12-01 09:40:00,000 WARN org.apache.hadoop.hdfs.server.datanode.DataNode: Slow PacketResponder "
                 "send ack to upstream took 2004ms (threshold=300ms), PacketResponder: BP-1-127.0.0.1-1:blk_1073741825_1001, "
                 "type=HAS_DOWNSTREAM_IN_PIPELINE, downstreams=1:[127.0.0.1:54983], replyAck=seqno: 5 reply: SUCCESS "
                 "reply: SUCCESS downstreamAckTimeNanos: 1000 flag: 0 flag: 0, downstream DNs=[127.0.0.1:54983], "
                 "blockId=1073741825", DN)
    assert (e["kind"], e["duration_ms"], e["downstream"], e["block_id"]) == ("ack_upstream", 2004,
                                                                             ["127.0.0.1:54983"], "1073741825")


REAL_336_LOCK = """
2026-12-01 09:33:11,851 WARN org.apache.hadoop.hdfs.server.datanode.fsdataset.impl.FsDatasetImpl: Lock held time above threshold(100 ms): lock identifier: FsDatasetRWLock lockHeldTimeMs=29996 ms. Suppressed 0 lock warnings. Longest suppressed LockHeldTimeMs=0. The stack trace is: java.base/java.lang.Thread.getStackTrace(Thread.java:1610)
org.apache.hadoop.util.StringUtils.getStackTrace(StringUtils.java:1100)
org.apache.hadoop.util.InstrumentedLock.logWarning(InstrumentedLock.java:160)
org.apache.hadoop.util.InstrumentedLock.check(InstrumentedLock.java:221)
org.apache.hadoop.util.InstrumentedLock.unlock(InstrumentedLock.java:143)
org.apache.hadoop.util.AutoCloseableLock.release(AutoCloseableLock.java:84)
org.apache.hadoop.util.AutoCloseableLock.close(AutoCloseableLock.java:96)
lab.LabDataNode.holdDatasetLock(LabDataNode.java:141)
lab.LabDataNode.holdLockOnDemand(LabDataNode.java:113)
lab.LabDataNode.lambda$main$0(LabDataNode.java:56)
java.base/java.lang.Thread.run(Thread.java:840)

2026-12-01 09:33:11,856 WARN org.apache.hadoop.hdfs.server.datanode.fsdataset.impl.FsDatasetImpl: Waited above threshold(100 ms) to acquire lock: lock identifier: FsDatasetRWLock waitTimeMs=17324 ms. Suppressed 0 lock wait warnings. Longest suppressed WaitTimeMs=0. The stack trace is: java.base/java.lang.Thread.getStackTrace(Thread.java:1610)
org.apache.hadoop.util.StringUtils.getStackTrace(StringUtils.java:1100)
org.apache.hadoop.util.InstrumentedLock.logWaitWarning(InstrumentedLock.java:171)
org.apache.hadoop.util.InstrumentedLock.check(InstrumentedLock.java:223)
org.apache.hadoop.util.InstrumentedLock.lock(InstrumentedLock.java:105)
org.apache.hadoop.util.AutoCloseableLock.acquire(AutoCloseableLock.java:67)
org.apache.hadoop.hdfs.server.datanode.fsdataset.impl.FsDatasetImpl.getFinalizedBlocks(FsDatasetImpl.java:1971)
org.apache.hadoop.hdfs.server.datanode.DirectoryScanner.scan(DirectoryScanner.java:483)
org.apache.hadoop.hdfs.server.datanode.DirectoryScanner.reconcile(DirectoryScanner.java:430)
org.apache.hadoop.hdfs.server.datanode.DirectoryScanner.run(DirectoryScanner.java:371)
java.base/java.lang.Thread.run(Thread.java:840)
"""


def test_real_336_lock_held_by_another_thread_and_the_scanner_waiting() -> None:
    # Hadoop 3.3.6 DataNode (lab run, JDK 17): a thread of a wrapper main held the dataset lock; the scanner waited
    from correlator.core.correlate.evidence import interval_of
    from correlator.core.event_dicts import EVENT_TYPES

    found = events(REAL_336_LOCK, DN)
    assert [(e["type"], e.get("holder") or e.get("waiter")) for e in found] == [
        ("dn_lock_held", "LabDataNode.holdDatasetLock"), ("dn_lock_wait", "FsDatasetImpl.getFinalizedBlocks")]
    kinds = []
    for e in found:
        cls = EVENT_TYPES[e["type"]]
        fields = {k: tuple(v) if isinstance(v, list) else v for k, v in e.items() if k not in ("type", "at")}
        iv = interval_of(cls(**fields))
        assert iv is not None
        kinds.append(iv.kind)
    assert kinds == ["lock_held", "scanner_wait"]


def test_real_336_slow_mirror_and_disk_lines() -> None:
    # Hadoop 3.3.6 DataNode (lab run with fault-injected delays): DataNode-side lists are plain ip:port
    found = events("""
2026-12-01 09:39:25,353 WARN org.apache.hadoop.hdfs.server.datanode.DataNode: Slow BlockReceiver write packet to mirror took 2000ms (threshold=300ms), downstream DNs=[127.0.0.1:39151, 127.0.0.1:49895], blockId=1073741829
2026-12-01 09:36:59,810 WARN org.apache.hadoop.hdfs.server.datanode.DataNode: Slow flushOrSync took 2000ms (threshold=300ms), isSync:false, flushTotalNanos=2000281115ns, volume=file:/tmp/lab/data/lab-dn2/data/, blockId=1073741829
""", DN)
    assert [(e["kind"], e["duration_ms"], e["downstream"], e["block_id"]) for e in found] == [
        ("mirror_write", 2000, ["127.0.0.1:39151", "127.0.0.1:49895"], "1073741829"),
        ("flush_or_sync", 2000, [], "1073741829")]
    assert found[1]["volume"] == "file:/tmp/lab/data/lab-dn2/data/"
