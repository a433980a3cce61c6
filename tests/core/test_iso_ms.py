"""``iso_ms`` remembers each second's text: it must render every millisecond as the plain datetime rendering does."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from correlator.core.events import iso_ms
from correlator.core.ingest.limits import EPOCH_MS_MAX, EPOCH_MS_MIN


@given(st.integers(EPOCH_MS_MIN, EPOCH_MS_MAX))
def test_iso_ms_renders_as_datetime_does(ts_ms: int) -> None:
    plain = datetime.fromtimestamp(ts_ms / 1000, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ts_ms % 1000:03d}Z"
    assert iso_ms(ts_ms) == plain
    assert iso_ms(ts_ms) == iso_ms(ts_ms)  # the second remembered gives the same text
