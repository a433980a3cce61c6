"""The storage rows of the cause registry: HDFS (DataNodes, the NameNode, the client's pipeline) and object stores.

The row type, the codes and the shared steps are in ``causes.py``; ``registry.py`` puts these rows first.
"""

from __future__ import annotations

from correlator.core.events import (
    BlockAllocated,
    BlockWrite,
    DatasetLockHeld,
    DatasetLockWait,
    DirectoryScanReconcile,
    DirectoryScanStats,
    DnWriteError,
    HdfsClientError,
    HdfsRefusal,
    JvmPause,
    NameNodeLockHeld,
    ObjectStoreRequest,
    SlowIo,
)

from correlator.core.explain.causes import (
    DURING,
    RETAINED_STEP,
    WRITTEN,
    Cause,
    Code,
    Step,
    refusal_cause,
)
from correlator.core.explain.kinds import EvidenceKind, Periodic

STORAGE_CAUSES: tuple[Cause, ...] = (
    Cause(
        Code.HDFS_DIRECTORY_SCAN,
        "a DataNode's DirectoryScanner held the dataset lock (its frame in the lock report), or — on versions that "
        "log no lock reports (2.7, 3.4) — reconciled differences (> 0) while the write was stuck; a totals line alone "
        "is never a cause",
        "The DirectoryScanner on {where} held the DataNode dataset lock{for_size}" + WRITTEN,
        (
            Step("Upgrade HDFS on {where}{running} to {fixed} or later, which have the fix of {issue}: "
                 "{fix_effect}", when="known_issue"),
            Step("Raise dfs.datanode.directoryscan.interval (default 21600 s) on {where} so the scanner runs less "
                 "often: each run holds the lock about as long as this one", "dfs.datanode.directoryscan.interval"),
            Step("Find out why the scanner's work under the lock is long on {where}: the replicas per DataNode "
                 "(the compare grows with them) or the differences it fixes (check disks and the block report)",
                 when="no_known_issue"),
        ),
        {EvidenceKind.SCANNER_LOCK: 1.0, EvidenceKind.SCAN_STATS: 0.75,
         EvidenceKind.SCAN_RECONCILE: 0.7},
        root=True,
        points=frozenset({EvidenceKind.SCAN_STATS, EvidenceKind.SCAN_RECONCILE}),
        titles_by_kind={
            EvidenceKind.SCAN_STATS: "The DirectoryScanner on {where} found {count} differences between disk and "
                                     "memory while {chk} was written",
            EvidenceKind.SCAN_RECONCILE: "The DirectoryScanner on {where} reconciled {count} differences while "
                                         "{chk} was written",
        },
        timeline_types=frozenset({DatasetLockHeld.type, DatasetLockWait.type, DirectoryScanReconcile.type,
                                  DirectoryScanStats.type}),
        periodic=Periodic.DIRECTORY_SCAN,
    ),
    Cause(
        Code.DATANODE_LOCK_HELD,
        "the DataNode's dataset lock was held across the write by something other than the scanner (the holder's "
        "frame is named); a scanner that only *waited* for the lock is named as a victim",
        "{holder} held the dataset lock of DataNode {where}{for_size}" + WRITTEN,
        (
            Step("Find out why {holder} holds the DataNode dataset lock so long on {where} (the lock report's stack "
                 "names it) and keep that work off the lock or move it off the write path"),
            Step("Keep dfs.datanode.lock-reporting-threshold-ms low enough (default 300) that every long hold is "
                 "reported", "dfs.datanode.lock-reporting-threshold-ms"),
        ),
        {EvidenceKind.LOCK_HELD: 0.95},
        root=True,
        timeline_types=frozenset({DatasetLockHeld.type, DatasetLockWait.type}),
    ),
    Cause(
        Code.HDFS_SLOW_DISK,
        "slow local disk writes/flushes on a DataNode of the write",
        "Slow disk writes on DataNode {where} stalled {chk}",
        (
            Step("Check the disks of {where} (SMART, iostat await); replace or exclude the slow volume"),
            Step("Enable dfs.datanode.fileio.profiling.sampling.percentage and dfs.datanode.outliers.report.interval "
                 "to let the NameNode report slow disks", "dfs.datanode.fileio.profiling.sampling.percentage"),
        ),
        {EvidenceKind.SLOW_DISK: 0.85},
        timeline_types=frozenset({SlowIo.type}),
    ),
    Cause(
        Code.HDFS_SLOW_PIPELINE,
        "slow mirror writes / acks between DataNodes, or a DataNode that received the block and let it go no further "
        "with no pause or slow I/O logged (on 3.4 a held lock cannot be seen, and the verdict says so)",
        "Slow mirror writes and acks between DataNodes ({where}) stalled {chk}",
        (
            Step("Check the network between the DataNodes of the pipeline ({where}) and the downstream DataNode's "
                 "disks"),
            Step("Enable dfs.datanode.peer.stats.enabled to let the NameNode report slow peers",
                 "dfs.datanode.peer.stats.enabled", "true"),
            Step("Review dfs.client.block.write.replace-datanode-on-failure.policy and dfs.client.socket-timeout",
                 "dfs.client.socket-timeout"),
        ),
        {EvidenceKind.DN_STALL: 0.6, EvidenceKind.SLOW_COMMANDS: 0.45, EvidenceKind.BAD_LINK: 0.6,
         EvidenceKind.SLOW_PIPELINE: 0.8},
        titles_by_kind={
            EvidenceKind.DN_STALL: "DataNode {where} stopped acknowledging the write of {chk}",
            EvidenceKind.SLOW_COMMANDS: "DataNode {where} stopped acknowledging the write of {chk}",
        },
        timeline_types=frozenset({SlowIo.type, BlockWrite.type, DnWriteError.type, HdfsClientError.type}),
    ),
    Cause(
        Code.DATANODE_JVM_PAUSE,
        "a DataNode JVM/host pause covering the write",
        "DataNode {where} paused{for_size}" + DURING,
        (
            Step("Tune the DataNode heap/GC of {where} (HDFS_DATANODE_OPTS, HADOOP_DATANODE_OPTS on 2.x); enable GC "
                 "logs", "HDFS_DATANODE_OPTS"),
            Step("If the pause shows no GC, check the host for swapping or CPU starvation"),
        ),
        {EvidenceKind.DN_PAUSE: 0.95},
        root=True,
        timeline_types=frozenset({JvmPause.type}),
        periodic=Periodic.JVM_PAUSE,
    ),
    Cause(
        Code.NAMENODE_SLOW,
        "NameNode lock held or NameNode pause covering the write",
        "The NameNode {where} was blocked{for_size}" + DURING,
        (
            Step("Find the NameNode lock holder (dfs.namenode.read-lock-reporting-threshold-ms, "
                 "dfs.namenode.write-lock-reporting-threshold-ms) and tune the NameNode heap/GC (HDFS_NAMENODE_OPTS)",
                 "dfs.namenode.write-lock-reporting-threshold-ms"),
        ),
        {EvidenceKind.NN_LOCK: 0.9, EvidenceKind.NN_PAUSE: 0.9},
        root=True,
        timeline_types=frozenset({NameNodeLockHeld.type, JvmPause.type, BlockAllocated.type}),
    ),
    Cause(
        Code.TASKMANAGER_JVM_PAUSE,
        "the TaskManager itself paused (GC/host)",
        "TaskManager {where} paused{for_size}" + DURING,
        (Step("Tune the TaskManager heap/GC of {where} (taskmanager.memory.*, env.java.opts.taskmanager)",
              "env.java.opts.taskmanager"),),
        {EvidenceKind.TM_PAUSE: 0.95},
        root=True,
        timeline_types=frozenset({JvmPause.type}),
        periodic=Periodic.JVM_PAUSE,
    ),
    refusal_cause(
        Code.DATANODE_XCEIVER_LIMIT,
        "a DataNode refused a connection of the write: its transfer threads (`dfs.datanode.max.transfer.threads`) "
        "were all in use (`Xceiver count N exceeds the limit of concurrent xcievers: M`)",
        "HDFS refused the write of {chk}: DataNode transfer threads at their limit{of_limit} (logged on {where})",
        (
            Step("Raise dfs.datanode.max.transfer.threads{now_limit} on the DataNodes and find what holds so many "
                 "streams open",
                 "dfs.datanode.max.transfer.threads", "{twice_limit}"),
        ),
        EvidenceKind.REFUSED_XCEIVER_LIMIT, seen_in=(DnWriteError.type, HdfsClientError.type), on_role="datanode",
    ),
    refusal_cause(
        Code.DATANODE_DISK_FULL,
        "a DataNode volume had no space left for the write (`No space left on device`, `DiskOutOfSpaceException`; "
        "the NameNode's `NOT_ENOUGH_STORAGE_SPACE`)",
        "HDFS refused the write of {chk}: a DataNode volume was full{left} (logged on {where})",
        (
            Step("Free or add space on the full volumes and check dfs.datanode.du.reserved (space kept free for "
                 "non-HDFS use) against the disks' size", "dfs.datanode.du.reserved"),
            Step("On Hadoop 3.4 and later a volume must also keep dfs.datanode.round-robin-volume-choosing-policy."
                 "additional-available-space (1 GiB by default) free beyond a block: lower it on small volumes",
                 "dfs.datanode.round-robin-volume-choosing-policy.additional-available-space"),
            RETAINED_STEP,
        ),
        EvidenceKind.REFUSED_DISK_FULL, seen_in=(DnWriteError.type, HdfsClientError.type), on_role="datanode",
    ),
    refusal_cause(
        Code.HDFS_NO_DATANODES,
        "the NameNode found no DataNode to place the block on (`could only be written to 0 of the 1 minReplication "
        "nodes`), or the client ran out of DataNodes to replace a failed one in its pipeline",
        "HDFS refused the write of {chk}: no DataNode was left to write it to (logged on {where})",
        (
            Step("Find out why the DataNodes were excluded, dead or being decommissioned (their logs at that time: "
                 "full disks, transfer-thread limits, stopped processes; the NameNode's: Starting decommission) and "
                 "bring them back"),
            Step("On small clusters (3 DataNodes or fewer) let the client keep writing with fewer replicas: "
                 "dfs.client.block.write.replace-datanode-on-failure.best-effort = true",
                 "dfs.client.block.write.replace-datanode-on-failure.best-effort", "true"),
        ),
        EvidenceKind.REFUSED_NO_DATANODES, seen_in=(HdfsClientError.type,),
        explained_by=frozenset({Code.DATANODE_DISK_FULL, Code.DATANODE_XCEIVER_LIMIT}),
    ),
    refusal_cause(
        Code.NAMENODE_SAFE_MODE,
        "the NameNode was in safe mode and refused to create the checkpoint's files (`Name node is in safe mode`)",
        "HDFS refused the write of {chk}: the NameNode was in safe mode (logged on {where})",
        (
            Step("Find out why the NameNode is in safe mode (its log says: entered manually, low space on its name "
                 "directories, or still starting) and leave it when the cause is gone: hdfs dfsadmin -safemode "
                 "leave"),
            Step("Keep the NameNode's name directories above dfs.namenode.resource.du.reserved, or it enters safe "
                 "mode on its own", "dfs.namenode.resource.du.reserved"),
        ),
        EvidenceKind.REFUSED_SAFE_MODE,
    ),
    refusal_cause(
        Code.NAMENODE_LIMIT,
        "a NameNode limit refused the checkpoint's files (`The directory item limit of … is exceeded`)",
        "HDFS refused the write of {chk}: the directory item limit{of_limit} was reached (logged on {where})",
        (
            Step("Raise dfs.namenode.fs-limits.max-directory-items{now_limit} or spread the checkpoints over more "
                 "directories", "dfs.namenode.fs-limits.max-directory-items", "{twice_limit}"),
            RETAINED_STEP,
        ),
        EvidenceKind.REFUSED_DIRECTORY_ITEMS,
    ),
    Cause(
        Code.HDFS_QUOTA_EXCEEDED,
        "a quota of the checkpoints' directory refused their files: its space quota (`The DiskSpace quota of … is "
        "exceeded`; a block being written counts in full, times its replication) or its namespace quota (`The "
        "NameSpace quota (directories and files) of directory … is exceeded`)",
        "HDFS refused the write of {chk}: the space quota of its directory was exceeded (logged on {where})",
        (
            Step("Raise or clear the quota of the checkpoints' directory (hdfs dfs -count -q shows it; hdfs dfsadmin "
                 "-setSpaceQuota or -clrSpaceQuota, -setQuota or -clrQuota): a space quota must leave room for a "
                 "whole block (dfs.blocksize) times the replication for each checkpoint file being written, however "
                 "small the file"),
            RETAINED_STEP,
        ),
        {EvidenceKind.REFUSED_SPACE_QUOTA: 1.0, EvidenceKind.REFUSED_NAMESPACE_QUOTA: 1.0},
        root=True,
        checkpoint_steps="restarts",
        points=frozenset({EvidenceKind.REFUSED_SPACE_QUOTA, EvidenceKind.REFUSED_NAMESPACE_QUOTA}),
        stated=True,
        titles_by_kind={
            EvidenceKind.REFUSED_NAMESPACE_QUOTA: "HDFS refused the write of {chk}: the namespace quota{of_limit} "
                                                  "of its directory was exceeded (logged on {where})",
        },
        timeline_types=frozenset({HdfsRefusal.type, HdfsClientError.type}),
    ),
    refusal_cause(
        Code.HDFS_TOKEN_EXPIRED,
        "the job's HDFS delegation token had expired (`token (HDFS_DELEGATION_TOKEN token N for …) is expired`)",
        "HDFS refused the write of {chk}: the job's delegation token had expired (logged on {where})",
        (
            Step("Give Flink a keytab so it can log in again and renew its tokens: security.kerberos.login.keytab "
                 "and security.kerberos.login.principal", "security.kerberos.login.keytab"),
            Step("Check dfs.namenode.delegation.token.max-lifetime (default 7 days) against how long the job runs",
                 "dfs.namenode.delegation.token.max-lifetime"),
        ),
        EvidenceKind.REFUSED_TOKEN_EXPIRED,
    ),
    Cause(
        Code.OBJECT_STORE_THROTTLED,
        "the object store throttled the checkpoint's requests (`503 SlowDown` in its access log, under the job's "
        "checkpoint prefix) while the checkpoint ran: the client's quiet retries and their back-off took its time",
        "The object store throttled {chk}: bucket {where} answered its uploads with 503 SlowDown",
        (
            Step("Spread the checkpoints' keys over more prefixes, which S3 scales apart (each takes about 3,500 "
                 "writes a second): put s3.entropy.key's marker in the checkpoint path right after the bucket (e.g. "
                 "s3://bucket/_entropy_/checkpoints) and set s3.entropy.length; a marker deep in the path keeps one "
                 "hot prefix", "s3.entropy.key", "_entropy_"),
            Step("Let throttled requests back off longer before the S3 client gives up: fs.s3a.retry.throttle.limit "
                 "and fs.s3a.retry.throttle.interval with flink-s3-fs-hadoop (s3.retry.throttle.limit in Flink's "
                 "configuration), s3.retry.max-num-retries with flink-s3-fs-native, which gives up after a few; "
                 "this keeps uploads from failing, it does not make them faster", "fs.s3a.retry.throttle.limit"),
            Step("Check fs.s3a.attempts.maximum, the AWS SDK's own retries under S3A's (its default changed between "
                 "Hadoop releases): both retry a throttled request before the checkpoint sees it",
                 "fs.s3a.attempts.maximum"),
            Step("Find what else writes under the prefix at that rate (other jobs sharing the bucket and prefix, "
                 "many small state files): the store's access log names each request's requester and key"),
        ),
        timeline_types=frozenset({ObjectStoreRequest.type}),
    ),
    Cause(
        Code.OBJECT_STORE_SLOW,
        "the object store took long over the checkpoint's requests (their total time in its access log) while the "
        "checkpoint ran, without throttling or refusing them; the client logs nothing of a slow request",
        "The object store was slow on {chk}: bucket {where} took seconds over its requests",
        (
            Step("Find why the store answered slowly at that time: its own latency metrics for the bucket (S3's "
                 "request metrics, FirstByteLatency and TotalRequestLatency), a proxy or gateway in the path, or the "
                 "network between the TaskManagers and the store"),
            Step("Bound a hung request so that S3A retries it instead of waiting: fs.s3a.connection.request.timeout "
                 "(Hadoop 3.4; s3.connection.request.timeout in Flink's configuration) and "
                 "fs.s3a.connection.timeout", "fs.s3a.connection.request.timeout"),
            Step("Upload large state files in parallel parts: fs.s3a.multipart.size and "
                 "fs.s3a.fast.upload.active.blocks", "fs.s3a.multipart.size"),
        ),
        timeline_types=frozenset({ObjectStoreRequest.type}),
    ),
    Cause(
        Code.OBJECT_STORE_CREDENTIALS,
        "the object store refused the checkpoint's requests for their credentials (`400 ExpiredToken`, `403 "
        "AccessDenied`, `InvalidAccessKeyId` in its access log, under the job's checkpoint prefix)",
        "The object store refused {chk}: it rejected the credentials of its requests",
        (
            Step("Give the S3 client credentials that renew themselves instead of a fixed session token "
                 "(fs.s3a.session.token): a provider in fs.s3a.aws.credentials.provider that refreshes, such as the "
                 "instance profile's or, on Kubernetes, the web identity token's", "fs.s3a.aws.credentials.provider"),
            Step("Allow the job's principal s3:PutObject, s3:GetObject, s3:DeleteObject and s3:ListBucket on the "
                 "checkpoint bucket and prefix where the store says AccessDenied (its policy, the bucket policy, a "
                 "KMS key the bucket encrypts with)"),
        ),
        timeline_types=frozenset({ObjectStoreRequest.type}),
        checkpoint_steps="restarts",
        severity="critical",
    ),
    Cause(
        Code.OBJECT_STORE_CONNECTION_LIMIT,
        "the object store answered each of the checkpoint's uploads in good time but received them a few at a time, "
        "back to back, while more subtasks on a TaskManager had state to upload: they waited for the S3 client's "
        "connections (its pool, `fs.s3a.connection.maximum`), which logs no such wait",
        "The checkpoint's uploads to bucket {where} waited for the S3 client's connections: {chk} ran out of time",
        (
            Step("Raise fs.s3a.connection.maximum (s3.connection.maximum in Flink's configuration; s3.connection.max "
                 "with flink-s3-fs-native) above the uploads a TaskManager runs at once: its slots times the files "
                 "each subtask writes in parallel (Hadoop 3.3's default is 96, 3.4's 500)",
                 "fs.s3a.connection.maximum"),
            Step("Check what else holds the client's connections while a checkpoint uploads: reads of the same "
                 "bucket by the job, and other jobs' filesystems in the same TaskManager"),
        ),
        timeline_types=frozenset({ObjectStoreRequest.type}),
    ),
)
