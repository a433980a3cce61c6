"""The fault suite prints one table at the end: per fault, records in, verdicts, duplicates, dead letters, recovery."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.faults.harness import ROWS, table
from tests.support.worker import Stack, WorkerProcess


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if ROWS:
        terminalreporter.section("fault suite")
        for line in table():
            terminalreporter.write_line(line)


@pytest.fixture
def started() -> list[WorkerProcess]:
    """Workers a test started; each is stopped (by its pid) afterwards."""
    workers: list[WorkerProcess] = []
    yield workers
    for worker in workers:
        worker.stop(timeout_s=40)


def make_stack(bootstrap: str, unique: str, tmp_path: Path, **extra: str) -> Stack:
    stack = Stack(bootstrap, unique, tmp_path, extra=dict(extra))
    stack.apply_topics()
    return stack
