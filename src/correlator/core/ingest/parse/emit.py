"""The parse context of one record: every event it yields shares the record's time, cluster, host, role and ref."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from correlator.core.events import Event


@dataclass(slots=True)
class Emit:
    """Builds events that share the record's common fields; ``role`` may be overridden per event."""

    ts_ms: int
    cluster: str
    host: str
    role: str
    ref: str
    out: list[Event]

    def __call__(self, cls: type[Event], *, role: str | None = None, ts_ms: int | None = None, **fields: Any) -> None:
        self.out.append(
            cls(
                ts_ms=self.ts_ms if ts_ms is None else ts_ms,
                cluster=self.cluster,
                host=self.host,
                role=role or self.role,
                ref=self.ref,
                **fields,
            )
        )
