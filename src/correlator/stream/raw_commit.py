"""The raw ingest's commit unit: one Kafka transaction per batch, its commit overlapped with reading the next batch.

A batch's events, dead letters, ingest snapshots and consumed offsets go out in one transaction. Committing it waits
on the broker (the transaction's markers reach every partition it wrote), and the loop would wait with it. Instead
the offsets and the commit go to a thread while the loop consumes and groups the next batch, and the unit settles
the commit before anything else touches the producer or the partitions: the next begin, an idle flush, a revoked
assignment, the loop's end. A batch counts as processed (its offsets, lags, the loop's health) only once its commit
has settled; if it failed, the error comes out of ``settle`` and the loop restarts from what was committed, the
batch read meanwhile never processed.

Invariant, checked: at most one transaction open or in flight, and none begins before the one before it settled.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from confluent_kafka import Consumer, Producer, TopicPartition

from correlator.stream.stuck_calls import Bounded, Step, TransactionStuck, abandon

log = logging.getLogger(__name__)
OFFSETS_TIMEOUT_S = 30.0
COMMIT_TIMEOUT_S = 60.0


class Transactions:
    """The loop's transactions on ``producer``, with the offsets of ``consumer``'s group."""

    def __init__(self, producer: Producer, consumer: Consumer) -> None:
        self.producer = producer
        self.consumer = consumer
        self._open = False
        self._in_flight: Bounded | None = None
        self._then: Callable[[], None] | None = None

    def begin(self) -> None:
        self.settle()
        assert not self._open, "a transaction is already open"
        self.producer.begin_transaction()
        self._open = True

    def commit(self, offsets: list[TopicPartition], then: Callable[[], None] = lambda: None) -> None:
        """Send ``offsets`` (the next raw offset to read per partition; none for an idle flush) into the open
        transaction and commit it, on a thread; ``then`` runs once it settled without error."""
        assert self._open and self._in_flight is None, "commit without an open transaction"
        group = self.consumer.consumer_group_metadata() if offsets else None
        producer = self.producer
        steps: list[Step] = []
        if offsets:
            steps.append(("send_offsets_to_transaction",
                          lambda: producer.send_offsets_to_transaction(offsets, group, OFFSETS_TIMEOUT_S),
                          OFFSETS_TIMEOUT_S))
        steps.append(("commit_transaction", lambda: producer.commit_transaction(COMMIT_TIMEOUT_S), COMMIT_TIMEOUT_S))
        self._open = False
        self._in_flight = Bounded(steps)
        self._then = then

    @property
    def in_flight(self) -> bool:
        return self._in_flight is not None

    def settle(self) -> None:
        """Wait for the commit in flight, if any; raises its error (``TransactionStuck`` past its deadline)."""
        in_flight, then = self._in_flight, self._then
        if in_flight is None:
            return
        self._in_flight = self._then = None
        in_flight.result()
        if then is not None:
            then()

    def close(self) -> None:
        """The loop ends: a commit in flight is waited for (a failure only logged: the loop restarts from the committed
        offsets either way), then whatever is open aborted. A stuck producer is abandoned, never called again."""
        try:
            self.settle()
        except TransactionStuck as stuck:
            abandon(self.producer, stuck)
            return
        except Exception as exc:
            log.warning("the last raw-ingest commit failed as the loop ended: %s", exc)
        self._open = False
        try:
            self.producer.abort_transaction(5)
        except Exception:  # nothing was open
            pass
