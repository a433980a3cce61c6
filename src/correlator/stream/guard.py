"""What the worker does when a stage fails: retry a few times from its last snapshot, then stop — never skip.

A batch is acknowledged (and its offsets later committed) only when the stage asks for the next one. A stage that
fails keeps its batch unacknowledged, so stopping the process loses nothing: the supervisor restarts the worker,
which resumes from the committed offsets and the last snapshot. Limping on past a failed batch would skip it.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from correlator.stream.metrics import WorkerMetrics

log = logging.getLogger("correlator.worker")

STOP_DEADLINE_S = 25.0
"""A stop that has not finished by then ends the process (no commit: the next start redoes the last batch)."""


@dataclass
class Health:
    """Why the worker can no longer work (``None`` while it can), and the callback that ends the process."""

    failed: str | None = None
    on_fatal: Callable[[str], None] | None = None
    on_error: Callable[[], None] | None = None
    """Called at a stage's first error: Faust acknowledges a batch's records while collecting it, so from then on
    no offset may be committed (a restart must see the failed batch again)."""
    on_recovered: Callable[[], None] | None = None
    """Called when a retry succeeded: the batch is persisted, committing is safe again."""

    def fail(self, reason: str) -> None:
        if self.failed is not None:
            return
        self.failed = reason
        log.critical("worker stops: %s", reason)
        if self.on_fatal is not None:
            self.on_fatal(reason)


@dataclass
class Guard:
    """Runs one batch of a stage with bounded retries; each retry first resets the stage to its snapshot."""

    health: Health
    metrics: WorkerMetrics
    retries: int = 3
    backoff_s: float = 0.5

    async def run(self, stage: str, work: Callable[[], Awaitable[None]], reset: Callable[[], None]) -> None:
        for attempt in range(self.retries + 1):
            if self.health.failed is not None:
                break
            try:
                await work()
                if attempt and self.health.on_recovered is not None:
                    self.health.on_recovered()
                return
            except Exception as exc:
                if self.health.on_error is not None:
                    self.health.on_error()
                self.metrics.stage_errors.labels(stage).inc()
                reason = f"{stage} stage failed: {type(exc).__name__}: {str(exc)[:200]}"
                log.error("%s (attempt %d of %d)", reason, attempt + 1, self.retries + 1, exc_info=exc)
                reset()
                if attempt == self.retries:
                    self.metrics.crashes.labels(stage).inc()
                    self.health.fail(reason)
                else:
                    await asyncio.sleep(self.backoff_s * 2**attempt)
        await hold()


async def hold() -> None:
    """Keep the failed batch unacknowledged until the process ends."""
    await asyncio.Event().wait()


def exit_after(seconds: float, code: int) -> None:
    """Ends the process after ``seconds`` unless it ended by itself: a drain that waits on a failed batch, or a
    broker that went away, must not keep a stopping worker alive."""

    def expire() -> None:
        log.error("worker did not stop within %.0f s; exiting without a final commit", seconds)
        logging.shutdown()
        os._exit(code)

    timer = threading.Timer(seconds, expire)
    timer.daemon = True
    timer.start()
