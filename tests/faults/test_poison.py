"""10,000 malformed records of every kind, interleaved with two clusters' real logs: each costs exactly one dead
letter with its reason, and not one verdict changes."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest
from confluent_kafka import Producer

from tests.faults.conftest import make_stack
from tests.faults.harness import ROWS, Row, dead_letters_by_reason, in_background, join, replay_all, scenarios, verdicts
from tests.support.worker import Stack, WorkerProcess

pytestmark = [pytest.mark.integration, pytest.mark.slow]

CHECKPOINT_OVERFLOW = (
    b"2020-01-02 17:18:43,295 INFO  org.apache.flink.runtime.checkpoint.CheckpointCoordinator     - Triggering "
    b"checkpoint 999999999999999999999999999999 @ 1577956723295 for job 1a3bc71ac57f33961637adf340e9c28f."
)
YEAR_2999 = (b"2999-01-01 00:00:00,000 WARN  org.apache.hadoop.hdfs.server.datanode.DataNode: "
             b"Slow BlockReceiver write data to disk cost:500ms (threshold=300ms)")

# kind: (value, expected reason, how many)
POISON: dict[str, tuple[bytes, str, int]] = {
    "stamp-1e300": (b'{"message": "x", "@timestamp": 1e300}', "bad_timestamp", 1500),
    "stamp-minus-1e20": (b'{"message": "x", "@timestamp": -1e20}', "bad_timestamp", 1500),
    "stamp-huge-int": (b'{"message": "x", "timestamp": 123456789012345678901234567890}', "bad_timestamp", 1000),
    "stamp-infinity": (b'{"log": "x", "@timestamp": Infinity}', "bad_timestamp", 500),
    "broken-json": (b'{"message": "truncated envel', "bad_json", 1500),
    "deep-nesting": (b'{"message": ' + b"[" * 50_000 + b"]" * 50_000 + b"}", "bad_json", 40),
    "empty-object": (b"{}", "bad_envelope", 400),
    "no-message": (b'{"message": 5, "host": "dn01"}', "bad_envelope", 600),
    "binary": (bytes(range(256)) * 8, "binary", 1000),
    "ten-mb-line": (YEAR_2999[:24] + b"x" * 9_500_000, "line_too_long", 3),
    "year-2999": (YEAR_2999, "bad_timestamp", 900),
    "checkpoint-overflow": (CHECKPOINT_OVERFLOW, "out_of_range", 1057),
}
TOLERATED = {  # decoded with replacement characters: noise lines, not errors
    "invalid-utf8": b"2020-01-02 17:18:53,337 INFO  org.apache.flink.Foo - \xff\xfe broken \xc3",
    "lone-surrogate": b'{"message": "2020-01-02 17:18:53,337 INFO  org.apache.flink.Foo - \\ud800 odd"}',
}


def produce_poison(stack: Stack) -> dict[tuple[str, int, int], str]:
    """Every malformed record, alternating between both raw topics; returns its coordinates → kind."""
    placed: dict[tuple[str, int, int], str] = {}
    producer = Producer({"bootstrap.servers": stack.bootstrap, "message.max.bytes": 12_000_000, "linger.ms": 20,
                         "allow.auto.create.topics": False})

    def delivered(kind: str):  # type: ignore[no-untyped-def]
        def report(err, msg) -> None:  # type: ignore[no-untyped-def]
            assert err is None, err
            placed[(msg.topic(), msg.partition(), msg.offset())] = kind
        return report

    records = [(kind, value) for kind, (value, _, n) in POISON.items() for _ in range(n)]
    records += [(kind, value) for kind, value in TOLERATED.items() for _ in range(500)]
    order = sorted(range(len(records)), key=lambda i: (i * 7919) % len(records))  # interleave the kinds
    for n, i in enumerate(order):
        kind, value = records[i]
        topic = stack.topic("logs_flink" if n % 2 else "logs_hdfs")
        while True:
            try:
                producer.produce(topic, key=f"poison/{kind}".encode(), value=value, on_delivery=delivered(kind))
                break
            except BufferError:
                producer.poll(0.1)
        producer.poll(0)
    assert producer.flush(60) == 0
    return placed


def test_poison_mix(kafka_bootstrap: str, unique: str, tmp_path: Path, started: list[WorkerProcess]) -> None:
    dirs, expected, lines = scenarios(tmp_path)
    stack = make_stack(kafka_bootstrap, unique, tmp_path)
    worker = WorkerProcess(stack, "poison")
    started.append(worker.start())
    poison = in_background(produce_poison, stack)
    replay_all(stack, dirs)
    join(poison)
    placed: dict[tuple[str, int, int], str] = poison.result  # type: ignore[attr-defined]
    got, duplicates, revised = verdicts(stack, expected)
    malformed = sum(n for _, _, n in POISON.values())
    reasons, records = dead_letters_by_reason(stack, at_least=malformed)
    by_coordinates = Counter((r["topic"], r["partition"], r["offset"]) for r in records)
    reason_at = {(r["topic"], r["partition"], r["offset"]): r["reason"] for r in records}
    ROWS.append(Row("poison mix (10k malformed)", lines + malformed + 1000, len(set(got)), len(expected),
                    duplicates, dict(reasons), revised=revised))
    assert set(got) == expected and duplicates == 0
    assert all(n == 1 for n in by_coordinates.values()), "a record was dead-lettered twice"
    wrong = Counter()
    for where, kind in placed.items():
        want = POISON[kind][1] if kind in POISON else None
        if reason_at.get(where) != want:
            wrong[(kind, reason_at.get(where))] += 1
    assert not wrong, wrong
    assert len(placed) == malformed + 1000
    assert worker.health().get("ready"), worker.tail()
    metrics = worker.metrics()
    assert "correlator_stage_crashes_total" not in metrics or 'correlator_stage_crashes_total{' not in metrics
    assert os.path.getsize(worker.log_path) < 5_000_000, "the worker's log grew with every poison record"
