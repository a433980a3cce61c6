"""Running the worker process: start-up checks that fail in one line, a bounded stop, an exit code that tells.

Every reason the worker cannot start (web port taken, broker unreachable, topics missing) is found before Faust
starts, so it is one line rather than a page of retries: the CLI probes the port and the broker first, and the
broker and topics are looked at again here, as they may have gone in between. Once running, a failed stage (see
``guard``) or a SIGTERM ends the process within a deadline; the caller turns a failure into exit 1.
"""

from __future__ import annotations

import signal
from typing import Any

import faust
from confluent_kafka import KafkaException

from correlator.adapters import logs
from correlator.config import Settings
from correlator.stream.app import TopicsMissing, create_app
from correlator.stream.guard import STOP_DEADLINE_S, Health, exit_after


FATAL_STOP_S = 5.0


class _Worker(faust.Worker):
    """SIGTERM drains and commits as Faust does, but never for longer than the stop deadline."""

    def _on_sigterm(self) -> None:
        exit_after(STOP_DEADLINE_S, 1)
        super()._on_sigterm()


def run_worker(settings: Settings, health: Health, *, linger_s: float = 3.0, **app_options: Any) -> str | None:
    """Run until stopped; ``None`` after a clean stop, else the one-line reason the worker could not go on."""
    try:
        app = create_app(settings, health=health, **app_options)
    except TopicsMissing as exc:
        return str(exc)
    except KafkaException as exc:
        return f"cannot reach Kafka at {settings.bootstrap_servers}: {exc.args[0].str()}"
    worker = _Worker(
        app,
        loglevel=settings.log_level,
        logging_config=logs.logging_config(settings.log_level),
        quiet=True,
        override_logging=False,
    )

    async def no_commit(*_: Any, **__: Any) -> bool:
        return False

    def fatal(_reason: str) -> None:
        if app.consumer is not None:
            app.consumer.pause_partitions(app.consumer.assignment())
            # stopping closes the failed batch's generator, which acks its events: nothing may be committed now
            app.consumer.commit = no_commit  # type: ignore[method-assign]  # deliberately replaces faust's commit
        app.conf.stream_wait_empty = False  # stop leaves the group at once
        exit_after(linger_s + FATAL_STOP_S, 1)  # the drain would wait for the failed batch: do not wait long
        worker.loop.call_later(linger_s, worker._schedule_shutdown, signal.SIGTERM)

    def freeze_commits() -> None:
        async def no_commit(*_: Any, **__: Any) -> bool:
            return False

        if app.consumer is not None:
            app.consumer.commit = no_commit  # type: ignore[method-assign]

    def thaw_commits() -> None:
        if app.consumer is not None and "commit" in vars(app.consumer):
            del app.consumer.commit

    health.on_fatal = fatal
    health.on_error = freeze_commits
    health.on_recovered = thaw_commits
    try:
        worker.execute_from_commandline()
    except SystemExit as exit_:
        if health.failed is None and exit_.code not in (0, None):
            return f"worker exited with status {exit_.code}"
    return health.failed
