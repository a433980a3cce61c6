"""Property: no input the ingest path accepts can make a snapshot fail, and a restored snapshot is the same state.

Lines are real log lines of the golden scenarios with their numbers replaced by arbitrary integers (30-digit
checkpoint ids, negative sizes), wrapped in arbitrary JSON envelopes (any stamp, any nesting, JSON escapes of lone
surrogates) or mangled into bytes. Every record must come out as events or dead letters, never as an exception,
and both stages' state must survive dump → load → dump unchanged.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from correlator.core.correlate.engine import EngineConfig
from correlator.core.events import Event
from correlator.core.ingest.ingest import IngestConfig
from correlator.core.ingest.records import ParseError
from correlator.stream.state import ClusterState, RawPartitionState
from correlator.stream.wire import decode_event, encode_event

SCENARIOS = Path(__file__).resolve().parents[1] / "golden" / "scenarios"
NUMBER = re.compile(rb"\d+")


def _candidate_lines() -> list[bytes]:
    """Lines the prefilter cares about (they become events), a few per file, from every scenario."""
    lines: list[bytes] = []
    for path in sorted(SCENARIOS.glob("*/*.log")):
        hits = [l for l in path.read_bytes().splitlines() if re.search(rb"checkpoint|Slow|GC|pause|held|Exception", l)]
        lines += hits[:: max(1, len(hits) // 6)][:6]
    return lines


TEMPLATES = _candidate_lines()

numbers = st.one_of(
    st.integers(0, 10**6),
    st.integers(-(2**70), 2**70),
    st.integers(10**18, 10**40),
)


@st.composite
def log_lines(draw: st.DrawFn) -> bytes:
    template = draw(st.sampled_from(TEMPLATES))
    parts = NUMBER.split(template)
    out = parts[0]
    for part in parts[1:]:
        out += str(draw(numbers)).encode() if draw(st.booleans()) else b"0"
        out += part
    return out


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=10,
)


@st.composite
def envelopes(draw: st.DrawFn) -> bytes:
    line = draw(log_lines()).decode("utf-8", "replace")
    body: dict[str, object] = {draw(st.sampled_from(["message", "log"])): line}
    for key in draw(st.sets(st.sampled_from(["@timestamp", "timestamp", "host", "fields", "log", "cluster"]))):
        body[key] = draw(json_values)
    text = json.dumps(body, allow_nan=True)
    if draw(st.booleans()):
        text = text.replace(line[:1] or "x", "\\ud800", 1) if text.count(line[:1] or "x") else text
    return text.encode()


records = st.one_of(
    log_lines(),
    envelopes(),
    st.binary(max_size=300),
    log_lines().map(lambda line: line[:40] + b"\xff\xfe" + line[40:]),
    st.integers(1, 400).map(lambda depth: b'{"message": ' + b"[" * depth + b"]" * depth + b"}"),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(records, min_size=1, max_size=25))
def test_ingest_and_snapshots_accept_every_record(values: list[bytes]) -> None:
    raw = RawPartitionState.load("logs.flink", 0, IngestConfig(), None)
    cluster = ClusterState.load("default", EngineConfig(), None)
    produced: list[Event | ParseError] = []
    for offset, value in enumerate(values):
        out = raw.feed(offset, b"jm01/flink.log", value, {}, now_ms=1_000 + offset)
        assert out is not None
        produced += [item for item, _ in out]
        blob = raw.dump()
        raw = RawPartitionState.load("logs.flink", 0, IngestConfig(), blob)
        assert raw.dump() == blob
    produced += [item for item, _ in raw.flush_idle(now_ms=10**9)]
    for offset, item in enumerate(produced):
        if isinstance(item, ParseError):
            assert item.reason and item.detail
            continue
        assert decode_event(encode_event(item)) == item
        cluster.feed(offset, item, None)
        blob = cluster.dump()
        cluster = ClusterState.load("default", EngineConfig(), blob)
        assert cluster.dump() == blob
    cluster.engine.advance(10**13)
    ClusterState.load("default", EngineConfig(), cluster.dump())
