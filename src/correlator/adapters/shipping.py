"""Producing log files into the raw topics the way a shipper does: keyed by host + file, each file's lines in order."""

from __future__ import annotations

import heapq
import os
import re
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from confluent_kafka import KafkaException, Producer

from correlator.adapters.opening import open_log
from correlator.config import Settings
from correlator.core.ingest.sources import Side
from correlator.core.ingest.timestamps import LocalClock, to_epoch_ms


class LogFile(Protocol):
    """What shipping needs to know of a discovered log file (``correlator.offline.files.LogFile`` is one)."""

    @property
    def path(self) -> str: ...
    @property
    def host(self) -> str: ...
    @property
    def role(self) -> str | None: ...
    @property
    def family(self) -> str: ...
    @property
    def side(self) -> Side: ...
    @property
    def cluster(self) -> str | None: ...


@dataclass(frozen=True, slots=True)
class ShippedLine:
    sort_ms: int
    file_index: int
    line_no: int
    topic: str
    key: bytes
    value: bytes
    headers: tuple[tuple[str, bytes], ...]


class ShippingFailed(RuntimeError):
    """Some lines were not acknowledged by the brokers."""


def topic_for(log: LogFile, settings: Settings) -> str:
    """The raw topic of a file's side (``input_side``)."""
    topics = {Side.FLINK: settings.topic_logs_flink, Side.HDFS: settings.topic_logs_hdfs,
              Side.OBJECTSTORE: settings.topic_logs_s3}
    return topics[log.side]


def file_lines(index: int, log: LogFile, topic: str, cluster: str, clock: LocalClock) -> Iterator[ShippedLine]:
    """A file's lines as they are on disk (decompressed; container framing and JSON layouts are the worker's to
    read), each with the time of the last timestamped line so that files can be merged by time. A file the run
    told apart by its HDFS (or its folder) carries its own cluster."""
    key = f"{log.host}/{os.path.basename(log.path)}".encode()
    headers: list[tuple[str, bytes]] = [("cluster", (log.cluster or cluster).encode())]
    if log.host and log.host != "unknown":
        headers.append(("host", log.host.encode()))
    if log.role:
        headers.append(("role", log.role.encode()))
    frozen = tuple(headers)
    last_ms = 0
    handle, _ = open_log(log.path)
    with handle:
        for number, raw in enumerate(handle, start=1):
            value = raw.rstrip(b"\r\n")
            last_ms = line_time_ms(value, clock) or last_ms
            yield ShippedLine(last_ms, index, number, topic, key, value, frozen)


_JSON_TIME = re.compile(rb'"(?:@timestamp|time|timestamp)"\s*:\s*"([^"]{10,40})"|"(?:timeMillis|epochSecond)"\s*:\s*(\d+)')


def line_time_ms(value: bytes, clock: LocalClock) -> int | None:
    """The time a line starts with (ISO with or without zone, Hadoop 2's ``yy/MM/dd``), if it starts with one; for
    a JSON record (a layout's or a container runtime's), the time its stamp field gives."""
    if value[:1] == b"{":
        m = _JSON_TIME.search(value)
        if m is None:
            return None
        if m[2]:
            return int(m[2]) * (1000 if b"epochSecond" in m[0] else 1)
        value = m[1]
    head = value[:40].lstrip(b"[").decode("ascii", "replace")
    try:
        return to_epoch_ms(head, clock)
    except ValueError:
        return None


def merged_lines(files: Sequence[LogFile], settings: Settings) -> Iterator[ShippedLine]:
    clock = LocalClock(settings.tz)
    streams = [file_lines(i, log, topic_for(log, settings), settings.cluster, clock) for i, log in enumerate(files)]
    return heapq.merge(*streams, key=lambda s: (s.sort_ms, s.file_index, s.line_no))


def ship(lines: Iterable[ShippedLine], settings: Settings, *, speed: float = 0.0) -> int:
    """Produce every line; with ``speed`` > 0, log time passes that many times faster than it did. Returns the count."""
    producer = Producer(settings.kafka_client(**{"linger.ms": 20, "enable.idempotence": True, "log_level": 0}))
    failures: list[str] = []

    def delivered(err: object, _msg: object) -> None:
        if err is not None:
            failures.append(str(err))

    sent = 0
    first_ms: int | None = None
    started = time.monotonic()
    try:
        for line in lines:
            if speed > 0 and line.sort_ms:
                first_ms = line.sort_ms if first_ms is None else first_ms
                due = started + (line.sort_ms - first_ms) / 1000 / speed
                while (pause := due - time.monotonic()) > 0:
                    producer.poll(pause)  # serves delivery reports while waiting; returns early on one
            while True:
                try:
                    producer.produce(
                        line.topic, key=line.key, value=line.value, headers=list(line.headers), on_delivery=delivered
                    )
                    break
                except BufferError:
                    producer.poll(0.1)
            producer.poll(0)
            sent += 1
        remaining = producer.flush(60)
    except KafkaException as exc:
        raise ShippingFailed(f"producing to {settings.bootstrap_servers} failed: {exc}") from exc
    if remaining or failures:
        raise ShippingFailed(f"{remaining + len(failures)} of {sent} lines were not delivered: {failures[:1]}")
    return sent
