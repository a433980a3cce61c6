"""What every verdict sink is (the Slack bot, the Alertmanager forwarder, the pager, several of them as one): the
feed (``slack_feed``) hands each verdict to ``deliver`` and commits its offset only once the sink has it."""

from __future__ import annotations

import os
import socket
import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any, Protocol


class Outcome(Enum):
    POSTED = "posted"
    DUPLICATE = "duplicate"
    SKIPPED = "skipped"
    """Not a verdict this sink can group (bad JSON, no id, no cause): logged and passed over."""
    SUPPRESSED = "suppressed"
    """A verdict the alert policy does not send (its code does not alert, its failure is too old)."""


@dataclass(slots=True)
class Stats:
    posted: int = 0
    duplicates: int = 0
    skipped: int = 0
    suppressed: int = 0
    retries: int = 0
    timelines: int = 0
    """Timeline PNGs attached to threads (the Slack bot's)."""

    def count(self, outcome: Outcome) -> None:
        if outcome is Outcome.POSTED:
            self.posted += 1
        elif outcome is Outcome.DUPLICATE:
            self.duplicates += 1
        elif outcome is Outcome.SUPPRESSED:
            self.suppressed += 1
        else:
            self.skipped += 1


class SinkConfig(Protocol):
    @property
    def sweep_every_s(self) -> float: ...


class VerdictSink(Protocol):
    """One interface for every sink: ``deliver`` returns ``None`` while the sink cannot take the verdict yet (the
    feed holds it and retries, consuming nothing further); ``sweep`` does the time-driven work (resolving quiet
    incidents) and returns how much it did."""

    @property
    def stats(self) -> Stats: ...

    @property
    def config(self) -> SinkConfig: ...

    def deliver(self, verdict: Mapping[str, Any], stop: threading.Event) -> Outcome | None: ...

    def sweep(self) -> int: ...


def default_owner() -> str:
    """Who holds an incident's lease: this process, told apart from its replicas and restarts."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def wall_ms() -> int:
    return time.time_ns() // 1_000_000
