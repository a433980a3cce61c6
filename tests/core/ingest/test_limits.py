"""Range checks where input enters: out-of-range values become dead letters with a reason, not broken snapshots."""

from __future__ import annotations

import dataclasses
import typing

import pytest

from correlator.core.event_dicts import EVENT_TYPES
from correlator.core.events import SourceProgress
from correlator.core.ingest.envelopes import EnvelopeError, decode
from correlator.core.ingest.ingest import Ingest, IngestConfig
from correlator.core.ingest.limits import EPOCH_MS_MAX, OutOfRange, _names, epoch_ms, out_of_range, valid_text
from correlator.core.ingest.records import ParseError


@pytest.mark.parametrize("stamp", ["1e300", "-1e20", "123456789012345678901234567890", "Infinity", "NaN", "-1"])
def test_impossible_envelope_stamps_are_a_bad_timestamp(stamp: str) -> None:
    with pytest.raises(EnvelopeError) as caught:
        decode(b'{"message": "x", "@timestamp": ' + stamp.encode() + b"}")
    assert caught.value.reason == "bad_timestamp" and "@timestamp" in caught.value.detail


def test_plausible_stamps_in_seconds_and_milliseconds() -> None:
    assert epoch_ms(1_700_000_000) == 1_700_000_000_000
    assert epoch_ms(1_700_000_000.5) == 1_700_000_000_500
    assert epoch_ms(1_700_000_000_123) == 1_700_000_000_123
    with pytest.raises(OutOfRange):
        epoch_ms(EPOCH_MS_MAX + 1)


def test_lone_surrogates_from_json_escapes_become_replacement_characters() -> None:
    decoded = decode(b'{"message": "a \\ud800 b", "host": {"name": "dn\\udc0001"}}')
    assert decoded.text == "a \ufffd b" and decoded.host == "dn\ufffd01"
    assert valid_text("fine") == "fine"


def test_a_thirty_digit_checkpoint_id_is_one_out_of_range_dead_letter() -> None:
    line = (
        b"2024-01-01 10:00:00,000 INFO org.apache.flink.runtime.checkpoint.CheckpointCoordinator [] - Triggering "
        b"checkpoint 999999999999999999999999999999 (type=CHECKPOINT) @ 1704103200000 for job "
        b"0123456789abcdef0123456789abcdef."
    )
    ingest = Ingest(IngestConfig())
    out = ingest.feed(line, ref="t/0@0") + ingest.flush_all()
    assert [(e.reason, e.ref) for e in out if isinstance(e, ParseError)] == [("out_of_range", "t/0@0")]
    [error] = [e for e in out if isinstance(e, ParseError)]
    assert not [e for e in out if not isinstance(e, (ParseError, SourceProgress))], "the line's time still counts"
    assert "checkpoint_id" in error.detail and "exceeds 64 bits" in error.detail



def test_every_field_of_every_event_that_may_hold_an_int_is_checked() -> None:
    """``out_of_range`` looks only at the fields an event's annotation lets hold an int: each such field of each
    registered event is one of them, and set beyond 64 bits (a time: beyond 2200) it is the one reported."""
    for cls in EVENT_TYPES.values():
        hints = typing.get_type_hints(cls)
        fields = [f.name for f in dataclasses.fields(cls)]
        may_be_int = {n for n in fields if int in (typing.get_args(hints[n]) or (hints[n],))}
        assert {name for name, _ in _names(cls)} == may_be_int, cls.type
        for name, is_time in _names(cls):
            event = object.__new__(cls)  # no event's own checks: the values alone
            for other in fields:
                object.__setattr__(event, other, None)
            object.__setattr__(event, name, EPOCH_MS_MAX + 1 if is_time else 2**64)
            assert (out_of_range(event) or "").startswith(f"{name}="), (cls.type, name)
