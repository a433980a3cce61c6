"""The HDFS wording table: every wording it reads can fire, through the prefilter, on a line of that wording.

The prefilter's HDFS triggers are generated from the table, so a row cannot be filtered out before it is read; this
checks the other half: each row, given a line of its wording (from the Hadoop release lines named), takes the line
(the row is asked), no earlier row does and the parser's dispatch picks it, its handler reads it into the events the
row names, and the line becomes an event. A row no line can reach (shadowed by an earlier row, a logger it is never
logged by, a phrase its handler's regex does not accept) fails here. The refusal rows likewise.
"""

from __future__ import annotations

import pytest
from sample_cases import run

from correlator.core.events import Event
from correlator.core.ingest.parse.emit import Emit
from correlator.core.ingest.parse.hdfs import DISPATCH, RULES, Handler
from correlator.core.ingest.parse.header import parse_header
from correlator.core.ingest.parse.refusals import REFUSALS
from correlator.core.ingest.parse.wording import Wording
from correlator.core.ingest.prefilter import HDFS_TRIGGERS, NOTHING, REFUSAL_TRIGGERS, ReScanner

DN = "org.apache.hadoop.hdfs.server.datanode"
DS = f"{DN}.fsdataset.impl.FsDatasetImpl"
BLK = "blk_1073741825_1001"
BP = "BP-1473651231-10.20.30.40-1546300800000"
META = f"/data/1/dfs/dn/current/{BP}/current/finalized/subdir0/subdir0/{BLK}.meta"
STACK = ("The stack trace is: java.lang.Thread.getStackTrace(Thread.java:1559)\n"
         f"{DN}.DirectoryScanner.scan(DirectoryScanner.java:395)\n")

