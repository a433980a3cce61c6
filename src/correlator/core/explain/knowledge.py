"""Knowledge base: known HDFS issues with affected/fixed versions, and remediation per root cause.

Version-aware where a daemon's start banner told us its version; where it did not, the defect is the one the logged
stack shows, named as possibly fixed already.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Literal

from correlator.core.explain.causes import CHECKPOINT_STEPS, LEGACY_CHECKPOINT_STEPS, Code, Step
from correlator.core.explain.registry import cause
from correlator.core.explain.kinds import EvidenceKind

Version = tuple[int, int, int]

SCANNER_FRAMES = ("DirectoryScanner", "checkAndUpdate")
"""Frames of the DataNode's DirectoryScanner: a lock held or awaited from one of them is the scanner's."""


def is_scanner_holder(holder: str) -> bool:
    return any(frame in holder for frame in SCANNER_FRAMES)


def is_scanner_stack(stack: tuple[str, ...]) -> bool:
    return any(is_scanner_holder(frame) for frame in stack)


def parse_version(text: str | None) -> Version | None:
    """``3.1.0`` / ``2.6.0-cdh5.8.0`` / ``1.7.1`` → (major, minor, patch); ``None`` when unreadable."""
    if not text:
        return None
    m = re.match(r"\s*(\d+)\.(\d+)(?:\.(\d+))?", text)
    if not m:
        return None
    return (int(m.group(1)), int(m.group(2)), int(m.group(3) or 0))


@dataclass(frozen=True, slots=True)
class KnownIssue:
    key: str
    summary: str
    fixed_in: tuple[Version, ...]
    """First fixed release of each maintained line."""
    effect: str
    """What a release with the fix does instead: the reason the upgrade helps."""

    def affects(self, version: Version) -> bool:
        """Affected when the first fix at or after the version's own release line is newer than the version."""
        candidates = [f for f in self.fixed_in if f[:2] >= version[:2]]
        return bool(candidates) and version < min(candidates)

    def fixed_text(self) -> str:
        """``3.2.2, 3.3.1``: the first fixed release of each line."""
        return ", ".join(".".join(map(str, f)) for f in self.fixed_in)


HDFS_14476 = KnownIssue(
    "HDFS-14476",
    "the DirectoryScanner's reconcile fixes every difference between disk and memory it found, one locked "
    "checkAndUpdate after another, without pausing",
    ((2, 10, 1), (3, 2, 2), (3, 3, 0)),
    "reconcile pauses between batches of fixes (dfs.datanode.reconcile.blocks.batch.size and "
    "dfs.datanode.reconcile.blocks.batch.interval)",
)
HDFS_15415 = KnownIssue(
    "HDFS-15415",
    "the DirectoryScanner compares its disk report with the whole replica map while holding the dataset lock, so "
    "the hold grows with the replicas on the DataNode",
    ((3, 2, 2), (3, 3, 1)),
    "the scanner holds the lock only to copy the replica list and compares outside it",
)
KNOWN_ISSUES = {i.key: i for i in (HDFS_14476, HDFS_15415)}


@dataclass(frozen=True, slots=True)
class DatanodeTraits:
    """What a DataNode version's code logs about its dataset lock and its DirectoryScanner.

    From the Hadoop sources by release line: the instrumented dataset lock and its hold-time warning arrive in 2.8.0
    (HDFS-10682/HDFS-10742) and go with the fine-grained ``DataSetLockManager`` of 3.4.0 (HDFS-15382/HDFS-16429),
    which reports nothing; lock-wait warnings exist on the 3.3 line only (``InstrumentedReadWriteLock``). The
    scanner compares disk and memory under the lock, logging its totals before releasing it, up to 3.2.1 and on
    3.3.0; from 3.2.2 and 3.3.1 (HDFS-15415) it copies the replica list under the lock and logs the totals after.
    """

    version: str
    lock_reports: bool
    lock_waits: bool
    totals_under_lock: bool
    lock_manager: bool = False
    """3.4+: per-block-pool/volume locks of ``DataSetLockManager``, which log no hold or wait time."""

    def lock_sentence(self) -> str:
        if not self.lock_reports:
            return (f"Hadoop {self.version} logs no dataset-lock hold times"
                    + (" (its DataSetLockManager locks report nothing)" if self.lock_manager else ""))
        waits = " and lock waits" if self.lock_waits else ""
        return f"Hadoop {self.version} reports dataset-lock holds{waits} above the reporting threshold"

    def totals_sentence(self) -> str:
        if self.totals_under_lock:
            return "its DirectoryScanner logs the totals while it still holds the lock"
        return "its DirectoryScanner logs the totals after releasing the lock"


