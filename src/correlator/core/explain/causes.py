"""The cause registry: every root-cause code once, as data — what speaks for it, how it is titled, what to change.

Ranking reads the evidence weights and roles, the verdict its title templates, the timeline which evidence types to
draw as the cause's, the outlook whether the cause recurs on a schedule, the remediation its steps (each with the
setting it changes, so the what-if replay finds a setting by name, never by searching prose). The JSON Schema's enum
and the README's code table are checked against it by tests. This module holds the codes, the row type and the
Flink-side and no-cause rows; the storage rows (HDFS, object stores) are in ``storage_causes.py``, and ``registry.py``
joins both, in the order the README's table and the schema list them. Adding a code is its :class:`Code` member and
one :class:`Cause` row, and what finds it: its evidence kinds (ranked), or its detector beside the others in
``core/correlate/detectors.py`` (docs/architecture.md walks through both).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal

from correlator.core.events import (
    CheckpointCompleted,
    CheckpointDeclined,
    CheckpointFailed,
    CheckpointSpan,
    HdfsRefusal,
    JvmPause,
    TaskManagerLost,
    TaskStatus,
)
from correlator.core.explain.kinds import EvidenceKind, Periodic


class Code(StrEnum):
    """The root-cause codes of ``correlator.verdict/v1``; new values are added, none is ever renamed or removed."""

    HDFS_DIRECTORY_SCAN = "HDFS_DIRECTORY_SCAN"
    DATANODE_LOCK_HELD = "DATANODE_LOCK_HELD"
    HDFS_SLOW_DISK = "HDFS_SLOW_DISK"
    HDFS_SLOW_PIPELINE = "HDFS_SLOW_PIPELINE"
    DATANODE_JVM_PAUSE = "DATANODE_JVM_PAUSE"
    NAMENODE_SLOW = "NAMENODE_SLOW"
    TASKMANAGER_JVM_PAUSE = "TASKMANAGER_JVM_PAUSE"
    DATANODE_XCEIVER_LIMIT = "DATANODE_XCEIVER_LIMIT"
    DATANODE_DISK_FULL = "DATANODE_DISK_FULL"
    HDFS_NO_DATANODES = "HDFS_NO_DATANODES"
    NAMENODE_SAFE_MODE = "NAMENODE_SAFE_MODE"
    NAMENODE_LIMIT = "NAMENODE_LIMIT"
    HDFS_QUOTA_EXCEEDED = "HDFS_QUOTA_EXCEEDED"
    HDFS_TOKEN_EXPIRED = "HDFS_TOKEN_EXPIRED"
    OBJECT_STORE_THROTTLED = "OBJECT_STORE_THROTTLED"
    OBJECT_STORE_SLOW = "OBJECT_STORE_SLOW"
    OBJECT_STORE_CREDENTIALS = "OBJECT_STORE_CREDENTIALS"
    OBJECT_STORE_CONNECTION_LIMIT = "OBJECT_STORE_CONNECTION_LIMIT"
    FLINK_TASK_ERROR = "FLINK_TASK_ERROR"
    FLINK_STATE_GROWTH = "FLINK_STATE_GROWTH"
    FLINK_BACKPRESSURE = "FLINK_BACKPRESSURE"
    FLINK_TASKMANAGER_LOST = "FLINK_TASKMANAGER_LOST"
    UNEXPLAINED = "UNEXPLAINED"
    INSUFFICIENT_DATA = "INSUFFICIENT_DATA"


Severity = Literal["critical", "warning", "info"]
"""How urgently on-call should look: ``critical`` (HDFS refuses every write until someone acts), ``warning`` (a
stall or a Flink-side cause), ``info`` (no cause named)."""
When = Literal["always", "known_issue", "no_known_issue"]
HostsAre = Literal["cause on", "looked at", "missing logs of"]
"""How a verdict introduces its hosts: where the cause is, which logs were looked at, whose logs are missing."""


@dataclass(frozen=True, slots=True)
class Step:
    """One remediation step. ``text`` is a ``str.format`` template over :class:`StepFacts`' fields; ``setting`` is the
    configuration key the step changes (``None``: an action, not a setting), ``value`` what to set it to when the step
    names one."""

    text: str
    setting: str | None = None
    value: str | None = None
    when: When = "always"
    """``known_issue``: only when the verdict names a known defect; ``no_known_issue``: only when it names none."""
    flink_since: tuple[int, int] | None = None
    """The Flink release the step needs: left out when the job's Flink is known to be older."""


