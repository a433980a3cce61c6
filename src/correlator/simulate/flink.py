"""JobManager and TaskManager log lines (and the HDFS client inside them), in each Flink version's wording."""

from __future__ import annotations

from correlator.simulate.render import flink
from correlator.simulate.world import LogSet, Node, datanode_info

CC = "org.apache.flink.runtime.checkpoint.CheckpointCoordinator"
CFM = "org.apache.flink.runtime.checkpoint.CheckpointFailureManager"
EG = "org.apache.flink.runtime.executiongraph.ExecutionGraph"
JOBMASTER = "org.apache.flink.runtime.jobmaster.JobMaster"
ENTRY = "org.apache.flink.runtime.entrypoint.ClusterEntrypoint"
RUNNER = "org.apache.flink.runtime.taskexecutor.TaskManagerRunner"
TASK = "org.apache.flink.runtime.taskmanager.Task"
EXECUTOR = "org.apache.flink.runtime.taskexecutor.TaskExecutor"
ASYNC = "org.apache.flink.streaming.runtime.tasks.AsyncCheckpointRunnable"
STREAMER = "org.apache.hadoop.hdfs.DataStreamer"
CLIENT = "org.apache.hadoop.hdfs.DFSClient"
DASHES = "-" * 80


def _v(text: str) -> tuple[int, int, int]:
    parts = [int(p) for p in text.split(".")[:3]]
    return (parts[0], parts[1], parts[2] if len(parts) > 2 else 0)


class FlinkLog:
    """One Flink process; ``version`` picks the layout (log4j 1 up to 1.10) and every message's wording."""

    def __init__(self, node: Node, logs: LogSet, version: str, hadoop_client: str = "3.1.0") -> None:
        self.node = node
        self.logs = logs
        self.version = version
        self.v = _v(version)
        self.client = _v(hadoop_client)
        self.client_text = hadoop_client

    @property
    def log4j2(self) -> bool:
        return self.v >= (1, 11, 0)

    def line(self, ts_ms: int, level: str, logger: str, message: str, *more: str) -> None:
        text = flink(ts_ms + self.node.skew_ms, level, logger, message, log4j2=self.log4j2)
        self.logs.add(self.node.file, ts_ms, "\n".join((text, *more)))

    def frame(self, text: str, jar: str = "flink-dist") -> str:
        if not self.log4j2:
            return f"\tat {text}"
        if jar == "?":
            return f"\tat {text} ~[?:1.8.0_292]"
        suffix = f"{jar}_2.12-{self.version}.jar:{self.version}" if self.v < (1, 15, 0) else \
            f"{jar}-{self.version}.jar:{self.version}"
        return f"\tat {text} ~[{suffix}]"

    def banner(self, ts_ms: int, component: str) -> None:
        logger = ENTRY if component != "TaskManager" else RUNNER
        if self.log4j2:
            start = (f" Starting {component} (Version: {self.version}, Scala: 2.12, Rev:c41c8e5, "
                     "Date:2022-11-10T10:39:02+01:00)")
        else:
            start = f" Starting {component} (Version: {self.version}, Rev:89eafb4, Date:14.12.2018 @ 01:09:57 UTC)"
        self.line(ts_ms, "INFO", logger, DASHES)
        self.line(ts_ms + 1, "INFO", logger, start)
        self.line(ts_ms + 2, "INFO", logger, " OS current user: flink")
        self.line(ts_ms + 3, "INFO", logger, " JVM: OpenJDK 64-Bit Server VM - Oracle Corporation - 1.8/25.181-b13")
        self.line(ts_ms + 4, "INFO", logger, " Maximum heap size: 4096 MiBytes")
        self.line(ts_ms + 5, "INFO", logger, f" Hadoop version: {self.client_text}")
        self.line(ts_ms + 6, "INFO", logger, DASHES)


