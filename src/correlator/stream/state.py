"""What the worker persists per partition (ingest) and per cluster (correlate), and how it skips redeliveries.

Both stages store, next to the core's snapshot, how far they got. After a crash Faust redelivers from the last
committed offset, which may be behind the last snapshot; anything at or before the stored position is skipped, so the
core sees each input exactly once even though Kafka delivers at least once.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from operator import methodcaller
from dataclasses import dataclass, field
from typing import Any

import orjson
import zstandard

from correlator.core.correlate.engine import Engine, EngineConfig
from correlator.core.events import Event
from correlator.core.explain.foresight import Foresight
from correlator.core.explain.risk import Risk, RiskWatch
from correlator.core.explain.transactions import TransactionLoss, TransactionWatch
from correlator.core.explain.verdict import Verdict
from correlator.core.ingest.ingest import Ingest, IngestConfig
from correlator.core.ingest.prefilter import Scanner
from correlator.core.ingest.records import ParseError
from correlator.stream.wire import Position

_VALUE, _OFFSET = methodcaller("value"), methodcaller("offset")


_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def _pack(data: dict[str, Any]) -> bytes:
    """Snapshots hold raw evidence for the retention horizon; compressed they stay far below a record's size limit.
    zstd at level 1: a busy cluster's engine holds megabytes of evidence and is snapshotted after every batch, and it
    compresses them several times faster than zlib, and smaller (figures in docs/performance.md)."""
    return zstandard.ZstdCompressor(level=1).compress(orjson.dumps(data))


def _unpack(blob: bytes) -> dict[str, Any]:
    """A snapshot's data, zstd or zlib (as snapshots of earlier releases are) told by the frame's magic number."""
    raw = zstandard.ZstdDecompressor().decompress(blob) if blob[:4] == _ZSTD_MAGIC else zlib.decompress(blob)
    data: dict[str, Any] = orjson.loads(raw)
    return data


@dataclass
class RawPartitionState:
    """Multi-line reassembly and parsing for one raw topic-partition."""

    topic: str
    partition: int
    ingest: Ingest
    offset: int = -1
    seq: int = 0
    topic_id: str | None = None
    """The id of the topic this state was read from; a topic recreated under the same name has a new one."""
    generation: int = 0
    recreated_from: str | None = None
    """Set when loading found the snapshot of a deleted topic of this name (its id), and started afresh."""

    @classmethod
    def load(
        cls, topic: str, partition: int, config: IngestConfig, blob: bytes | None, scanner: Scanner | None = None,
        topic_id: str | None = None,
    ) -> RawPartitionState:
        """The partition's state from its snapshot; a snapshot of another topic of the same name (deleted and
        created again) is dropped — its offsets say nothing about the new topic's records."""
        if not blob:
            return cls(topic, partition, Ingest(config, scanner), topic_id=topic_id)
        data = _unpack(blob)
        stored, generation = data.get("topic_id"), int(data.get("generation") or 0)
        if stored and topic_id and stored != topic_id:
            return cls(topic, partition, Ingest(config, scanner), topic_id=topic_id, generation=generation + 1,
                       recreated_from=stored)
        return cls(topic, partition, Ingest.restore(config, data["ingest"], scanner), data["offset"], data["seq"],
                   topic_id or stored, generation)

    def dump(self) -> bytes:
        return _pack({"offset": self.offset, "seq": self.seq, "ingest": self.ingest.snapshot(),
                      "topic_id": self.topic_id, "generation": self.generation})

    def feed(
        self, offset: int, key: bytes | None, value: bytes, headers: dict[str, bytes], now_ms: int
    ) -> list[tuple[Event | ParseError, Position]] | None:
        """Parse one record; ``None`` when it was already applied before a restart."""
        if offset <= self.offset:
            return None
        self.offset, self.seq = offset, 0
        ref = f"{self.topic}/{self.partition}@{offset}"
        return self._positioned(self.ingest.feed(value, ref=ref, headers=headers, key=key, now_ms=now_ms))

    def start_batch(self, last: int) -> int:
        """A batch up to raw offset ``last`` begins; its outputs are positioned at ``last``. Returns the old offset,
        below which records were applied before (a redelivery after a restart) and are skipped."""
        floor = self.offset
        if last > self.offset:
            self.offset, self.seq = last, 0
        return floor

    def feed_messages(
        self, msgs: Sequence[Any], key: bytes | None, headers: dict[str, bytes], now_ms: int, floor: int
    ) -> list[tuple[Event | ParseError, Position]]:
        """Consecutive records of one source (confluent-kafka messages), scanned together."""
        fresh = msgs if msgs[0].offset() > floor else [m for m in msgs if m.offset() > floor]
        if not fresh:
            return []
        values = list(map(_VALUE, fresh))  # the method called from C: no Python frame per record
        if None in values:  # a tombstone
            values = [v or b"" for v in values]
        outputs = self.ingest.feed_records(
            values, list(map(_OFFSET, fresh)),
            stream_ref=f"{self.topic}/{self.partition}", key=key, headers=headers, now_ms=now_ms,
        )
        return self._positioned(outputs)

    def flush_idle(self, now_ms: int) -> list[tuple[Event | ParseError, Position]]:
        return self._positioned(self.ingest.flush_idle(now_ms))

    def _positioned(self, outputs: list[Event | ParseError]) -> list[tuple[Event | ParseError, Position]]:
        result = []
        for item in outputs:
            result.append((item, Position(self.topic, self.partition, self.offset, self.seq, self.generation)))
            self.seq += 1
        return result


