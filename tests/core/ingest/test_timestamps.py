"""One way from a log timestamp to UTC epoch ms: every form the parsers meet gives the instant it names."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from correlator.core.ingest.timestamps import LocalClock, TimestampError, local_date, read_stamp, to_epoch_ms

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


BERLIN_FALL_BACK = "2023-10-29"
"""03:00 CEST (+02:00) became 02:00 CET (+01:00): the wall times 02:00-02:59 came twice."""


def test_each_source_settles_the_repeated_hour_by_its_own_order() -> None:
    """A wall time of the repeated hour is its second pass for a source well past it, its first for a source that is
    not; the source is the clock's own, named when it is made (``of``), and no other source's reading moves it."""
    zone = LocalClock("Europe/Berlin")
    a, b = zone.of("a"), zone.of("b")
    first_pass = datetime(2023, 10, 29, 2, 10, tzinfo=timezone(timedelta(hours=2)))
    assert to_epoch_ms(f"{BERLIN_FALL_BACK} 02:50:00,000", a) == exact_ms(first_pass + timedelta(minutes=40))
    assert to_epoch_ms(f"{BERLIN_FALL_BACK} 02:10:00,000", b) == exact_ms(first_pass)
    assert to_epoch_ms(f"{BERLIN_FALL_BACK} 02:10:00,000", a) == exact_ms(first_pass + timedelta(hours=1))
    assert to_epoch_ms(f"{BERLIN_FALL_BACK} 02:10:00,000", b) == exact_ms(first_pass)
    assert to_epoch_ms(f"{BERLIN_FALL_BACK} 02:10:00,000", zone.of("a")) == exact_ms(first_pass + timedelta(hours=1))
    assert zone.guessed == {"dst_repeated_hour": 5}  # counted once for the zone, whichever source read
    assert (a.source, b.source, zone.source) == ("a", "b", "")
    with pytest.raises(AttributeError):
        a.source = "b"  # type: ignore[misc]


def test_a_reading_says_whether_the_wall_time_names_one_instant() -> None:
    """Only a wall time of an hour a DST change repeats or skips may read differently for another source."""
    clock = LocalClock("Europe/Berlin")
    assert read_stamp(f"{BERLIN_FALL_BACK} 02:10:00,000", clock)[1] is False
    assert read_stamp("2023-03-26 02:10:00,000", clock)[1] is False  # skipped by the spring-forward
    after = datetime(2023, 10, 29, 3, 10, tzinfo=timezone(timedelta(hours=1)))
    assert read_stamp(f"{BERLIN_FALL_BACK} 03:10:00,000", clock) == (exact_ms(after), True)
    assert read_stamp(f"{BERLIN_FALL_BACK}T02:10:00+01:00", clock)[1] is True
