"""The causes a detector finds: Flink-side and compound causes, which no single evidence interval ranks.

A storage cause is found by ranking evidence intervals (``ranking.py``, weights from the cause registry). A cause the
logs show only as a pattern — a TaskManager the JobManager lost, a cause chain that ends in user code, state that
kept growing, an upload that never began — has a detector instead, registered here beside its code in the registry
(``core/explain/causes.py`` or ``storage_causes.py``: its title, steps, timeline types). Each detector says what it
needs (it reads a :class:`Scene`: the case, its stuck write, the ranked storage causes and what the detectors before
it found), what it finds (a finding, and the candidate it makes of it) and how its finding reads in the verdict (a
:class:`Reading`).
``decide`` runs them in :data:`DETECTORS` order and says what they read; it names none of them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from correlator.core.correlate.anatomy import HeldBeforeUpload, held_before_upload
from correlator.core.correlate.budget import Budget, budget, budget_sentence
from correlator.core.correlate.context import sole_taskmanager
from correlator.core.correlate.explanation import WriteLink, and_join, minutes, quoted, seconds
from correlator.core.correlate.growth import Growth, state_growth
from correlator.core.correlate.items import item
from correlator.core.correlate.lost import HEARTBEAT_KEY, Lost, lost_taskmanager
from correlator.core.correlate.ranking import CONTRIBUTING_SCORE, Candidate, Window
from correlator.core.correlate.scene import Detector, Outcome, Reading, Scene
from correlator.core.correlate.store_detectors import (
    ObjectStoreConnectionLimitDetector,
    ObjectStoreCredentialsDetector,
    ObjectStoreSlowDetector,
    ObjectStoreThrottledDetector,
)
from correlator.core.events import iso_ms
from correlator.core.explain.causes import Code

USER_ERROR_SCORE = 0.9
FLINK_ERROR_SCORE = 0.85
GROWTH_SCORE = 0.6
"""State growth's and backpressure's score, given only when no storage cause reached the confidence floor."""
LOST_SCORE = 0.9
"""A lost TaskManager's score, on the same condition: the JobManager states the failover that aborted the
checkpoint, a stronger word than a cause chain that merely names no storage."""



class TaskManagerLostDetector:
    """The JobManager lost a TaskManager of the job while the checkpoint ran (``lost.py``)."""

    code: ClassVar[Code] = Code.FLINK_TASKMANAGER_LOST
    write_link: ClassVar[WriteLink] = "never"
    beside_user_code: ClassVar[bool] = False

    def find(self, scene: Scene, found: Mapping[Code, object]) -> Lost | None:
        ctx = scene.ctx
        return lost_taskmanager(ctx.summary, scene.window, ctx.evidence, ctx.skew_ms, ctx.sources,
                                ctx.settings.get(HEARTBEAT_KEY))

    def candidate(self, finding: Lost, scene: Scene, so_far: Sequence[Candidate]) -> Candidate | None:
        return None if scene.stalled else Candidate(self.code, LOST_SCORE, (finding.where,), ())

    def reading(self, finding: Lost, scene: Scene, outcome: Outcome) -> Reading:
        cited = (item(finding.event, f"the JobManager lost TaskManager {finding.event.taskmanager_id}: "
                                     "its heartbeat timed out"),)
        if outcome.code == self.code:
            return Reading(opening=(_lost_sentence(finding),), evidence=cited)
        if outcome.code == Code.TASKMANAGER_JVM_PAUSE and finding.pause is not None:
            return Reading(aside=(f"The pause silenced the TaskManager: the JobManager lost its heartbeat at "
                                  f"{iso_ms(finding.event.ts_ms)} and failed its tasks, so the lost TaskManager is "
                                  "the pause's effect, not a cause of its own.",), evidence=cited)
        return Reading()


def _lost_sentence(lost: Lost) -> str:
    timeout = (f"{seconds(lost.timeout_ms)}, the heartbeat.timeout its configuration logged" if lost.timeout_logged
               else f"{seconds(lost.timeout_ms)}, Flink's default: its log showed no heartbeat.timeout")
    said = (f"The JobManager logged at {iso_ms(lost.event.ts_ms)} that the heartbeat of TaskManager "
            f"{lost.event.taskmanager_id} timed out: it had heard nothing from it for the heartbeat timeout "
            f"({timeout}), so it failed the TaskManager's tasks, which aborted this checkpoint; no storage log shows "
            "a stall that explains it.")
    if lost.pause is not None:
        return said + (f" A JVM pause of {seconds(lost.pause.pause_ms)} was logged on {lost.where}, too short to "
                       "explain the silence on its own.")
    return said + (f" No log that was read shows why {lost.where} went silent, and no JVM pause was logged on it. A "
                   "stopped or killed process, exhausted memory, or trouble with the host or its network can each "
                   "cause such a silence.")


@dataclass(frozen=True, slots=True)
class TaskError:
    hosts: tuple[str, ...]
    user: tuple[str, str] | None
    texts: tuple[str, ...]
    """The failure's own words (its cause chain's first line), quoted when no user code is named."""


class TaskErrorDetector:
    """The checkpoint failed inside Flink: user code threw, or the failure's cause chain names no storage (and no
    lost TaskManager's failover explains it)."""

    code: ClassVar[Code] = Code.FLINK_TASK_ERROR
    write_link: ClassVar[WriteLink] = "never"
    beside_user_code: ClassVar[bool] = True

    def find(self, scene: Scene, found: Mapping[Code, object]) -> TaskError | None:
        s = scene.ctx.summary
        if scene.user is None and (s.storage_related or Code.FLINK_TASKMANAGER_LOST in found):
            return None
        return TaskError(s.hosts or sole_taskmanager(scene.ctx), scene.user, s.texts)

    def candidate(self, finding: TaskError, scene: Scene, so_far: Sequence[Candidate]) -> Candidate | None:
        return Candidate(self.code, USER_ERROR_SCORE if finding.user is not None else FLINK_ERROR_SCORE,
                         finding.hosts, ())

    def reading(self, finding: TaskError, scene: Scene, outcome: Outcome) -> Reading:
        if outcome.code != self.code:
            return Reading()
        if finding.user is not None:
            exception, frame = finding.user
            return Reading(opening=(f"The failure's cause chain ends in “{exception[:240]}”, thrown from user code "
                                    f"at {frame}; no storage or I/O exception is behind it.",))
        return Reading(opening=("The failure's cause chain names no storage or I/O problem and no state file"
                                + (f": {quoted(finding.texts[0][:240])}" if finding.texts else "."),))