def datanode_traits(datanode_version: str | None) -> DatanodeTraits | None:
    """Per-version facts of the DataNode's lock reporting and scanner; ``None`` when the version is unknown."""
    v = parse_version(datanode_version)
    if v is None or datanode_version is None:
        return None
    text = ".".join(map(str, v))
    if v < (2, 8, 0):
        return DatanodeTraits(text, lock_reports=False, lock_waits=False, totals_under_lock=True)
    if v >= (3, 4, 0):
        return DatanodeTraits(text, lock_reports=False, lock_waits=False, totals_under_lock=False, lock_manager=True)
    if v[:2] == (3, 3):
        return DatanodeTraits(text, lock_reports=True, lock_waits=True, totals_under_lock=v < (3, 3, 1))
    return DatanodeTraits(text, lock_reports=True, lock_waits=False, totals_under_lock=not (3, 2, 2) <= v)


ScannerPart = Literal["compare", "reconcile"]
"""The two parts of a DirectoryScanner run that take the dataset lock: ``scan()``'s compare of the disk report with the
replica map (one long hold up to 3.2.1 and on 3.3.0), and ``reconcile()``'s fix of each difference found
(``checkAndUpdate``, one short hold per difference, back to back)."""

RECONCILE_FRAMES = ("checkAndUpdate", "DirectoryScanner.reconcile")


def scanner_part(kind: EvidenceKind | None, holder: str | None) -> ScannerPart:
    """Which part the leading evidence shows: a hold whose holder frame is ``checkAndUpdate`` (or reconcile itself),
    or reconcile lines, is the reconcile; a hold in ``DirectoryScanner.scan`` — the seed's stack, where ``reconcile``
    is only its caller — or a totals line is the compare."""
    if kind == EvidenceKind.SCAN_RECONCILE:
        return "reconcile"
    if holder and any(frame in holder for frame in RECONCILE_FRAMES):
        return "reconcile"
    return "compare"


def scanner_issue(datanode_version: str | None, part: ScannerPart = "compare") -> KnownIssue | None:
    """The defect behind a long scanner stall of this part on a DataNode of this version: HDFS-15415 for the compare,
    HDFS-14476 for the reconcile; named too when the version is unknown (the logs' stack says which), ``None`` when
    the version has the fix."""
    issue = HDFS_15415 if part == "compare" else HDFS_14476
    version = parse_version(datanode_version)
    return issue if version is None or issue.affects(version) else None


@dataclass(frozen=True, slots=True)
class StepFacts:
    """What the steps' templates may name."""

    where: str
    holder: str
    now: str
    wanted: str
    user_fix: str
    issue: str
    fixed: str
    running: str
    fix_effect: str
    now_limit: str
    twice_limit: str


def _checkpoint_steps(flink_version: str | None) -> tuple[Step, ...]:
    """More time, then surviving a failure: the order both tuples keep."""
    version = parse_version(flink_version)
    return LEGACY_CHECKPOINT_STEPS if version is not None and version < (1, 9, 0) else CHECKPOINT_STEPS


def remediation(
    code: str,
    *,
    hosts: tuple[str, ...] = (),
    datanode_version: str | None = None,
    flink_version: str | None = None,
    timeout_ms: int | None = None,
    missing: tuple[str, ...] = (),
    holder: str | None = None,
    user_frame: str | None = None,
    issue: KnownIssue | None = None,
    limit: int | None = None,
    object_store: str | None = None,
) -> tuple[Step, ...]:
    """The cause's registry steps, filled in for this verdict, most effective first; ``issue`` is the known defect
    the verdict names (its upgrade step is left out without one); ``object_store``: the bucket of a checkpoint on an
    object store whose access log is wanted (the HDFS steps of a verdict that names no cause are left out)."""
    entry = cause(code)
    facts = StepFacts(
        where=", ".join(hosts) if hosts else "the DataNodes of the write",
        holder=holder or "the reported holder",
        now=f" (now {timeout_ms} ms)" if timeout_ms else "",
        wanted=(f"the object store (S3 server access logging on bucket {object_store})" if object_store else
                ", ".join(missing) if missing else "the DataNodes of the write and the NameNode"),
        user_fix=(f"Fix the exception thrown at {user_frame} (user code; the checkpoint failed inside Flink)"
                  if user_frame else
                  "Fix the operator's snapshot error shown in the failure cause (the checkpoint failed inside Flink)"),
        issue=issue.key if issue else "",
        fixed=issue.fixed_text() if issue else "",
        running=f" (it runs {datanode_version})" if datanode_version else "",
        fix_effect=issue.effect if issue else "",
        now_limit=f" (now {limit})" if limit else "",
        twice_limit=str(2 * limit) if limit else "",
    )
    wanted = "known_issue" if issue is not None else "no_known_issue"
    running = parse_version(flink_version)
    steps = [s for s in entry.steps if s.when in ("always", wanted)
             and (s.flink_since is None or running is None or running[:2] >= s.flink_since)]
    if object_store and entry.code == Code.INSUFFICIENT_DATA:
        steps = steps[:1]  # collect the store's log; the others are HDFS's
    if entry.checkpoint_steps != "none":
        extra = _checkpoint_steps(flink_version)
        steps += extra if entry.checkpoint_steps == "all" else extra[1:]
    fields = asdict(facts)
    return tuple(Step(s.text.format_map(fields), s.setting, s.value.format_map(fields) or None if s.value else None)
                 for s in steps)