EXAMPLES: dict[str, tuple[str, str]] = {
    # phrase of the row -> (logger, message); wordings of Hadoop 2.7-3.4 (FsDatasetImpl.checkAndUpdate, BlockReceiver,
    # DirectoryScanner, InstrumentedLock, FSNamesystemLock, DataXceiver, JvmPauseMonitor, the start banner)
    "Lock held time above threshold": (DS, "Lock held time above threshold: lock identifier: FsDatasetRWLock "
                                           "lockHeldTimeMs=18234 ms. Suppressed 0 lock warnings. " + STACK),
    "Waited above threshold": (DS, "Waited above threshold to acquire lock: lock identifier: FsDatasetRWLock "
                                   "waitTimeMs=5120 ms. Suppressed 0 lock warnings. " + STACK),
    " Total blocks: ": (f"{DN}.DirectoryScanner", f"BlockPool {BP} Total blocks: 3000000, missing metadata files: 0, "
                                                  "missing block files: 0, missing blocks in memory: 0, "
                                                  "mismatched blocks: 0"),
    "Periodic Directory Tree Verification scan ": (f"{DN}.DirectoryScanner", "Periodic Directory Tree Verification "
                                                   "scan starting in 8389ms with interval of 20000ms and throttle "
                                                   "limit of -1ms/s"),
    "Deleted a metadata file without a block": (DS, f"Deleted a metadata file without a block {META}"),
    "from memory with missing block file on the disk": (DS, "Removed block 1073741825 from memory with missing "
                                                            "block file on the disk"),
    "Deleted a metadata file for the deleted block": (DS, f"Deleted a metadata file for the deleted block {META}"),
    "Added missing block to memory": (DS, f"Added missing block to memory FinalizedReplica, {BLK}, FINALIZED"),
    "Deleting missing provided block": (DS, f"Deleting missing provided block ProvidedReplica, {BLK}, FINALIZED"),
    "does not exist. Updating it to the file found during scan": (
        DS, f"Block file in replica file:/data/1/{BLK} does not exist. Updating it to the file found during scan "
            f"/data/2/{BLK}"),
    "Updating generation stamp for block": (DS, "Updating generation stamp for block 1073741825 from 1001 to 1002"),
    "does not match file found by scan": (DS, f"Metadata file in memory /data/1/{BLK}.meta does not match file "
                                              f"found by scan {META}"),
    "Updating size of block": (DS, "Updating size of block 1073741825 from 1024 to 2048"),
    " is not a regular file.": (DS, f"Block 1073741825 /data/1/{BLK} is not a regular file."),
    "as corrupt due to length mismatch": (DS, f"Reporting the block {BLK} as corrupt due to length mismatch"),
    "Failed to repot bad block": (DS, f"Failed to repot bad block {BLK}"),
    ". Will retry on next scan": (DS, f"Failed to delete {META}. Will retry on next scan"),
    "Slow BlockReceiver write data to disk cost:": (f"{DN}.BlockReceiver", "Slow BlockReceiver write data to disk "
                                                    "cost:2303ms (threshold=300ms), volume=/data/1/dfs/dn"),
    "Slow BlockReceiver write packet to mirror took ": (f"{DN}.BlockReceiver", "Slow BlockReceiver write packet to "
                                                        "mirror took 1204ms (threshold=300ms)"),
    "Slow flushOrSync took ": (f"{DN}.BlockReceiver", "Slow flushOrSync took 1532ms (threshold=300ms), isSync:false, "
                                                      "flushTotalNanos=1532000000ns, volume=/data/1/dfs/dn"),
    "Slow manageWriterOsCache took ": (f"{DN}.BlockReceiver", "Slow manageWriterOsCache took 412ms "
                                                              "(threshold=300ms), volume=/data/1/dfs/dn"),
    "Slow PacketResponder send ack to upstream took ": (
        f"{DN}.BlockReceiver", f"Slow PacketResponder send ack to upstream took 2110ms (threshold=300ms), "
                               f"PacketResponder: {BP}:{BLK}, type=HAS_DOWNSTREAM_IN_PIPELINE, "
                               "downstream DNs=[10.20.30.43:9866]"),
    "Receiving ": (f"{DN}.DataNode", f"Receiving {BP}:{BLK} src: /10.20.30.41:51234 dest: /10.20.30.42:9866"),
    "op: HDFS_WRITE": (f"{DN}.DataNode.clienttrace", f"src: /10.20.30.41:51234, dest: /10.20.30.42:9866, bytes: 4096, "
                                                     f"op: HDFS_WRITE, cliID: DFSClient_1, offset: 0, srvID: x, "
                                                     f"blockid: {BP}:{BLK}, duration(ns): 5000000"),
    " lock held for ": ("org.apache.hadoop.hdfs.server.namenode.FSNamesystem", "FSNamesystem write lock held for "
                                                                               "12034 ms via"),
    "-lock reports: ": ("org.apache.hadoop.hdfs.server.namenode.FSNamesystem",
                        "\tNumber of suppressed write-lock reports: 0\n"
                        "\tLongest write-lock held at 2020-01-02 09:05:30,001 for 12034ms via java.lang.Thread"),
    "Opened streaming server at ": (f"{DN}.DataNode", "Opened streaming server at /10.20.30.42:9866"),
    "BLOCK* allocate": ("org.apache.hadoop.hdfs.StateChange", f"BLOCK* allocate {BLK}, replicas=10.20.30.42:9866, "
                                                              "10.20.30.43:9866 for /flink/chk-60/_metadata"),
    "DataXceiver error processing WRITE_BLOCK": (f"{DN}.DataNode", "lab-dn2:9866:DataXceiver error processing "
                                                 "WRITE_BLOCK operation  src: /10.20.30.41:51234 dst: "
                                                 "/10.20.30.42:9866; java.io.IOException: Premature EOF"),
    "opWriteBlock ": (f"{DN}.DataNode", f"opWriteBlock {BP}:{BLK} received exception java.io.IOException: "
                                        "Premature EOF from inputStream"),
    "Exception for ": (f"{DN}.DataNode", f"Exception for {BP}:{BLK}\njava.io.IOException: Premature EOF"),
    " commands from NN": (f"{DN}.DataNode", "Took 12003ms to process 1 commands from NN"),
    "Detected pause in JVM": ("org.apache.hadoop.util.JvmPauseMonitor", "Detected pause in JVM or host machine (eg GC): "
                                                                        "pause of approximately 31000ms\nNo GCs detected"),
    "STARTUP_MSG: ": (f"{DN}.DataNode", "STARTUP_MSG: \n/****\nSTARTUP_MSG: Starting DataNode\n"
                                        "STARTUP_MSG:   host = lab-dn2/127.0.0.1\nSTARTUP_MSG:   version = 3.2.1"),
}


def test_every_row_has_an_example_and_every_trigger_is_a_row() -> None:
    assert [r.phrase for r in RULES if r.phrase not in EXAMPLES] == []
    assert set(HDFS_TRIGGERS) == {r.phrase for r in RULES if not r.write}
    assert len({r.phrase for r in RULES}) == len(RULES)


