"""A failed checkpoint's time budget: how much of its duration the job's own trend predicts, how much a stall took.

A job whose state grows brings every checkpoint closer to its timeout; a short stall near the end of one is then
what tipped it over, not why it failed — and blaming the disk sends the SRE to the wrong host. When the completed
checkpoints predict more of the failed one's time than the stall took, the growth is the cause and the stall a
contributing factor; when the stall took more, the stall is the cause and the growth a note. Both are said with
their figures.
"""

from __future__ import annotations

from dataclasses import dataclass

from correlator.core.correlate.explanation import seconds
from correlator.core.correlate.growth import Growth
from correlator.core.correlate.ranking import Candidate, Window


@dataclass(frozen=True, slots=True)
class Budget:
    expected_ms: int
    """The duration the job's trend predicts for this checkpoint."""
    expected_bytes: int
    stall_ms: int
    """The part of the checkpoint's time the storage stall took."""
    stall_what: str
    stall_host: str
    timeout_ms: int | None

    @property
    def growth_leads(self) -> bool:
        return self.expected_ms >= self.stall_ms


def budget(growth: Growth, stall: Candidate, window: Window) -> Budget | None:
    """The budget of a checkpoint both a steady growth and a storage stall speak for (``None``: the stall has no
    measured span)."""
    if not stall.scored:
        return None
    top = stall.scored[0].interval
    share = min(top.end_ms, window.end_ms) - max(top.start_ms, window.start_ms)
    if share <= 0:
        share = min(top.magnitude_ms, window.duration_ms)
    return Budget(growth.expected_ms, growth.expected_bytes, share, top.summary, top.host, window.timeout_ms)


def budget_sentence(b: Budget) -> str:
    """The arithmetic in words, for whichever of the two leads."""
    timeout = f"its {seconds(b.timeout_ms)} timeout" if b.timeout_ms else "its time"
    predicted = (f"The job's completed checkpoints predicted {seconds(b.expected_ms)} for this one at "
                 f"{b.expected_bytes / 1048576:.0f} MiB")
    if b.growth_leads:
        return (f"{predicted}; the stall on {b.stall_host} ({b.stall_what}) took {seconds(b.stall_ms)} of it and "
                f"tipped it past {timeout}: a contributing factor, not the cause.")
    return (f"{predicted}, less than the {seconds(b.stall_ms)} the stall on {b.stall_host} took: the stall is the "
            "cause, the state's growth a note.")
