"""What an ingest has read: lines, records, noise, events and errors by kind — counted as it goes, kept in snapshots."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class IngestStats:
    lines: int = 0
    records: int = 0
    noise: int = 0
    invalid_utf8: int = 0
    events: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)

    def as_dict(self) -> dict[str, Any]:
        return {"lines": self.lines, "records": self.records, "noise": self.noise, "invalid_utf8": self.invalid_utf8,
                "events": dict(self.events), "errors": dict(self.errors)}

    @classmethod
    def restore(cls, stats: Mapping[str, Any]) -> IngestStats:
        return cls(int(stats.get("lines", 0)), int(stats.get("records", 0)), int(stats.get("noise", 0)),
                   int(stats.get("invalid_utf8", 0)), Counter(stats.get("events", {})), Counter(stats.get("errors", {})))