@dataclass
class ClusterState:
    """The correlation engine of one cluster, the last applied events offset and the last position per raw stream."""

    cluster: str
    engine: Engine
    offset: int = -1
    positions: dict[str, tuple[int, int]] = field(default_factory=dict)
    duplicates: int = 0
    partition: int = -1
    """The events partition the cluster's records (and so its snapshot) live on; -1 until known."""
    foresight: Foresight = field(default_factory=Foresight)
    """Outlook and what-if figures for each verdict the engine decides (a snapshot from before it starts empty)."""
    risks: RiskWatch = field(default_factory=RiskWatch)
    due: list[Risk] = field(default_factory=list)
    """Risk records due since the last ``take_risks``: published with the verdicts of the same batch."""
    transactions: TransactionWatch = field(default_factory=TransactionWatch)
    """An exactly-once Kafka sink's transactions: its warnings join ``due``, its losses ``lost``."""
    lost: list[TransactionLoss] = field(default_factory=list)

    @classmethod
    def load(cls, cluster: str, config: EngineConfig, blob: bytes | None) -> ClusterState:
        """A state loaded from its table is a worker's restart or a rebalance: its engine warms up again (the sources
        it knew at the snapshot are not all there are; see ``Engine.restart_warm_up``)."""
        if not blob:
            return cls(cluster, Engine(config))
        data = _unpack(blob)
        positions = {k: (int(v[0]), int(v[1])) for k, v in data["positions"].items()}
        foresight = Foresight.restore(data["foresight"]) if data.get("foresight") else Foresight()
        risks = RiskWatch.restore(data["risks"]) if data.get("risks") else RiskWatch()
        kafka = TransactionWatch.restore(data["transactions"]) if data.get("transactions") else TransactionWatch()
        engine = Engine.restore(config, data["engine"])
        engine.restart_warm_up()
        return cls(cluster, engine, data["offset"], positions, data["duplicates"], int(data.get("partition", -1)),
                   foresight, risks, transactions=kafka)

    def dump(self) -> bytes:
        return _pack(
            {
                "offset": self.offset,
                "positions": {k: list(v) for k, v in self.positions.items()},
                "duplicates": self.duplicates,
                "partition": self.partition,
                "engine": self.engine.snapshot(),
                "foresight": self.foresight.snapshot(),
                "risks": self.risks.snapshot(),
                "transactions": self.transactions.snapshot(),
            }
        )

    def feed(self, offset: int, event: Event, position: Position | None) -> list[Verdict]:
        if offset <= self.offset:
            return []
        self.offset = offset
        if position is not None:
            mark = (position.offset, position.seq)
            last = self.positions.get(position.stream)
            if last is not None and mark <= last:
                self.duplicates += 1
                return []
            self.positions[position.stream] = mark
        self.foresight.observe(event)
        self.due.extend(self.risks.observe(event))
        self.due.extend(self.transactions.observe(event))
        self.lost.extend(self.transactions.take_losses())
        return [self.foresight.annotate(v) for v in self.engine.feed(event)]

    def take_risks(self) -> list[Risk]:
        taken, self.due = self.due, []
        return taken

    def take_losses(self) -> list[TransactionLoss]:
        taken, self.lost = self.lost, []
        return taken

    def advance(self, now_ms: int) -> list[Verdict]:
        return [self.foresight.annotate(v) for v in self.engine.advance(now_ms)]

