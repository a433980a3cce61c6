"""What every fault test shares: the clean-run expectation, the replay, the verdict check and the report table."""

from __future__ import annotations

import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from correlator.offline.analyze import analyze
from correlator.simulate import generate
from tests.support.worker import Stack, WorkerProcess, duplicates, latest

SCENARIOS = {"fault-a": "recurring", "fault-b": "two-jobs"}
"""Two clusters, six failed checkpoints (the clean run: analyze, which the worker equals — tests/stream)."""


@dataclass
class Row:
    fault: str
    records_in: int | None
    """Raw records the fault's replay produced (``None``: not counted by that test)."""
    verdicts: int
    expected: int
    duplicates: int
    dead_letters: dict[str, int] = field(default_factory=dict)
    recovery_s: float | None = None
    revised: int | None = None
    """Verdict records with a revision above 0 (``None``: not counted by that test)."""


ROWS: list[Row] = []


def table() -> list[str]:
    head = (f"{'fault':<34} {'records in':>10} {'verdicts':>9} {'dups':>5} {'revised':>7} {'recovery s':>10}  "
            "dead letters by reason")
    lines = [head, "-" * len(head)]
    for r in ROWS:
        dead = ", ".join(f"{k} {v}" for k, v in sorted(r.dead_letters.items())) or "-"
        recovery = f"{r.recovery_s:.1f}" if r.recovery_s is not None else "-"
        revised = str(r.revised) if r.revised is not None else "-"
        records = str(r.records_in) if r.records_in is not None else "-"
        lines.append(f"{r.fault:<34} {records:>10} {f'{r.verdicts}/{r.expected}':>9} {r.duplicates:>5} "
                     f"{revised:>7} {recovery:>10}  {dead}")
    return lines


def scenarios(tmp_path: Path) -> tuple[dict[str, Path], set[tuple[str, str]], int]:
    """Log directories by cluster, the clean run's (verdict id, code) pairs, and how many lines they hold."""
    dirs: dict[str, Path] = {}
    expected: set[tuple[str, str]] = set()
    lines = 0
    for cluster, name in SCENARIOS.items():
        out = tmp_path / "logs" / cluster
        generate(name, out)
        dirs[cluster] = out
        expected |= {(v.verdict_id, v.root_cause.code) for v in analyze([str(out)], cluster=cluster)}
        lines += sum(sum(1 for _ in f.open("rb")) for f in out.rglob("*") if f.is_file())
    return dirs, expected, lines


def replay_all(stack: Stack, dirs: dict[str, Path]) -> None:
    for cluster, path in dirs.items():
        stack.replay(path, cluster=cluster)


def in_background(target: Any, *args: Any) -> threading.Thread:
    failures: list[BaseException] = []

    def run() -> None:
        try:
            thread.result = target(*args)  # type: ignore[attr-defined]
        except BaseException as exc:  # noqa: BLE001 - reported by the joiner
            failures.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.failures = failures  # type: ignore[attr-defined]
    thread.start()
    return thread


def join(thread: threading.Thread, timeout_s: float = 180) -> None:
    thread.join(timeout_s)
    assert not thread.is_alive(), "background step did not finish"
    assert not thread.failures, thread.failures  # type: ignore[attr-defined]


def verdicts(stack: Stack, expected: set[tuple[str, str]],
             timeout_s: float = 120) -> tuple[list[tuple[str, str]], int, int]:
    """(verdict id, code) of the latest revision of each verdict, the duplicated records, the revised records."""
    records = stack.read("verdicts", until=len(expected), timeout_s=timeout_s)
    got = [(r["verdict_id"], r["root_cause"]["code"]) for r in latest(records)]
    return got, duplicates(records), sum(1 for r in records if int(r.get("revision") or 0) > 0)


def wait_until_events_flow(worker: WorkerProcess, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if 'correlator_records_in_total{topic="correlator.events.' in worker.metrics():
                return
        except OSError:
            pass
        time.sleep(0.05)
    raise AssertionError(f"no events consumed within {timeout_s}s: {worker.tail()}")


def wait_ready(worker: WorkerProcess, timeout_s: float = 120) -> float:
    started = time.monotonic()
    while time.monotonic() - started < timeout_s:
        if worker.health().get("ready"):
            return time.monotonic() - started
        assert worker.process is not None and worker.process.poll() is None, worker.tail()
        time.sleep(0.2)
    raise AssertionError(f"not ready again within {timeout_s}s: {worker.tail()}")


def dead_letters_by_reason(stack: Stack, at_least: int, timeout_s: float = 120) -> tuple[Counter[str], list[dict]]:
    records = stack.read("deadletter", until=at_least, timeout_s=timeout_s)
    return Counter(r["reason"] for r in records), records
