"""A decided case, kept while late evidence may still revise it, and its plain-data form for the engine's snapshot."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from correlator.core.correlate.packing import Pack, pack, unpack
from correlator.core.events import CheckpointTriggered, Event
from correlator.core.explain.verdict import Verdict, verdict_from_dict, verdict_to_dict


@dataclass(slots=True)
class Decided:
    """A decided case, kept while late evidence may still revise it (as long as the evidence it read is kept)."""

    window_start_ms: int
    deadline_ms: int
    events: list[Event] = field(default_factory=list)
    trigger: CheckpointTriggered | None = None
    verdict: Verdict | None = None
    late: int = 0
    """Evidence of its window that arrived after it was decided, not yet judged."""


def pack_decided(d: Decided, packed: Pack = pack) -> dict[str, Any]:
    return {"window_start_ms": d.window_start_ms, "deadline_ms": d.deadline_ms, "late": d.late,
            "events": [packed(e) for e in d.events], "trigger": packed(d.trigger) if d.trigger else None,
            "verdict": verdict_to_dict(d.verdict) if d.verdict else None}


def unpack_decided(d: dict[str, Any]) -> Decided:
    """A decided case stored without its events and verdict restores as a mark only: it can no longer be revised."""
    trigger = unpack(d["trigger"]) if d.get("trigger") else None
    return Decided(d["window_start_ms"], d["deadline_ms"], [unpack(e) for e in d.get("events") or ()],
                    trigger if isinstance(trigger, CheckpointTriggered) else None,
                    verdict_from_dict(d["verdict"]) if d.get("verdict") else None, int(d.get("late") or 0))
