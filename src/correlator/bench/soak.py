"""``correlator bench soak``: the worker fed a steady DataNode-heavy stream for minutes; is its memory flat?

A leak shows only over time: a worker that keeps up for a minute may still grow without bound (held writes, source
clocks, caches). Busy DataNodes' lines (mostly routine block writes, as in ``bench stream``) are produced at a fixed
rate, keyed and with headers as our shipper sends them; every ``SAMPLE_EVERY_S`` the worker's resident memory (its
own, its children's, and their sum) and its progress are read. After a warm-up minute the RSS must stay within
±10 % and under the limit, and the worker must keep up (read what was produced up to a few seconds before).
"""

from __future__ import annotations

import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from dataclasses import dataclass
from pathlib import Path

from confluent_kafka import Producer

from correlator.bench.datanode import datanode_lines
from correlator.bench.proc import tree_rss_kib
from correlator.bench.stream import contender_settings, create_topics, start_worker, terminate
from correlator.bench.worker_metrics import metric_sum, scrape
from correlator.config import Settings

SAMPLE_EVERY_S = 10.0
WARM_UP_S = 60.0
FLAT = 0.10
RSS_LIMIT_MB = 300
Echo = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class Sample:
    at_s: float
    produced: int
    read: float
    parts_kib: tuple[int, ...]
    """The worker's own RSS, then its children's (multiprocessing's resource tracker, the raw-ingest processes)."""

    @property
    def rss_kib(self) -> int:
        return sum(self.parts_kib)


JOB = "5f0c3b2a9d8e7f6a5b4c3d2e1f0a9b8c"
CHECKPOINT_EVERY = 20_000
"""DataNode records between two checkpoints of the JobManager's (about a second apart at the default rate)."""
_CC = "org.apache.flink.runtime.checkpoint.CheckpointCoordinator    [] - "
"""Flink 2.1.1's wording and padding, as in tests/data/lab/3.4.1-2.1.1/lock-held/flink-root-standalonesession-0-lab-jm.log."""


_Headers = list[tuple[str, str | bytes | None]]
"""Record headers as ``Producer.produce`` takes them."""


def _stream(hosts: int) -> Iterator[tuple[bool, bytes, bytes, _Headers]]:
    """Round-robin over the hosts' lines, each host's in its own time order (one key per host, as a shipper), and a
    JobManager whose checkpoints complete on the DataNodes' clock: with no Flink log the engine would hold HDFS
    evidence for hours of log time (no case can still need it only once Flink has passed it), as no real cluster
    does. Yields (is_flink, key, value, headers)."""
    lines = [datanode_lines(h, 10**9) for h in range(1, hosts + 1)]
    keys = [f"soak-dn{h}/hadoop-hdfs-datanode-soak-dn{h}.log".encode() for h in range(1, hosts + 1)]
    headers: list[_Headers] = [[("cluster", b"soak"), ("host", f"soak-dn{h}".encode()), ("role", b"datanode")]
               for h in range(1, hosts + 1)]
    jm_key = b"soak-jm/flink-flink-standalonesession-0-soak-jm.log"
    jm_headers: _Headers = [("cluster", b"soak"), ("host", b"soak-jm"), ("role", b"jobmanager")]
    count, checkpoint = 0, 0
    while True:
        for i, source in enumerate(lines):
            line = next(source)
            yield False, keys[i], line.encode(), headers[i]
            count += 1
            if count % CHECKPOINT_EVERY == 0:
                checkpoint += 1
                stamp = line[:23]
                at_ms = _epoch_ms(stamp)
                yield True, jm_key, (f"{stamp} INFO  {_CC}Triggering checkpoint {checkpoint} (type=CheckpointType"
                                     f"{{name='Checkpoint', sharingFilesStrategy=FORWARD_BACKWARD}}) @ {at_ms} for job "
                                     f"{JOB}.").encode(), jm_headers
                yield True, jm_key, (f"{stamp} INFO  {_CC}Completed checkpoint {checkpoint} for job {JOB} (41236 "
                                     "bytes, checkpointDuration=118 ms, finalizationTime=3 ms).").encode(), jm_headers