@dataclass(frozen=True, slots=True)
class Cause:
    code: Code
    meaning: str
    """One line for the README's code table (a test keeps the table equal to these)."""
    title: str
    """``str.format`` template over what the leading evidence gives: ``where``, ``chk``/``Chk``, ``for_size``,
    ``holder``, ``count``, ``of_limit``, ``left`` (bytes left against a block), ``exception``, ``frame``."""
    steps: tuple[Step, ...]
    """Most effective first; the checkpoint-settings steps are appended where ``checkpoint_steps`` says so."""
    evidence: Mapping[EvidenceKind, float] = field(default_factory=dict)
    """Evidence interval kinds that speak for this cause, each with its base weight in the ranking."""
    root: bool = False
    """A cause of other evidence on its host (a scanner's lock explains the slow writes under it): when a root cause
    ranks high, causes that are not roots are halved."""
    titles_by_kind: Mapping[str, str] = field(default_factory=dict)
    """A title template for when the leading evidence is of one kind (a point, a stall), instead of ``title``."""
    timeline_types: frozenset[str] = frozenset()
    """The event types a timeline draws as this cause's evidence (Flink's own lifecycle lines are context)."""
    periodic: Periodic | None = None
    """Whether the cause recurs on a schedule the outlook can predict."""
    checkpoint_steps: Literal["all", "restarts", "none"] = "all"
    """Which checkpoint settings follow its steps: both (more time, fewer restarts), only surviving failures (more
    time cannot help a write HDFS refused), or none."""
    points: frozenset[EvidenceKind] = frozenset()
    """Evidence kinds that are a moment, not a span (a totals line, a refusal)."""
    stated: bool = False
    """Its evidence states the cause outright (HDFS said why it refused): ranked at full strength, and it may trail
    the stuck write further (the failure's own cause chain is often logged well after the timeout)."""
    explained_by: frozenset[Code] = frozenset()
    """Causes that explain this one when both are seen (no DataNode left, after each refused the write for a reason
    of its own): it then ranks as their symptom."""
    hosts_are: HostsAre = "cause on"
    """How the verdict's hosts are introduced: a verdict that names no cause names no culprit."""
    severity: Severity = "warning"
    """The alert's ``severity`` label (and PagerDuty severity, Opsgenie priority); overridable per code."""
    on_role: str | None = None
    """Where the cause is: when hosts of this role logged its evidence, the verdict names only them (the NameNode's
    count of DataNodes without room is evidence of a full disk, but the space is on the DataNodes)."""


CHECKPOINT_STEPS = (
    Step("Give the checkpoint more room: raise execution.checkpointing.timeout{now} above the longest stall",
         "execution.checkpointing.timeout"),
    Step("Set execution.checkpointing.tolerable-failed-checkpoints above 0 so one failed checkpoint does not restart "
         "the job", "execution.checkpointing.tolerable-failed-checkpoints"),
)
LEGACY_CHECKPOINT_STEPS = (
    Step("Give the checkpoint more room: raise setCheckpointTimeout(...){now} above the longest stall (Flink < 1.9)",
         "setCheckpointTimeout"),
    Step("Call setFailOnCheckpointingErrors(false) so one failed checkpoint does not restart the job (Flink < 1.9)",
         "setFailOnCheckpointingErrors", "false"),
)

RETAINED_STEP = Step("Lower the checkpoints kept (execution.checkpointing.num-retained; state.checkpoints.num-retained "
                     "before Flink 1.20) and clean up orphaned checkpoint directories",
                     "execution.checkpointing.num-retained")
DURING = " during {chk}"
WRITTEN = " while {chk} was being written"


def refusal_cause(code: Code, meaning: str, title: str, steps: tuple[Step, ...], kind: EvidenceKind,
             seen_in: tuple[str, ...] = (), explained_by: frozenset[Code] = frozenset(),
             on_role: str | None = None) -> Cause:
    """A cause HDFS states when it refuses the write: its one evidence kind is the refusal itself, a root cause at
    full strength and a moment, and a longer timeout would not have helped (only the restart steps follow);
    ``seen_in``: the other event types its timeline draws."""
    return Cause(code, meaning, title, steps, {kind: 1.0}, root=True, checkpoint_steps="restarts",
                 points=frozenset({kind}), stated=True, timeline_types=frozenset({HdfsRefusal.type, *seen_in}),
                 explained_by=explained_by, on_role=on_role, severity="critical")


