"""The parse context of one record: every event it yields shares the record's time, cluster, host, role and ref."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from correlator.core.events import Event


@dataclass(frozen=True, slots=True)
class Emit:
    """Builds events that share the record's common fields; ``role`` may be overridden per event. Frozen: a parser
    that learns more (the role a logger proves, the bucket an access record names) binds a copy, so what the caller
    handed on is never changed behind its back."""

    ts_ms: int
    cluster: str
    host: str
    role: str
    ref: str
    out: list[Event]

    def bind(self, *, ts_ms: int | None = None, host: str | None = None, role: str | None = None) -> Emit:
        """A copy with the fields given: its events go to the same list (built directly: every record binds one)."""
        return Emit(self.ts_ms if ts_ms is None else ts_ms, self.cluster, self.host if host is None else host,
                    self.role if role is None else role, self.ref, self.out)

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
