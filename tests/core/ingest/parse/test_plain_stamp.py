"""The parse path reads the common log4j stamp by position; the timestamp module's patterns stay the reference."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from correlator.core.ingest.parse import _plain_stamp
from correlator.core.ingest.timestamps import LocalClock, TimestampError, local_date, to_epoch_ms

_CHARS = st.sampled_from("0123456789-: T,.x/Z+\u0662")
"""Digits, every separator a stamp may hold, and a few that break one (an Arabic-Indic two is a digit to both)."""
stamps = st.one_of(
    st.text(_CHARS, min_size=20, max_size=26),
    st.builds(lambda y, mo, d, sep, h, mi, s, frac, ms:
              f"{y:04d}-{mo:02d}-{d:02d}{sep}{h:02d}:{mi:02d}:{s:02d}{frac}{ms:03d}",
              st.integers(0, 9999), st.integers(0, 99), st.integers(0, 99), st.sampled_from(" T_"),
              st.integers(0, 99), st.integers(0, 99), st.integers(0, 99), st.sampled_from(",.;"), st.integers(0, 999)),
)


def _reference(stamp: str, clock: LocalClock) -> object:
    date = local_date(stamp)
    try:
        return date, to_epoch_ms(stamp, clock)
    except TimestampError as exc:
        return date, str(exc)


@given(stamps, st.sampled_from(("UTC", "Europe/Berlin", "America/New_York")))
def test_a_stamp_read_by_position_reads_as_the_patterns_read_it(stamp: str, zone: str) -> None:
    parts = _plain_stamp(stamp)
    if parts is None:
        return
    clock, reference_clock = LocalClock(zone), LocalClock(zone)
    try:
        ours: object = parts[:3], clock.reading(*parts)[0]
    except TimestampError as exc:
        ours = parts[:3], str(exc)
    assert ours == _reference(stamp, reference_clock)


def test_the_common_stamps_take_the_positional_read() -> None:
    assert _plain_stamp("2026-01-05 08:01:02,948") == (2026, 1, 5, 8, 1, 2, 948)
    assert _plain_stamp("2026-01-05T08:01:02.948") == (2026, 1, 5, 8, 1, 2, 948)
    assert _plain_stamp("2026-01-05 08:01:02") is None
    assert _plain_stamp("2026-01-05 08:01:02,948Z") is None