FLINK_CAUSES: tuple[Cause, ...] = (
    Cause(
        Code.FLINK_TASK_ERROR,
        "the checkpoint failed inside Flink, e.g. user code threw in `snapshotState` (the exception and first user "
        "frame are named)",
        "{Chk} failed inside Flink, not in storage",
        (
            Step("{user_fix}"),
            Step("Set execution.checkpointing.tolerable-failed-checkpoints above 0 to survive single failures",
                 "execution.checkpointing.tolerable-failed-checkpoints"),
        ),
        titles_by_kind={"user": "{Chk} failed in user code: “{exception}” at {frame}"},
        timeline_types=frozenset({CheckpointDeclined.type, CheckpointFailed.type, TaskStatus.type}),
        checkpoint_steps="none",
    ),
    Cause(
        Code.FLINK_STATE_GROWTH,
        "the job's state grew steadily until its upload outgrew the checkpoint timeout, with no storage stall in the "
        "logs (the growth is shown from the completed checkpoints)",
        "{Chk} outgrew its timeout: the job's checkpointed state kept growing",
        (
            Step("Find what makes the state grow: keys that are never cleared (a state TTL, StateTtlConfig, expires "
                 "them) or windows that never fire"),
            Step("With RocksDB, upload only what changed: execution.checkpointing.incremental: true "
                 "(state.backend.incremental before Flink 1.20)", "execution.checkpointing.incremental", "true"),
        ),
        timeline_types=frozenset({CheckpointCompleted.type}),
    ),
    Cause(
        Code.FLINK_BACKPRESSURE,
        "the checkpoint expired before its tasks began writing to HDFS (the NameNode allocated nothing for it, while "
        "it did for the job's checkpoints before): its barriers waited behind buffered records, or its synchronous "
        "snapshot took the time; storage is not blamed",
        "{Chk} expired before its upload began: its barriers were held up (backpressure)",
        (
            Step("Find the backpressured operator: the web UI's BackPressure tab, or the tasks' "
                 "backPressuredTimeMsPerSecond and busyTimeMsPerSecond metrics; the busy operator downstream of the "
                 "backpressure is the one to speed up or scale out"),
            Step("Let barriers overtake buffered records: execution.checkpointing.unaligned.enabled: true "
                 "(execution.checkpointing.unaligned before Flink 1.20)", "execution.checkpointing.unaligned.enabled",
                 "true"),
            Step("Keep less data in flight: taskmanager.network.memory.buffer-debloat.enabled: true",
                 "taskmanager.network.memory.buffer-debloat.enabled", "true"),
        ),
        timeline_types=frozenset({CheckpointSpan.type}),
    ),
    Cause(
        Code.FLINK_TASKMANAGER_LOST,
        "the JobManager lost a TaskManager of the job (`Heartbeat of TaskManager with id … timed out`) while the "
        "checkpoint ran, and the failover aborted it; no storage stall explains it (a logged JVM pause that covers "
        "the silence is `TASKMANAGER_JVM_PAUSE`)",
        "TaskManager {where} stopped answering: the JobManager lost its heartbeat" + DURING,
        (
            Step("Find out why TaskManager {where} went silent: its GC log and heap (a long full GC), its memory (a "
                 "container killed for exceeding its limit, the kernel's out-of-memory killer), or the host itself"),
            Step("Raise heartbeat.timeout (default 50 s) only when the TaskManager is known to come back from such "
                 "silences: a longer timeout also delays the failover from a TaskManager that is gone",
                 "heartbeat.timeout"),
            Step("Let the job come back by itself after a lost TaskManager: a restart strategy with room for such "
                 "failures (restart-strategy.type: exponential-delay, or fixed-delay with enough "
                 "restart-strategy.fixed-delay.attempts; restart-strategy on older versions)",
                 "restart-strategy.type", "exponential-delay"),
        ),
        timeline_types=frozenset({TaskManagerLost.type, JvmPause.type}),
        checkpoint_steps="none",
    ),
    Cause(
        Code.UNEXPLAINED,
        "the logs of every DataNode of the write, of the NameNode and of a TaskManager cover the failure and show "
        "nothing abnormal",
        "The HDFS logs cover {chk} and show nothing abnormal",
        (
            Step("Lower dfs.client.slow.io.warning.threshold.ms in the Flink HDFS client to see slow acks with their "
                 "pipeline", "dfs.client.slow.io.warning.threshold.ms"),
            Step("Enable GC logs on TaskManagers and DataNodes (env.java.opts.taskmanager, HDFS_DATANODE_OPTS)"),
            Step("Log each checkpoint's span, which shows how far a failed checkpoint's acknowledgements got: "
                 "traces.reporter.slf4j.factory.class: org.apache.flink.traces.slf4j.Slf4jTraceReporterFactory "
                 "(Flink 1.19+, the flink-metrics-slf4j jar in lib/)", "traces.reporter.slf4j.factory.class",
                 "org.apache.flink.traces.slf4j.Slf4jTraceReporterFactory", flink_since=(1, 19)),
        ),
        hosts_are="looked at",
        severity="info",
    ),
    Cause(
        Code.INSUFFICIENT_DATA,
        "the logs needed to judge are missing or damaged: the verdict names them, first the DataNode the write waited "
        "on when its neighbours' lines point at one",
        "The logs needed to explain {chk} are missing",
        (
            Step("Collect the logs of {wanted} covering the failure time and run the analysis again"),
            Step("Keep DataNode.clienttrace at INFO and enable GC logs so writes can be linked to DataNodes"),
        ),
        checkpoint_steps="none",
        hosts_are="missing logs of",
        severity="info",
        titles_by_kind={"silent": "{Chk} waited on DataNode {where}, whose log does not cover the write"},
    ),
)
"""The Flink-side and no-cause rows, after the storage rows in the registry."""