class JobManagerLog(FlinkLog):
    def trigger(self, ts_ms: int, chk: int, job: str) -> None:
        if self.v >= (1, 15, 0):
            kind = "(type=CheckpointType{name='Checkpoint', sharingFilesStrategy=FORWARD_BACKWARD}) "
        elif self.v >= (1, 11, 0):
            kind = "(type=CHECKPOINT) "
        else:
            kind = ""
        self.line(ts_ms + 4, "INFO", CC, f"Triggering checkpoint {chk} {kind}@ {ts_ms} for job {job}.")

    def completed(self, ts_ms: int, chk: int, job: str, size: int, duration_ms: int) -> None:
        if self.v >= (1, 14, 0):
            msg = (f"Completed checkpoint {chk} for job {job} ({size} bytes, checkpointDuration={duration_ms} ms, "
                   f"finalizationTime=3 ms).")
        else:
            msg = f"Completed checkpoint {chk} for job {job} ({size} bytes in {duration_ms} ms)."
        self.line(ts_ms, "INFO", CC, msg)

    def expired(self, ts_ms: int, chk: int, job: str) -> None:
        self.line(ts_ms, "INFO", CC, f"Checkpoint {chk} of job {job} expired before completing.")
        if self.v >= (1, 14, 5):
            self.line(ts_ms + 1, "WARN", CFM, f"Failed to trigger or complete checkpoint {chk} for job {job}. "
                      "(0 consecutive failed attempts so far)",
                      "org.apache.flink.runtime.checkpoint.CheckpointException: Checkpoint expired before completing.",
                      self.frame("org.apache.flink.runtime.checkpoint.CheckpointCoordinator$CheckpointCanceller.run"
                                 "(CheckpointCoordinator.java:2145)"))

    def late_ack(self, ts_ms: int, chk: int, job: str, attempt: str, location: str) -> None:
        where = f"from {attempt}" if self.v < (1, 9, 0) else f"from task {attempt}"
        tail = "" if self.v < (1, 9, 0) else f" at {location}"
        self.line(ts_ms, "WARN", CC, f"Received late message for now expired checkpoint attempt {chk} {where} of job "
                  f"{job}{tail}.")

    def job_status(self, ts_ms: int, name: str, job: str, old: str, new: str, *stack: str) -> None:
        self.line(ts_ms, "INFO", EG, f"Job {name} ({job}) switched from state {old} to {new}.", *stack)

    def task_status(self, ts_ms: int, task: str, attempt: str, old: str, new: str, location: str,
                    *stack: str) -> None:
        on = f" on {location}" if self.v >= (1, 10, 2) else ""
        self.line(ts_ms, "INFO", EG, f"{task} ({attempt}) switched from {old} to {new}{on}.", *stack)

    def async_failure(self, ts_ms: int, chk: int, job: str, name: str, task: str, attempt: str, path: str,
                      last_good: int, last_good_ms: int, location: str) -> None:
        """Flink 1.7/1.8: the failed async write fails the task, and the legacy scheduler restarts the job."""
        stack = async_stack(chk, task, path, self.v)
        self.task_status(ts_ms, task, attempt, "RUNNING", "FAILED", location, *stack)
        self.job_status(ts_ms + 8, name, job, "RUNNING", "FAILING", *stack[:2])
        self.line(ts_ms + 12, "INFO", EG, f"Try to restart or fail the job {name} ({job}) if no longer possible.")
        self.job_status(ts_ms + 13, name, job, "FAILING", "RESTARTING")
        self.line(ts_ms + 14, "INFO", EG, f"Restarting the job {name} ({job}).")
        self.job_status(ts_ms + 10_020, name, job, "RESTARTING", "CREATED")
        self.line(ts_ms + 10_031, "INFO", CC, f"Restoring job {job} from latest valid checkpoint: Checkpoint "
                  f"{last_good} @ {last_good_ms} for {job}.")
        self.job_status(ts_ms + 10_040, name, job, "CREATED", "RUNNING")

    def global_failover(self, ts_ms: int, job: str, name: str, reason: str) -> None:
        cause = "org.apache.flink.util.FlinkRuntimeException: Exceeded checkpoint tolerable failure threshold."
        if self.v >= (1, 17, 0):
            cause = cause[:-1] + (f". The latest checkpoint failed due to {reason}, view the Checkpoint History tab "
                                  "or the Job Manager log to find out why continuous checkpoints failed.")
        frame = self.frame("org.apache.flink.runtime.checkpoint.CheckpointFailureManager.checkFailureAgainstCounter"
                           "(CheckpointFailureManager.java:206)")
        self.line(ts_ms, "INFO", JOBMASTER, "Trying to recover from a global failure.", cause, frame)
        self.job_status(ts_ms + 5, name, job, "RUNNING", "RESTARTING", cause, frame)
        if self.v >= (1, 16, 0):
            self.line(ts_ms + 6, "INFO", JOBMASTER, "2 tasks will be restarted to recover from a global failure.")
        self.job_status(ts_ms + 1_020, name, job, "RESTARTING", "RUNNING")

    def taskmanager_lost(self, ts_ms: int, chk: int, job: str, task: str, attempt: str, location: str,
                         tm_id: str) -> None:
        """The JobManager gives up on a silent TaskManager (1.14+ wording: the JobMaster and the ResourceManager each
        log it); the task fails with the timeout as its cause and the checkpoint it had not acknowledged is aborted."""
        said = f"Heartbeat of TaskManager with id {tm_id} timed out."
        timeout = f"java.util.concurrent.TimeoutException: {said}"
        frame = self.frame("org.apache.flink.runtime.jobmaster.JobMaster$TaskManagerHeartbeatListener."
                           "notifyHeartbeatTimeout(JobMaster.java:1560)")
        self.line(ts_ms, "INFO", JOBMASTER, said)
        self.line(ts_ms + 2, "INFO", "org.apache.flink.runtime.resourcemanager.StandaloneResourceManager",
                  f"The heartbeat of TaskManager with id {tm_id} timed out.")
        self.task_status(ts_ms + 5, task, attempt, "RUNNING", "FAILED", location, timeout, frame)
        self.failure_manager(ts_ms + 9, chk, job, "org.apache.flink.runtime.checkpoint.CheckpointException: "
                             "Task has failed.", self.frame("org.apache.flink.runtime.checkpoint.CheckpointCoordinator."
                                                            "lambda$failUnacknowledgedPendingCheckpointsFor$27"
                                                            "(CheckpointCoordinator.java:2259)"),
                             f"Caused by: {timeout}", frame)

    def decline(self, ts_ms: int, chk: int, job: str, task: str, attempt: str, location: str, *stack: str) -> None:
        at = f" at {location}" if self.v >= (1, 9, 0) else ""
        self.line(ts_ms, "INFO", CC, f"Decline checkpoint {chk} by task {attempt} of job {job}{at}.", *stack)

    def failure_manager(self, ts_ms: int, chk: int, job: str, first_cause: str, *stack: str) -> None:
        self.line(ts_ms, "WARN", CFM, f"Failed to trigger or complete checkpoint {chk} for job {job}. "
                  "(0 consecutive failed attempts so far)", first_cause, *stack)


