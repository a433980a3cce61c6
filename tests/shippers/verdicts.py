"""What the shipper tests compare: streamed verdicts against ``analyze`` on the same files, code and hosts alike."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer

from correlator.offline.analyze import analyze
from tests.support.worker import Stack, latest

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "scenarios"

Shape = tuple[str, str, tuple[str, ...]]


def offline(logs: Path, cluster: str) -> list[Shape]:
    return sorted((v.verdict_id, v.root_cause.code, tuple(v.root_cause.hosts)) for v in analyze([str(logs)], cluster=cluster))


def streamed(records: list[dict[str, Any]]) -> list[Shape]:
    """The latest revision of each verdict, as a consumer keeps them."""
    return [(r["verdict_id"], r["root_cause"]["code"], tuple(r["root_cause"]["hosts"])) for r in latest(records)]


def raw_records(stack: Stack, topic: str, timeout_s: float = 20) -> list[tuple[str, bytes]]:
    """(key, value) of every record on a raw topic."""
    consumer = Consumer({"bootstrap.servers": stack.bootstrap, "group.id": f"raw-{time.monotonic_ns()}",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False, "enable.partition.eof": True})
    md = consumer.list_topics(stack.topic(topic), timeout=10)
    partitions = len(md.topics[stack.topic(topic)].partitions)
    consumer.subscribe([stack.topic(topic)])
    out: list[tuple[str, bytes]] = []
    done: set[int] = set()
    deadline = time.monotonic() + timeout_s
    try:
        while len(done) < partitions and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is None:
                continue
            if msg.error():
                done.add(msg.partition())
                continue
            out.append(((msg.key() or b"").decode("utf-8", "replace"), msg.value() or b""))
    finally:
        consumer.close()
    return out
