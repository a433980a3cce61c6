"""Fixtures of the shipper tests: the shipper processes a test starts, each stopped by its pid."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.shippers.live import Processes


@pytest.fixture
def processes() -> Iterator[Processes]:
    procs = Processes()
    yield procs
    procs.stop_all()