def async_stack(chk: int, task: str, path: str, v: tuple[int, int, int]) -> tuple[str, ...]:
    """The incident's cause chain (Flink 1.7/1.8 wording, log4j 1 frames)."""
    flush = "Could not flush and close" if v < (1, 11, 0) else "Could not flush to file and close"
    io = f"java.io.IOException: {flush} the file system output stream to {path} in order to obtain the stream state " \
         "handle"
    return (
        f"AsynchronousException{{java.lang.Exception: Could not materialize checkpoint {chk} for operator {task}.}}",
        "\tat org.apache.flink.streaming.runtime.tasks.StreamTask$AsyncCheckpointExceptionHandler."
        "tryHandleCheckpointException(StreamTask.java:1153)",
        "\tat org.apache.flink.streaming.runtime.tasks.StreamTask$AsyncCheckpointRunnable.handleExecutionException"
        "(StreamTask.java:947)",
        "\tat org.apache.flink.streaming.runtime.tasks.StreamTask$AsyncCheckpointRunnable.run(StreamTask.java:884)",
        "\tat java.util.concurrent.ThreadPoolExecutor.runWorker(ThreadPoolExecutor.java:1149)",
        "\tat java.util.concurrent.ThreadPoolExecutor$Worker.run(ThreadPoolExecutor.java:624)",
        "\tat java.lang.Thread.run(Thread.java:748)",
        f"Caused by: java.lang.Exception: Could not materialize checkpoint {chk} for operator {task}.",
        "\tat org.apache.flink.streaming.runtime.tasks.StreamTask$AsyncCheckpointRunnable.handleExecutionException"
        "(StreamTask.java:942)",
        "\t... 6 more",
        f"Caused by: java.util.concurrent.ExecutionException: {io}",
        "\tat java.util.concurrent.FutureTask.report(FutureTask.java:122)",
        "\tat java.util.concurrent.FutureTask.get(FutureTask.java:192)",
        "\tat org.apache.flink.util.FutureUtil.runIfNotDoneAndGet(FutureUtil.java:53)",
        "\tat org.apache.flink.streaming.api.operators.OperatorSnapshotFinalizer.<init>"
        "(OperatorSnapshotFinalizer.java:53)",
        "\tat org.apache.flink.streaming.runtime.tasks.StreamTask$AsyncCheckpointRunnable.run(StreamTask.java:853)",
        "\t... 5 more",
        f"Caused by: {io}",
        "\tat org.apache.flink.runtime.state.filesystem.FsCheckpointStreamFactory$FsCheckpointStateOutputStream."
        "closeAndGetHandle(FsCheckpointStreamFactory.java:326)",
        "\tat org.apache.flink.runtime.state.DefaultOperatorStateBackend$DefaultOperatorStateBackendSnapshotStrategy$1."
        "callInternal(DefaultOperatorStateBackend.java:767)",
        "\tat org.apache.flink.runtime.state.AsyncSnapshotCallable.call(AsyncSnapshotCallable.java:76)",
        "\tat java.util.concurrent.FutureTask.run(FutureTask.java:266)",
        "\tat org.apache.flink.util.FutureUtil.runIfNotDoneAndGet(FutureUtil.java:50)",
        "\t... 7 more",
    )