def _epoch_ms(stamp: str) -> int:
    """The JobManager logs the trigger time in epoch ms too (UTC here, like the generated stamps)."""
    moment = datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S,%f").replace(tzinfo=timezone.utc)
    return int(moment.timestamp() * 1000)


def run_soak(base: Settings, topics_dir: Path | None, echo: Echo, *, minutes: float, rate: int,
             hosts: int = 8) -> bool:
    """Returns whether memory stayed flat and under the limit while the worker kept up."""
    suffix = uuid.uuid4().hex[:8]
    settings = contender_settings(base, "soak", suffix, f"soak-{suffix}")
    create_topics(settings, topics_dir)
    with tempfile.TemporaryDirectory(prefix="correlator-soak-") as tmp:
        process, port = start_worker(settings, Path(tmp), "soak")
        try:
            samples = _feed(settings, process.pid, port, minutes * 60, rate, hosts, echo)
        finally:
            terminate(process, 60)
    return _verdict(samples, rate, echo)


def _feed(settings: Settings, pid: int, port: int, seconds: float, rate: int, hosts: int,
          echo: Echo) -> list[Sample]:
    producer = Producer(settings.kafka_client(**{"linger.ms": 20, "queue.buffering.max.messages": 1_000_000}))
    stream = _stream(hosts)
    topic = settings.topic_logs_hdfs
    topics = {False: topic, True: settings.topic_logs_flink}
    samples: list[Sample] = []
    start = time.monotonic()
    produced, next_sample = 0, start + SAMPLE_EVERY_S
    echo(f"soak: {rate:,} records/s for {seconds / 60:.1f} min from {hosts} busy DataNodes; a sample every "
         f"{SAMPLE_EVERY_S:.0f} s (RSS summed; in brackets the worker's own, then its children's: multiprocessing's "
         "resource tracker and the raw-ingest processes)")
    while (now := time.monotonic()) - start < seconds:
        due = int((now - start) * rate)
        while produced < due:
            flink, key, value, headers = next(stream)
            try:
                producer.produce(topics[flink], value=value, key=key, headers=headers)
            except BufferError:
                producer.poll(0.05)
                continue
            produced += 1
        producer.poll(0)
        if now >= next_sample:
            next_sample += SAMPLE_EVERY_S
            samples.append(_sample(now - start, produced, pid, port, topic))
            s = samples[-1]
            echo(f"  {s.at_s:6.0f} s  produced {s.produced:>11,}  read {s.read:>11,.0f}  RSS {s.rss_kib / 1024:6.0f} MB"
                 f" ({' + '.join(f'{kib / 1024:.0f}' for kib in s.parts_kib)})")
        time.sleep(0.01)
    producer.flush(30)
    return samples


def _sample(at_s: float, produced: int, pid: int, port: int, topic: str) -> Sample:
    try:
        read = metric_sum(scrape(port), "correlator_records_in_total", f'topic="{topic}"')
    except OSError:
        read = 0.0
    return Sample(at_s, produced, read, tuple(tree_rss_kib(pid)))


def _verdict(samples: list[Sample], rate: int, echo: Echo) -> bool:
    steady = [s for s in samples if s.at_s >= WARM_UP_S]
    if len(steady) < 2:
        echo("soak: too short to judge (needs samples after the warm-up minute)")
        return False
    low, high = min(s.rss_kib for s in steady), max(s.rss_kib for s in steady)
    mid = (low + high) / 2
    flat = (high - low) / 2 <= FLAT * mid
    under = high / 1024 < RSS_LIMIT_MB
    last = samples[-1]
    behind_s = (last.produced - last.read) / rate
    keeping_up = behind_s <= 5
    echo(f"soak: RSS after the warm-up {low / 1024:.0f}-{high / 1024:.0f} MB (±{(high - low) / 2 / mid:.1%}; goal "
         f"±{FLAT:.0%}, under {RSS_LIMIT_MB} MB): {'met' if flat and under else 'missed'}; worker "
         f"{behind_s:.1f} s behind at the end ({'kept up' if keeping_up else 'fell behind'})")
    return flat and under and keeping_up