@dataclass(frozen=True, slots=True)
class GrowthFound:
    growth: Growth
    storage: Candidate | None
    """The strongest storage stall that contributes, weighed against the growth in the time budget."""
    spent: Budget | None


class StateGrowthDetector:
    """The job's completed checkpoints show its state and their duration growing toward the timeout (``growth.py``);
    where a storage stall is there too, the time budget (``budget.py``) says which took more of the checkpoint."""

    code: ClassVar[Code] = Code.FLINK_STATE_GROWTH
    write_link: ClassVar[WriteLink] = "always"
    beside_user_code: ClassVar[bool] = False

    def find(self, scene: Scene, found: Mapping[Code, object]) -> GrowthFound | None:
        ctx, window = scene.ctx, scene.window
        growth = state_growth(ctx.completions, ctx.summary.timeout_ms, window.start_ms)
        if growth is None:
            return None
        storage = max((c for c in scene.storage if c.scored and c.score >= CONTRIBUTING_SCORE),
                      key=lambda c: c.score, default=None)
        return GrowthFound(growth, storage, budget(growth, storage, window) if storage is not None else None)

    def candidate(self, finding: GrowthFound, scene: Scene, so_far: Sequence[Candidate]) -> Candidate | None:
        """Only where no storage cause is strong enough on its own, or where the growth predicts more of the
        checkpoint's time than the stall took; then above the stall. No host is named: it is the job's state."""
        if scene.stalled and not (finding.spent is not None and finding.spent.growth_leads):
            return None
        score = max(c.score for c in so_far) + 0.01 if scene.stalled else GROWTH_SCORE
        return Candidate(self.code, min(score, 1.0), (), ())

    def reading(self, finding: GrowthFound, scene: Scene, outcome: Outcome) -> Reading:
        mine, spent, storage = outcome.code == self.code, finding.spent, finding.storage
        weighed = mine or (storage is not None and outcome.code == storage.code)
        closing = (budget_sentence(spent),) if spent is not None and weighed else ()
        if not mine:
            return Reading(closing=closing)
        g = finding.growth
        cited = tuple(item(done, f"checkpoint {done.checkpoint_id} completed: {(done.size_bytes or 0) / 1048576:.1f} "
                                 f"MiB in {(done.duration_ms or 0) / 1000:.1f} s") for done in (g.first, g.last))
        return Reading(opening=(_growth_sentence(g, scene.window, outcome.others),), closing=closing, evidence=cited)


