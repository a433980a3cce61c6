"""What a detector reads (a :class:`Scene`), what the verdict judged (an :class:`Outcome`), how a finding reads in it
(a :class:`Reading`), and the :class:`Detector` protocol every detector-backed cause keeps (``detectors.py``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar, Protocol, TypeVar

from correlator.core.correlate.context import Context
from correlator.core.correlate.explanation import WriteLink
from correlator.core.correlate.ranking import Candidate, Window
from correlator.core.explain.causes import Code
from correlator.core.explain.verdict import EvidenceItem


@dataclass(frozen=True, slots=True)
class Scene:
    """What a detector may read: the case and its stuck write, the storage causes the evidence ranked, whether one
    of them is strong enough on its own, and the user-code exception the failure's cause chain ends in."""

    ctx: Context
    window: Window
    storage: tuple[Candidate, ...]
    stalled: bool
    user: tuple[str, str] | None
    """``(exception, first user frame)`` when user code threw."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """What the verdict judged: its code, the candidate it names (``None``: no cause), and the other candidates."""

    code: Code
    best: Candidate | None
    others: tuple[Candidate, ...]


@dataclass(frozen=True, slots=True)
class Reading:
    """How a finding reads in one verdict: nothing, unless the verdict is its cause's or one it explains further."""

    opening: tuple[str, ...] = ()
    """Why this cause: the explanation's first sentences (its own verdict)."""
    aside: tuple[str, ...] = ()
    """Said after the cause's own sentences (it is the effect of the verdict's cause)."""
    closing: tuple[str, ...] = ()
    """Said after the whole explanation (the time budget)."""
    evidence: tuple[EvidenceItem, ...] = ()
    """The lines it cites among the verdict's evidence."""


F = TypeVar("F")


class Detector(Protocol[F]):
    """A cause found by a pattern of the case, not by one ranked interval."""

    code: ClassVar[Code]
    write_link: ClassVar[WriteLink]
    beside_user_code: ClassVar[bool]
    """Whether it still looks when the failure's cause chain ends in user code, which explains a failure by itself
    (``False`` for most: the registry loop skips them then)."""

    def find(self, scene: Scene, found: Mapping[Code, object]) -> F | None:
        """What it finds in the case (``found``: what the detectors before it found), or ``None``."""

    def candidate(self, finding: F, scene: Scene, so_far: Sequence[Candidate]) -> Candidate | None:
        """The candidate its finding makes (``so_far``: the storage candidates and those before it), if any."""

    def reading(self, finding: F, scene: Scene, outcome: Outcome) -> Reading:
        """How its finding reads in the verdict ``outcome`` judged."""
