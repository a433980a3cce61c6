"""Stand-ins for what the worker's parts use of a Faust app (topics, a changelog table, a consumer, a producer),
of the liveness probe and of raw ingest."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, NamedTuple

from correlator.stream.liveness import Status
from correlator.stream.raw_process import RawIngestStatus


class TP(NamedTuple):
    topic: str
    partition: int


@dataclass
class FakeTopic:
    sent: list[dict[str, Any]] = field(default_factory=list)

    def send_soon(self, **kwargs: Any) -> None:
        self.sent.append(kwargs)


@dataclass
class FakeTable:
    name: str = "engine"
    data: dict[bytes, bytes] = field(default_factory=dict)
    changelog: list[tuple[int, bytes, bytes]] = field(default_factory=list)

    def get(self, key: bytes) -> bytes | None:
        return self.data.get(key)

    def keys(self) -> list[bytes]:
        return list(self.data)

    def send_changelog(self, partition: int, key: bytes, blob: bytes) -> None:
        self.changelog.append((partition, key, blob))


@dataclass
class FakeConsumer:
    assigned: set[TP] = field(default_factory=set)
    highwaters: dict[TP, int] = field(default_factory=dict)
    positions: dict[TP, int] = field(default_factory=dict)

    def assignment(self) -> set[TP]:
        return set(self.assigned)

    def highwater(self, tp: TP) -> int | None:
        return self.highwaters.get(tp)

    async def position(self, tp: TP) -> int | None:
        return self.positions.get(tp)


@dataclass
class FakeProducer:
    log: list[str] = field(default_factory=list)

    async def flush(self) -> None:
        self.log.append("flush")


@dataclass
class FakeApp:
    consumer: FakeConsumer | None = field(default_factory=FakeConsumer)
    producer: FakeProducer = field(default_factory=FakeProducer)
    rebalancing: bool = False


def record(topic: str, partition: int, offset: int, value: bytes, key: bytes | None = b"default",
           timestamp: float = 0.0) -> SimpleNamespace:
    """One Faust event as the agent's ``take_events`` yields it (only its ``message`` is read)."""
    message = SimpleNamespace(topic=topic, partition=partition, offset=offset, key=key, value=value,
                              timestamp=timestamp, tp=TP(topic, partition))
    return SimpleNamespace(message=message)


@dataclass
class FakeProbe:
    answer: Status
    calls: list[tuple[set[tuple[str, int]], dict[tuple[str, int], int]]] = field(default_factory=list)

    def check(self, assigned: set[tuple[str, int]], processed: dict[tuple[str, int], int]) -> Status:
        self.calls.append((assigned, processed))
        return self.answer


@dataclass
class FakeRawIngest:
    status: RawIngestStatus = field(default_factory=RawIngestStatus)
    healthy: bool = True
    live: bool = False
    failed: str | None = None
    children: list[Any] = field(default_factory=lambda: [object(), object()])
    restarted: list[int] = field(default_factory=list)

    def restart_idle(self, now_ms: int) -> None:
        self.restarted.append(now_ms)
