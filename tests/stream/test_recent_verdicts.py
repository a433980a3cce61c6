"""The worker pages' memory of recent verdicts: bounded, redeliveries replace, drawn pictures bounded too."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from correlator.core.explain.verdict import Verdict
from correlator.offline.analyze import analyze
from correlator.stream.report_pages import DRAWN_MAX, RecentVerdicts

RECURRING = Path(__file__).resolve().parents[1] / "golden" / "scenarios" / "recurring"


def _many(n: int) -> list[Verdict]:
    base = analyze([str(RECURRING)])[0]
    return [dataclasses.replace(base, verdict_id=f"v{i:04d}",
                                failure=dataclasses.replace(base.failure, failed_at_ms=base.failure.failed_at_ms + i))
            for i in range(n)]


def test_bounded_newest_first_and_redeliveries_replace() -> None:
    recent = RecentVerdicts(limit=5)
    verdicts = _many(8)
    for v in verdicts + verdicts[-2:]:
        recent.add(v)
    assert [v.verdict_id for v in recent.newest_first()] == ["v0007", "v0006", "v0005", "v0004", "v0003"]
    assert recent.get("v0000") is None and recent.get("v0007") == verdicts[-1]


def test_each_picture_is_drawn_once_and_the_cache_is_bounded() -> None:
    recent = RecentVerdicts(limit=DRAWN_MAX + 10)
    verdicts = _many(DRAWN_MAX + 10)
    calls: list[str] = []
    for v in verdicts:
        recent.add(v)
    for v in verdicts:
        for _ in range(2):
            recent.drawn(v.verdict_id, "svg", lambda vid=v.verdict_id: calls.append(vid) or b"<svg/>")
    assert len(calls) == len(verdicts)  # the second request of each came from the cache
    recent.drawn(verdicts[0].verdict_id, "svg", lambda: calls.append("again") or b"<svg/>")
    assert calls[-1] == "again"  # the oldest drawing was dropped