@pytest.mark.parametrize("rule", RULES, ids=[r.phrase.strip() for r in RULES])
def test_every_row_fires_on_its_wording(rule: Wording[Handler]) -> None:
    logger, message = EXAMPLES[rule.phrase]
    line = f"2020-01-02 09:05:30,001 WARN {logger}: {message}"
    lines = line.split("\n")
    header = parse_header(lines[0])
    assert header is not None
    assert rule.takes(header.message, logger=header.segment), "the row does not take its own wording"
    assert [r.phrase for r in RULES[:RULES.index(rule)] if r.takes(header.message, logger=header.segment)] == [], \
        "an earlier row takes this wording"
    assert DISPATCH.first(header.message, logger=header.segment) is rule
    assert ReScanner().classify(lines[0]) != NOTHING, "the prefilter drops it"
    emitted: list[Event] = []
    rule.handler(header, lines, Emit(1, "c", "h", "datanode", "case:1", emitted))
    assert emitted and {type(e) for e in emitted} <= set(rule.emits), "the row emits other events than it names"
    events = [e for e in run([line]) if isinstance(e, Event)]
    assert events, f"no event from {line[:100]!r}"


REFUSAL_EXAMPLES: dict[str, tuple[str, str, dict[str, object]]] = {
    # phrase -> (a daemon's record, the kind, fields); wordings of the Hadoop 2.7-3.4 sources
    "exceeds the limit of concurrent x": (
        f"{DN}.DataNode: 127.0.0.1:9866:DataXceiverServer: \njava.io.IOException: Xceiver count 4097 exceeds the "
        "limit of concurrent xcievers: 4096", "xceiver_limit", {"limit": 4096, "value": 4097}),
    " minReplication nodes": (
        "org.apache.hadoop.ipc.Server: IPC Server handler 5 on 8020, call Call#21 Retry#0 "
        "org.apache.hadoop.hdfs.protocol.ClientProtocol.addBlock from 127.0.0.1:40412\njava.io.IOException: File "
        "/flink/chk-60/_metadata could only be written to 0 of the 1 minReplication nodes. There are 3 datanode(s) "
        "running and 3 node(s) are excluded in this operation.", "no_datanodes",
        {"limit": 1, "value": 0, "path": "/flink/chk-60/_metadata"}),
    " nodes instead of minReplication": (
        "org.apache.hadoop.ipc.Server: IPC Server handler 5 on 8020, call addBlock\njava.io.IOException: File "
        "/flink/chk-60/_metadata could only be replicated to 0 nodes instead of minReplication (=1).  There are 3 "
        "datanode(s) running and 3 node(s) are excluded in this operation.", "no_datanodes", {"limit": 1, "value": 0}),
    "Failed to replace a bad datanode on the existing pipeline": (
        "org.apache.hadoop.hdfs.DataStreamer: DataStreamer Exception\njava.io.IOException: Failed to replace a bad "
        "datanode on the existing pipeline due to no more good datanodes being available to try. (Nodes: "
        "current=[127.0.0.1:9866], original=[127.0.0.1:9866]).", "pipeline_exhausted", {}),
    "Name node is in safe mode": (
        "org.apache.hadoop.ipc.Server: IPC Server handler 2 on 8020, call Call#9 Retry#0 "
        "org.apache.hadoop.hdfs.protocol.ClientProtocol.create from 127.0.0.1:40412: "
        "org.apache.hadoop.hdfs.server.namenode.SafeModeException: Cannot create file/flink/chk-60/_metadata. Name "
        "node is in safe mode.", "safe_mode", {"path": "/flink/chk-60/_metadata"}),
    "The directory item limit of ": (
        "org.apache.hadoop.ipc.Server: IPC Server handler 2 on 8020, call mkdirs\norg.apache.hadoop.hdfs.protocol."
        "FSLimitException$MaxDirectoryItemsExceededException: The directory item limit of /flink is exceeded: "
        "limit=64 items=64", "directory_items", {"limit": 64, "value": 64, "path": "/flink"}),
    "The DiskSpace quota of ": (
        "org.apache.hadoop.ipc.Server: IPC Server handler 4 on 8020, call Call#31 Retry#0 "
        "org.apache.hadoop.hdfs.protocol.ClientProtocol.addBlock from 127.0.0.1:40412\norg.apache.hadoop.hdfs.protocol."
        "DSQuotaExceededException: The DiskSpace quota of /flink/checkpoints is exceeded: quota = 1048576 B = 1 MB but "
        "diskspace consumed = 402653184 B = 384 MB", "space_quota",
        {"limit": 1048576, "value": 402653184, "path": "/flink/checkpoints"}),
    "Quota by storage type : ": (
        "org.apache.hadoop.ipc.Server: IPC Server handler 4 on 8020, call addBlock\norg.apache.hadoop.hdfs.protocol."
        "QuotaByStorageTypeExceededException: Quota by storage type : DISK on path : /flink/checkpoints is exceeded. "
        "quota = 1 MB but space consumed = 384 MB", "space_quota", {"path": "/flink/checkpoints"}),
    "The NameSpace quota (directories and files)": (
        "org.apache.hadoop.ipc.Server: IPC Server handler 4 on 8020, call mkdirs\norg.apache.hadoop.hdfs.protocol."
        "NSQuotaExceededException: The NameSpace quota (directories and files) of directory /flink/checkpoints is "
        "exceeded: quota=5 file count=6", "namespace_quota", {"limit": 5, "value": 6, "path": "/flink/checkpoints"}),
    "No space left on device": (
        f"{DN}.DataNode: 127.0.0.1:9866:DataXceiver error processing WRITE_BLOCK operation  src: /127.0.0.1:40412 "
        "dst: /127.0.0.1:9866\njava.io.IOException: No space left on device", "disk_full", {}),
    "DiskOutOfSpaceException": (
        f"{DN}.DataNode: 127.0.0.1:9866:DataXceiver error processing WRITE_BLOCK operation  src: /127.0.0.1:40412 "
        "dst: /127.0.0.1:9866\norg.apache.hadoop.util.DiskChecker$DiskOutOfSpaceException: Out of space: The volume "
        "with the most available space (=0 B) is less than the block size (=134217728 B).", "disk_full",
        {"value": 0, "limit": 134217728}),
    # Hadoop 3.3.6's NameNode in the lab's disk-full run: one DataNode passed over for want of a block's room
    "Not enough replicas was chosen. Reason": (
        "org.apache.hadoop.hdfs.server.blockmanagement.BlockPlacementPolicy: Not enough replicas was chosen. Reason: "
        "{NOT_ENOUGH_STORAGE_SPACE=1, NO_REQUIRED_STORAGE_TYPE=1}", "disk_full", {"value": 1}),
    "(HDFS_DELEGATION_TOKEN token ": (
        "org.apache.hadoop.ipc.Server: IPC Server handler 2 on 8020, call create\norg.apache.hadoop.security.token."
        "SecretManager$InvalidToken: token (HDFS_DELEGATION_TOKEN token 7212 for flink) is expired",
        "token_expired", {"value": 7212}),
}