class TaskManagerLog(FlinkLog):
    def fail_externally(self, ts_ms: int, chk: int, task: str, attempt: str, path: str) -> None:
        self.line(ts_ms, "INFO", TASK, f"Attempting to fail task externally {task} ({attempt}).")
        self.line(ts_ms + 1, "INFO", TASK, f"{task} ({attempt}) switched from RUNNING to FAILED.",
                  *async_stack(chk, task, path, self.v))
        self.line(ts_ms + 3, "INFO", TASK, f"Triggering cancellation of task code {task} ({attempt}).")
        self.line(ts_ms + 9, "INFO", TASK, f"Freeing task resources for {task} ({attempt}).")
        self.line(ts_ms + 10, "INFO", EXECUTOR, "Un-registering task and sending final execution state FAILED to "
                  f"JobManager for task {task} {attempt}.")

    def cancelled_upload(self, ts_ms: int, chk: int, task: str, attempt: str) -> None:
        """1.12+: the failover cancels the in-flight upload (INFO, with a CancellationException)."""
        self.line(ts_ms, "INFO", ASYNC, f"{task} - asynchronous part of checkpoint {chk} could not be completed.",
                  "java.util.concurrent.CancellationException: null",
                  self.frame("java.util.concurrent.FutureTask.report(FutureTask.java:121)", "?"),
                  self.frame("java.util.concurrent.FutureTask.get(FutureTask.java:191)", "?"))
        self.line(ts_ms + 4, "INFO", TASK, f"Attempting to cancel task {task} ({attempt}).")
        self.line(ts_ms + 5, "INFO", TASK, f"{task} ({attempt}) switched from RUNNING to CANCELING.")
        self.line(ts_ms + 40, "INFO", TASK, f"{task} ({attempt}) switched from CANCELING to CANCELED.")

    def declined_snapshot(self, ts_ms: int, chk: int, task: str, error: str) -> None:
        logger = "org.apache.flink.streaming.runtime.tasks.RegularOperatorChain"
        self.line(ts_ms, "INFO", logger, f"Could not complete snapshot {chk} for operator {task}. Failure reason: "
                  "Checkpoint was declined.",
                  f"org.apache.flink.runtime.checkpoint.CheckpointException: Could not complete snapshot {chk} for "
                  f"operator {task}. Failure reason: Checkpoint was declined.",
                  self.frame("org.apache.flink.streaming.api.operators.StreamOperatorStateHandler.snapshotState"
                             "(StreamOperatorStateHandler.java:269)"),
                  f"Caused by: {error}",
                  self.frame("com.example.etl.EnrichFunction.snapshotState(EnrichFunction.java:88)", "etl-job"))

    def slow_ack(self, ts_ms: int, duration_ms: int, path: str, block: str, pipeline: list[Node]) -> None:
        """H1 ``Slow waitForAckedSeqno``: logged when the write returns; wording follows the client jar."""
        base = f"Slow waitForAckedSeqno took {duration_ms}ms (threshold=30000ms)"
        if self.client >= (2, 9, 0):
            nodes = ", ".join(datanode_info(n) for n in pipeline)
            self.line(ts_ms, "WARN", STREAMER, f"{base}. File being written: {path}, block: {block}, Write pipeline "
                      f"datanodes: [{nodes}].")
        else:
            self.line(ts_ms, "WARN", STREAMER if self.client >= (2, 8, 0) else CLIENT, base)

    def slow_read_ack(self, ts_ms: int, duration_ms: int, block: str, pipeline: list[Node]) -> None:
        replies = " ".join("reply: SUCCESS" for _ in pipeline)
        flags = " ".join("flag: 0" for _ in pipeline)
        nodes = ", ".join(datanode_info(n) for n in pipeline)
        ack = (f"ack: seqno: 57 {replies} downstreamAckTimeNanos: {duration_ms * 1_000_000 - 117} {flags}, "
               f"targets: [{nodes}]")
        if self.client >= (2, 8, 0):
            self.line(ts_ms, "INFO", STREAMER, f"Slow ReadProcessor read fields for block {block} took "
                      f"{duration_ms}ms (threshold=30000ms); {ack}")
        else:
            self.line(ts_ms, "WARN", CLIENT, f"Slow ReadProcessor read fields took {duration_ms}ms "
                      f"(threshold=30000ms); {ack}")

    def could_not_complete(self, ts_ms: int, src: str) -> None:
        self.line(ts_ms, "INFO", CLIENT, f"Could not complete {src} retrying...")
