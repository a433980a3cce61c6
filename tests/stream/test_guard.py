"""The stage guard: bounded retries from the snapshot, commits frozen while a batch fails, then a stop."""

from __future__ import annotations

import asyncio

from correlator.stream.guard import Guard, Health
from correlator.stream.metrics import WorkerMetrics


def test_a_transient_failure_is_retried_and_commits_resume() -> None:
    calls: list[str] = []
    health = Health(on_error=lambda: calls.append("freeze"), on_recovered=lambda: calls.append("thaw"))
    attempts = iter([RuntimeError("once"), None])

    async def work() -> None:
        if (exc := next(attempts)) is not None:
            raise exc

    guard = Guard(health, WorkerMetrics(), backoff_s=0)
    asyncio.run(guard.run("ingest", work, lambda: calls.append("reset")))
    assert calls == ["freeze", "reset", "thaw"] and health.failed is None


def test_a_lasting_failure_stops_the_worker_and_holds_the_batch() -> None:
    fatal: list[str] = []
    health = Health(on_fatal=fatal.append)
    metrics = WorkerMetrics()

    async def work() -> None:
        raise ValueError("always")

    async def run() -> None:
        guard = Guard(health, metrics, retries=2, backoff_s=0)
        task = asyncio.ensure_future(guard.run("correlate", work, lambda: None))
        await asyncio.sleep(0.05)
        assert not task.done(), "the failed batch must stay unacknowledged"
        task.cancel()

    asyncio.run(run())
    assert fatal == ["correlate stage failed: ValueError: always"] and health.failed == fatal[0]
    assert metrics.crashes.labels("correlate")._value.get() == 1
    assert metrics.stage_errors.labels("correlate")._value.get() == 3
