"""Blocking librdkafka calls with a deadline of our own, for the calls whose own timeout is not kept."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from confluent_kafka import Producer

STUCK_MARGIN_S = 10.0
_ABANDONED: list[tuple[Producer, threading.Event]] = []
"""Producers whose transactional call had not returned: destroying one would block on that call, so each is kept
until its call returns (the event is set), then let go."""


def abandon(producer: Producer, stuck: TransactionStuck) -> None:
    """Keep ``producer`` while its stuck call runs; let go of those whose call has returned since."""
    _ABANDONED[:] = [(p, done) for p, done in _ABANDONED if not done.is_set()]
    _ABANDONED.append((producer, stuck.returned))


def abandoned() -> int:
    """Producers still kept for a call that has not returned."""
    return sum(1 for _, done in _ABANDONED if not done.is_set())


class TransactionStuck(RuntimeError):
    """A transactional call outlived its own timeout. librdkafka (through 2.16 at least, its issue 5456) never times
    out a coordinator request that waits on a broker that went down, so ``send_offsets_to_transaction`` can block
    for ever across a broker restart. The loop then gives up that producer and consumer and starts again: the new
    producer's ``init_transactions`` fences the old transactional id and aborts its open transaction."""

    def __init__(self, message: str, returned: threading.Event) -> None:
        super().__init__(message)
        self.returned = returned
        """Set once the stuck call does return."""


Step = tuple[str, Callable[[], Any], float]
"""One librdkafka call of a sequence: its name, the call, and the timeout it was given."""


class Bounded:
    """Blocking librdkafka calls run in order on a thread of their own; ``result`` waits for them and raises
    ``TransactionStuck`` once the call under way outlives its own timeout by ``margin_s``. Each call's deadline
    counts from its own start: a hang in the first is caught at its deadline, not at the sum of all of them."""

    def __init__(self, steps: list[Step], margin_s: float = STUCK_MARGIN_S) -> None:
        self.margin_s = margin_s
        self.done = threading.Event()
        self._box: dict[str, Any] = {}
        self._current = (steps[0][0], steps[0][2], time.monotonic() + steps[0][2] + margin_s)

        def run() -> None:
            try:
                for name, call, timeout_s in steps:
                    self._current = (name, timeout_s, time.monotonic() + timeout_s + margin_s)
                    self._box["result"] = call()
            except BaseException as exc:  # handed to the caller's thread
                self._box["error"] = exc
            finally:
                self.done.set()

        threading.Thread(target=run, name=f"txn-{steps[0][0]}", daemon=True).start()

    def result(self) -> Any:
        while not self.done.wait(max(0.0, self._current[2] - time.monotonic())):
            name, timeout_s, deadline = self._current
            if time.monotonic() >= deadline:
                raise TransactionStuck(f"{name} did not return within {timeout_s + self.margin_s:.0f} s "
                                       f"(its timeout was {timeout_s:.0f} s); starting a new producer", self.done)
        if "error" in self._box:
            raise self._box["error"]
        return self._box.get("result")


def bounded(name: str, call: Callable[[], Any], timeout_s: float, margin_s: float = STUCK_MARGIN_S) -> Any:
    """Run a blocking librdkafka call on a thread of its own and wait for it (see ``Bounded``)."""
    return Bounded([(name, call, timeout_s)], margin_s).result()
