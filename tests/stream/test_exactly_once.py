"""Exactly once from raw offsets to events: a kill -9 mid-replay loses no event and repeats none."""

from __future__ import annotations

import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import orjson
import pytest

from correlator.adapters.codec import encode_event
from correlator.core.events import Event
from correlator.offline.files import iter_events
from correlator.simulate import generate
from tests.support.worker import Stack, WorkerProcess

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def _comparable(event: dict[str, Any]) -> bytes:
    """An event without where it was read from (file line offline, raw offset streamed)."""
    return orjson.dumps({k: v for k, v in event.items() if k not in ("ref", "_pos")}, option=orjson.OPT_SORT_KEYS)


def _sampled(event: dict[str, Any]) -> bool:
    """``source_progress`` samples a source's time at the edges of each scanned block, so where a batch (or a
    restart) cuts the stream decides which of them exist; every other event is the same however the input is cut."""
    return event["type"] == "source_progress"


def _events_sent(metrics: str) -> float:
    return sum(float(line.rpartition(" ")[2]) for line in metrics.splitlines()
               if line.startswith("correlator_events_total{"))


def test_kill_9_mid_replay_loses_and_repeats_no_event(kafka_bootstrap: str, unique: str, tmp_path: Path) -> None:
    """Events on the topic after a kill -9 and a restart are exactly the offline events of the same logs."""
    stack = Stack(kafka_bootstrap, unique, tmp_path, extra={"CORRELATOR_RAW_BATCH": "100"})
    stack.apply_topics()
    logs = tmp_path / "recurring"
    generate("recurring", logs)
    offline = [orjson.loads(encode_event(e)) for e in iter_events([str(logs)]) if isinstance(e, Event)]
    expected = Counter(_comparable(e) for e in offline if not _sampled(e))
    assert sum(expected.values()) > 100

    first = WorkerProcess(stack, "first").start()
    second = None
    try:
        # Paced (about 10 s for the scenario's 67 minutes of log time): at full speed a ready worker read all of it
        # between two of its status reports, and the kill landed after the stream.
        replay = threading.Thread(target=stack.replay, args=(logs,), kwargs={"cluster": "default", "speed": 400})
        replay.start()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (sent := _events_sent(first.metrics())):
            time.sleep(0.02)
        shipping = replay.is_alive()
        first.kill()
        assert sent > 0 and shipping, "the kill did not land mid-stream"
        replay.join(120)
        second = WorkerProcess(stack, "second").start()
        deadline = time.monotonic() + 120
        got = stack.read("events", until=sum(expected.values()), timeout_s=120)
        while sum(not _sampled(e) for e in got) < sum(expected.values()) and time.monotonic() < deadline:
            got = stack.read("events", until=len(got) + 1, timeout_s=5)
    finally:
        first.kill()
        if second is not None:
            second.stop()
    positions = Counter(tuple(e["_pos"]) for e in got)
    assert not [p for p, n in positions.items() if n > 1], "an event was published twice"
    assert any(_sampled(e) for e in got), "no source_progress events"
    received = Counter(_comparable(e) for e in got if not _sampled(e))
    assert received - expected == Counter(), "events that the offline run does not have (duplicates or strays)"
    assert expected - received == Counter(), "events lost"
