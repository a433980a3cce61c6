"""A call that outlives its own timeout is given up on; its result or error is handed over otherwise."""

from __future__ import annotations

import threading
import time

import pytest

from correlator.stream.stuck_calls import Bounded, TransactionStuck, abandon, abandoned, bounded


def test_a_call_that_returns_in_time_gives_its_result() -> None:
    assert bounded("quick", lambda: 42, timeout_s=1.0, margin_s=0.5) == 42


def test_a_call_that_raises_in_time_raises_the_same_error() -> None:
    def fail() -> None:
        raise ValueError("broker said no")

    with pytest.raises(ValueError, match="broker said no"):
        bounded("failing", fail, timeout_s=1.0, margin_s=0.5)


def test_a_call_that_never_returns_is_reported_stuck_and_the_caller_goes_on() -> None:
    release = threading.Event()
    try:
        with pytest.raises(TransactionStuck, match="send_offsets_to_transaction did not return within 1 s"):
            bounded("send_offsets_to_transaction", release.wait, timeout_s=0.5, margin_s=0.5)
    finally:
        release.set()


def test_an_abandoned_producer_is_let_go_once_its_call_returns() -> None:
    """Kept while its call blocks (destroying it would block too), dropped after: no growth across restarts."""
    before = abandoned()
    release = threading.Event()
    with pytest.raises(TransactionStuck) as stuck:
        bounded("commit_transaction", release.wait, timeout_s=0.1, margin_s=0.1)
    abandon(object(), stuck.value)  # type: ignore[arg-type]  # only kept, never called
    assert abandoned() == before + 1
    release.set()
    assert stuck.value.returned.wait(5)
    assert abandoned() == before


def test_each_call_of_a_sequence_has_its_own_deadline() -> None:
    """A hang in the first call is caught at its own deadline, not at the sum of every call's timeout."""
    release = threading.Event()
    steps = [("send_offsets_to_transaction", release.wait, 0.2), ("commit_transaction", lambda: 1, 30.0)]
    started = time.monotonic()
    try:
        with pytest.raises(TransactionStuck, match="send_offsets_to_transaction did not return"):
            Bounded(steps, margin_s=0.2).result()
    finally:
        release.set()
    assert time.monotonic() - started < 10


def test_a_sequence_that_returns_in_time_gives_the_last_result() -> None:
    steps = [("send_offsets_to_transaction", lambda: None, 0.5), ("commit_transaction", lambda: 7, 0.5)]
    assert Bounded(steps, margin_s=0.5).result() == 7
