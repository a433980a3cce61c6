"""The orjson codec: every event the parsers produce, and arbitrary events, survive encode → decode unchanged."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from correlator.adapters.codec import (
    deadletter_value,
    decode_event,
    decode_parse_error,
    encode_event,
    encode_parse_error,
)
from correlator.core.event_dicts import EVENT_TYPES, UnknownEventType
from correlator.core.events import Event
from correlator.core.ingest.records import ParseError
from correlator.offline.files import iter_events

SAMPLES = Path(__file__).resolve().parents[1] / "data" / "samples"


def _value_strategy(annotation: str) -> st.SearchStrategy[object]:
    text = st.text(max_size=30)
    ints = st.integers(min_value=-(2**53), max_value=2**53)
    if "tuple[tuple[str, int]" in annotation:
        return st.lists(st.tuples(text, st.integers(-(2**53), 2**53)), max_size=3).map(tuple)
    if "tuple" in annotation:
        return st.lists(text, max_size=3).map(tuple)
    if "bool" in annotation:
        return st.booleans()
    base: st.SearchStrategy[object] = ints if "int" in annotation else text
    return st.one_of(st.none(), base) if "None" in annotation else base


def _event_strategy() -> st.SearchStrategy[Event]:
    def build(cls: type[Event]) -> st.SearchStrategy[Event]:
        fields = {f.name: _value_strategy(str(f.type)) for f in dataclasses.fields(cls)}
        fields["ts_ms"] = st.integers(min_value=0, max_value=4_102_444_800_000)
        return st.builds(cls, **fields)

    return st.one_of(*(build(cls) for cls in EVENT_TYPES.values()))


class TestEventCodec:
    @settings(max_examples=300, deadline=None)
    @given(_event_strategy())
    def test_arbitrary_events_round_trip(self, event: Event) -> None:
        """encode → decode is the identity for every event type and field value."""
        assert decode_event(encode_event(event)) == event

    def test_parsed_samples_round_trip(self) -> None:
        """Every event parsed from the bundled excerpts round-trips, and its JSON carries ``type`` and ``at``."""
        count = 0
        for item in iter_events([str(SAMPLES)]):
            if isinstance(item, Event):
                data = encode_event(item)
                assert decode_event(data) == item
                assert list(orjson.loads(data))[:2] == ["type", "at"]
                count += 1
        assert count > 50

    def test_unknown_type(self) -> None:
        """A record naming no event type is rejected with the codec's own error."""
        with pytest.raises(UnknownEventType):
            decode_event(b'{"type": "nope"}')


class TestParseErrorCodec:
    def test_round_trip_and_deadletter(self) -> None:
        """Parse errors round-trip; the dead-letter value carries the reason, coordinates and the original bytes."""
        error = ParseError(reason="bad_json", detail="JSON envelope does not parse", ref="logs.hdfs/2@17", excerpt="{")
        assert decode_parse_error(encode_parse_error(error)) == error
        dead = orjson.loads(deadletter_value(error, topic="logs.hdfs", partition=2, offset=17, value=b"{\xff"))
        assert dead["reason"] == "bad_json" and dead["offset"] == 17 and dead["value_b64"] == "e/8="