def test_every_refusal_row_has_an_example_and_every_refusal_trigger_is_a_row() -> None:
    assert {r.phrase for r in REFUSALS} == set(REFUSAL_EXAMPLES) == set(REFUSAL_TRIGGERS)


@pytest.mark.parametrize("phrase", sorted(REFUSAL_EXAMPLES))
def test_every_refusal_row_fires_in_a_daemon_record(phrase: str) -> None:
    record, kind, fields = REFUSAL_EXAMPLES[phrase]
    line = f"2020-01-02 09:05:41,001 WARN {record}"
    [row] = [r for r in REFUSALS if r.phrase == phrase]
    assert row.takes(line) and row.handler.kind == kind
    assert [r.phrase for r in REFUSALS[:REFUSALS.index(row)] if r.handler.kind == kind and r.takes(line)] == [], \
        "an earlier row of its kind takes this wording"
    assert ReScanner().classify(line) != NOTHING
    [refusal] = [e for e in run([line]) if isinstance(e, Event) and e.type == "hdfs_refusal"]
    assert isinstance(refusal, row.emits)
    assert getattr(refusal, "kind") == kind
    assert {k: getattr(refusal, k) for k in fields} == fields
    assert phrase.strip() in getattr(refusal, "detail")


@pytest.mark.parametrize("said", [
    # Hadoop 3.3.6's NameNode logs this for every block whose third replica wants another rack: no refusal
    "Not enough replicas was chosen. Reason: {NO_REQUIRED_STORAGE_TYPE=1}",
    "SecretManager$InvalidToken: token (HDFS_DELEGATION_TOKEN token 7212 for flink) is renewed",
])
def test_a_refusal_phrase_without_its_reason_is_no_refusal(said: str) -> None:
    line = f"2020-01-02 09:05:41,001 INFO org.apache.hadoop.hdfs.server.blockmanagement.BlockPlacementPolicy: {said}"
    assert [r.phrase for r in REFUSALS if r.takes(line)] == []
    assert not [e for e in run([line]) if isinstance(e, Event) and e.type == "hdfs_refusal"]