def _growth_sentence(growth: Growth, window: Window, others: Sequence[Candidate]) -> str:
    timeout = f" against the {seconds(window.timeout_ms)} timeout" if window.timeout_ms else ""
    return (f"The job's checkpointed state grew {growth.factor:.1f} times in "
            f"{minutes(growth.last.ts_ms - growth.first.ts_ms)} ({growth.size_from_bytes / 1048576:.1f} MiB to "
            f"{growth.size_to_bytes / 1048576:.1f} MiB over {growth.points} completed checkpoints) while their "
            f"duration rose from {seconds(growth.duration_from_ms)} to {seconds(growth.duration_to_ms)}{timeout}"
            + (": the upload outgrew its time." if any(c.scored and c.score >= CONTRIBUTING_SCORE for c in others) else
               "; no HDFS log shows a stall that explains this checkpoint, so the upload outgrew its time."))


class BackpressureDetector:
    """The NameNode's log covers an expired checkpoint and shows no block of it, while it does for the job's earlier
    ones: no task began its upload (``anatomy.py``)."""

    code: ClassVar[Code] = Code.FLINK_BACKPRESSURE
    write_link: ClassVar[WriteLink] = "when_known"
    beside_user_code: ClassVar[bool] = False

    def find(self, scene: Scene, found: Mapping[Code, object]) -> HeldBeforeUpload | None:
        ctx = scene.ctx
        if Code.FLINK_STATE_GROWTH in found or scene.stalled:
            return None
        return held_before_upload(ctx.summary, scene.window, ctx.evidence, ctx.job_id, ctx.checkpoint_id, ctx.sources,
                                  ctx.skew_ms)

    def candidate(self, finding: HeldBeforeUpload, scene: Scene, so_far: Sequence[Candidate]) -> Candidate | None:
        return Candidate(self.code, GROWTH_SCORE, (), ())

    def reading(self, finding: HeldBeforeUpload, scene: Scene, outcome: Outcome) -> Reading:
        if outcome.code != self.code:
            return Reading()
        held = finding
        before = (f", while it did for checkpoint{'s' if len(held.earlier) > 1 else ''} "
                  f"{and_join(str(c) for c in held.earlier)} of the job") if held.earlier else ""
        said = [f"No file of this checkpoint reached HDFS: the NameNode, whose log covers it, allocated no block for "
                f"it{before}. Its tasks never began their upload, so the time went before it: barriers waiting behind "
                "buffered records (backpressure), or the synchronous part of the snapshot; storage is not to blame."]
        if held.span is not None and held.span.waiting_on:
            acked = (f", while the tasks that did acknowledged within {held.last_ack_ms} ms of the trigger"
                     if held.last_ack_ms else "")
            said.append(f"According to Flink's checkpoint statistics, {and_join(held.span.waiting_on)} never "
                        f"acknowledged it{acked}.")
        elif held.span is not None:
            said.append(f"Flink's trace of the failed checkpoint shows the last acknowledgement {held.last_ack_ms} ms "
                        "after the trigger and no more before the timeout.")
        return Reading(opening=tuple(said))


DETECTORS: tuple[Detector[Any], ...] = (
    ObjectStoreCredentialsDetector(),
    ObjectStoreThrottledDetector(),
    ObjectStoreSlowDetector(),
    ObjectStoreConnectionLimitDetector(),
    TaskManagerLostDetector(),
    TaskErrorDetector(),
    StateGrowthDetector(),
    BackpressureDetector(),
)
"""The detector-backed causes, in the order they run: each sees what those before it found (a lost TaskManager's
failover is no error inside Flink; a growth of the state leaves no room for backpressure)."""
DETECTED: Mapping[Code, Detector[Any]] = {d.code: d for d in DETECTORS}


def write_link(code: Code) -> WriteLink:
    """What a verdict of ``code`` says of how the write was linked to DataNodes (a ranked cause: always)."""
    detector = DETECTED.get(code)
    return detector.write_link if detector is not None else "always"


@dataclass(frozen=True, slots=True)
class Detected:
    """What the detectors found, each with its detector, and every candidate best first."""

    candidates: tuple[Candidate, ...]
    found: tuple[tuple[Detector[Any], Any], ...]

    def readings(self, scene: Scene, outcome: Outcome) -> tuple[Reading, ...]:
        return tuple(detector.reading(finding, scene, outcome) for detector, finding in self.found)


def detect(scene: Scene) -> Detected:
    """Run every detector over the scene; the storage candidates and theirs, best first (ties by code)."""
    candidates = list(scene.storage)
    found: dict[Code, object] = {}
    pairs: list[tuple[Detector[Any], Any]] = []
    for detector in DETECTORS:
        if scene.user is not None and not detector.beside_user_code:
            continue
        finding = detector.find(scene, found)
        if finding is None:
            continue
        found[detector.code] = finding
        pairs.append((detector, finding))
        made = detector.candidate(finding, scene, candidates)
        if made is not None:
            candidates.append(made)
    candidates.sort(key=lambda c: (-c.score, c.code))
    return Detected(tuple(candidates), tuple(pairs))
