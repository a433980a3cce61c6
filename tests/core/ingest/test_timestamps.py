"""One way from a log timestamp to UTC epoch ms: every form the parsers meet gives the instant it names."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from correlator.core.ingest.timestamps import LocalClock, TimestampError, local_date, to_epoch_ms

ZONES = ("UTC", "Europe/Berlin", "America/New_York", "Asia/Kolkata")
moments = st.datetimes(min_value=datetime(1991, 1, 1), max_value=datetime(2099, 12, 31)).map(
    lambda d: d.replace(microsecond=d.microsecond // 1000 * 1000)
)


EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def exact_ms(d: datetime) -> int:
    return (d - EPOCH) // timedelta(milliseconds=1)


def wall_ms(d: datetime, zone: str) -> int:
    """A stamp carries no fold: a fresh source reads a repeated hour's first pass and a skipped hour with the offset
    before it, which is fold 0 (hypothesis also draws fold 1, which no text can say)."""
    return exact_ms(d.replace(tzinfo=ZoneInfo(zone), fold=0))


@given(moments, st.sampled_from(ZONES), st.sampled_from((" ", "T")), st.sampled_from((",", ".")))
def test_zone_less_stamps_are_wall_time_in_the_sources_zone(d: datetime, zone: str, sep: str, frac: str) -> None:
    stamp = d.strftime(f"%Y-%m-%d{sep}%H:%M:%S") + f"{frac}{d.microsecond // 1000:03d}"
    assert to_epoch_ms(stamp, LocalClock(zone)) == wall_ms(d, zone)


@given(moments, st.sampled_from(ZONES))
def test_hadoop2_stamps_and_times_of_day(d: datetime, zone: str) -> None:
    clock = LocalClock(zone)
    whole = d.replace(microsecond=0)
    if d.year >= 2000:
        assert to_epoch_ms(d.strftime("%y/%m/%d %H:%M:%S"), clock) == wall_ms(whole, zone)
    day = d.strftime("%H:%M:%S") + f",{d.microsecond // 1000:03d}"
    assert to_epoch_ms(day, clock, date=(d.year, d.month, d.day)) == wall_ms(d, zone)
    assert local_date(d.strftime("%Y-%m-%d %H:%M:%S")) == (d.year, d.month, d.day)


@given(moments, st.integers(min_value=-12 * 60, max_value=14 * 60), st.sampled_from(ZONES))
def test_an_explicit_offset_wins_over_the_clock(d: datetime, minutes: int, zone: str) -> None:
    offset = timezone(timedelta(minutes=minutes))
    stamp = d.replace(tzinfo=offset).isoformat(timespec="milliseconds")
    expected = exact_ms(d.replace(tzinfo=offset))
    assert to_epoch_ms(stamp) == expected
    assert to_epoch_ms(stamp, LocalClock(zone)) == expected
    assert to_epoch_ms(d.replace(tzinfo=UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")) == exact_ms(
        d.replace(tzinfo=UTC)
    )


@pytest.mark.parametrize(
    ("stamp", "clock", "message"),
    [
        ("2024-05-01 10:00:00,123", None, "timestamp without offset"),
        ("10:00:00,123", None, "unrecognised timestamp"),
        ("10:00:00,123", LocalClock("UTC"), "no date known"),
        ("1970-01-01T00:00:00Z", None, "outside"),
        ("2024-02-30 10:00:00", LocalClock("UTC"), "day is out of range"),
        ("not a time", LocalClock("UTC"), "unrecognised timestamp"),
    ],
)
def test_what_cannot_be_placed_says_why(stamp: str, clock: LocalClock | None, message: str) -> None:
    with pytest.raises(TimestampError, match=message):
        to_epoch_ms(stamp, clock)
