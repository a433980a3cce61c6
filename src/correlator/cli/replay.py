"""``correlator replay``: produce log files into the raw topics as a shipper would, optionally at compressed speed."""

from __future__ import annotations

import heapq
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass

import click

from correlator.cli import RuntimeFailure
from correlator.cli.options import INTERPRETATION, KAFKA, TOPICS, settings_options
from correlator.config import Settings


@dataclass(frozen=True, slots=True)
class ShippedLine:
    """One line as a shipper sends it: ordered by its file's time, keyed by host + file."""

    sort_ms: int
    file_index: int
    line_no: int
    topic: str
    key: bytes
    value: bytes
    headers: tuple[tuple[str, bytes], ...]


def _shipped_lines(index: int, log: object, topic: str, cluster: str, tz: str) -> Iterator[ShippedLine]:
    """The lines of one file with the time of the last timestamped line, so files can be merged by time."""
    from correlator.core.timestamps import LocalClock, parse_offset

    clock = LocalClock(tz)
    path, host, role = log.path, log.host, log.role  # type: ignore[attr-defined]
    key = f"{host}/{os.path.basename(path)}".encode()
    headers: list[tuple[str, bytes]] = [("cluster", cluster.encode())]
    if host and host != "unknown":
        headers.append(("host", host.encode()))
    if role:
        headers.append(("role", role.encode()))
    last_ms = 0
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            value = raw.rstrip(b"\r\n")
            head = value[:40].lstrip(b"[").decode("ascii", "replace")
            try:
                last_ms = parse_offset(head, clock)
            except ValueError:  # continuation lines and non-timestamped lines keep the previous time
                pass
            yield ShippedLine(last_ms, index, number, topic, key, value, tuple(headers))


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@click.option(
    "--speed",
    type=float,
    default=0.0,
    show_default=True,
    help="Replay log time this many times faster than it passed (0: as fast as possible).",
)
@settings_options(*KAFKA, *TOPICS, *INTERPRETATION)
def replay(paths: tuple[str, ...], speed: float, settings: Settings) -> None:
    """Produce log files into the Flink and HDFS topics, each file's lines in order on one partition.

    Lines of all files are merged by their timestamps so the topics look like a live cluster's.
    """
    from confluent_kafka import KafkaException, Producer

    from correlator.offline.files import discover

    files = discover(list(paths))
    if not files:
        raise click.UsageError("no log files found in the given paths")
    streams = []
    for index, log in enumerate(files):
        topic = settings.topic_logs_flink if _is_flink(log) else settings.topic_logs_hdfs
        streams.append(_shipped_lines(index, log, topic, settings.cluster, settings.tz))
    merged = heapq.merge(*streams, key=lambda s: (s.sort_ms, s.file_index, s.line_no))

    producer = Producer(settings.kafka_client(**{"linger.ms": 20, "enable.idempotence": True}))
    failures: list[str] = []

    def delivered(err: object, _msg: object) -> None:
        if err is not None:
            failures.append(str(err))

    sent = 0
    first_ms: int | None = None
    started = time.monotonic()
    try:
        for line in merged:
            if speed > 0 and line.sort_ms:
                first_ms = first_ms if first_ms is not None else line.sort_ms
                due = started + (line.sort_ms - first_ms) / 1000 / speed
                pause = due - time.monotonic()
                if pause > 0:
                    producer.flush(pause)
                    time.sleep(max(0.0, due - time.monotonic()))
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
        raise RuntimeFailure(f"producing to {settings.bootstrap_servers} failed: {exc}") from exc
    if remaining or failures:
        raise RuntimeFailure(f"{remaining + len(failures)} of {sent} lines were not delivered: {failures[:1]}")
    click.echo(f"replayed {sent} lines from {len(files)} files", err=True)


def _is_flink(log: object) -> bool:
    family, role = log.family, log.role  # type: ignore[attr-defined]
    if family == "flink":
        return True
    if family == "envelope":
        with open(log.path, "rb") as handle:  # type: ignore[attr-defined]
            return b"org.apache.flink" in handle.read(65536)
    return family == "gc" and role in ("taskmanager", "jobmanager")
