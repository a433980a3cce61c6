"""The raw ingest's commit unit: a batch's commit overlaps the next batch's reading, never its transaction."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from correlator.stream.raw_commit import Transactions


class Producer:
    """Records the transactional calls in order; ``commit_transaction`` waits for ``release`` and may fail."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.release = threading.Event()
        self.fail: Exception | None = None

    def begin_transaction(self) -> None:
        self.calls.append("begin")

    def send_offsets_to_transaction(self, offsets: list[Any], _group: object, _timeout: float) -> None:
        self.calls.append(f"offsets {len(offsets)}")

    def commit_transaction(self, _timeout: float) -> None:
        assert self.release.wait(5)
        if self.fail is not None:
            raise self.fail
        self.calls.append("commit")

    def abort_transaction(self, _timeout: float) -> None:
        self.calls.append("abort")


class Consumer:
    def consumer_group_metadata(self) -> object:
        return object()


def test_the_next_begin_waits_for_the_commit_in_flight_and_its_batch_counts_first() -> None:
    producer = Producer()
    tx = Transactions(producer, Consumer())  # type: ignore[arg-type]
    tx.begin()
    tx.commit(["offset"], lambda: producer.calls.append("counted"))  # type: ignore[list-item]
    assert tx.in_flight  # the loop goes on reading while the broker commits
    threading.Timer(0.2, producer.release.set).start()
    tx.begin()
    assert producer.calls == ["begin", "offsets 1", "commit", "counted", "begin"]
    assert not tx.in_flight


def test_a_failed_commit_comes_out_of_the_next_begin_and_its_batch_never_counts() -> None:
    producer = Producer()
    producer.fail = RuntimeError("broker fenced us")
    producer.release.set()
    tx = Transactions(producer, Consumer())  # type: ignore[arg-type]
    tx.begin()
    tx.commit([], lambda: producer.calls.append("counted"))
    with pytest.raises(RuntimeError, match="fenced"):
        tx.begin()
    assert producer.calls == ["begin"]
    tx.close()  # the loop restarts: whatever is open is aborted
    assert producer.calls == ["begin", "abort"]


def test_a_commit_needs_an_open_transaction_and_only_one_is_open() -> None:
    producer = Producer()
    tx = Transactions(producer, Consumer())  # type: ignore[arg-type]
    with pytest.raises(AssertionError, match="without an open transaction"):
        tx.commit([])
    tx.begin()
    with pytest.raises(AssertionError, match="already open"):
        tx.begin()
