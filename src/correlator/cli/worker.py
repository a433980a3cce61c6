"""``correlator worker``: the always-on streaming service."""

from __future__ import annotations

import click

from correlator.cli import RuntimeFailure
from correlator.cli.options import EVENT_TIME, INTERPRETATION, KAFKA, TOPICS, settings_options
from correlator.config import Settings

FATAL_LINGER_S = 3.0
"""How long a failed worker stays up, not ready, so /healthz and /metrics can tell why before it exits."""


@click.command()
@settings_options(*KAFKA, *TOPICS, *INTERPRETATION, *EVENT_TIME, "worker_id", "web_host", "web_port", "data_dir",
                  "raw_processes", "state_replication", "log_level")
def worker(settings: Settings) -> None:
    """Run the Faust worker: raw log topics in, events and verdicts out. SIGTERM drains and commits.

    A stage that keeps failing stops the worker with exit 1 (nothing is skipped: a restart resumes from the last
    committed offsets); SIGTERM ends it within 30 s.
    """
    from correlator.cli.preflight import require_free_port, require_topics

    require_free_port(settings.web_host, settings.web_port)
    require_topics(settings, (*settings.raw_topics, settings.topic_events, settings.topic_verdicts,
                              settings.topic_risks, settings.topic_deadletter))
    # Faust creates only the last level of its data directory: the default, .run/worker, in any working directory
    settings.data_dir.mkdir(parents=True, exist_ok=True)

    from correlator.adapters import logs
    from correlator.stream.guard import Health
    from correlator.stream.runner import run_worker

    logs.configure(settings.log_level)
    health = Health()
    failure = run_worker(settings, health, linger_s=FATAL_LINGER_S)
    if failure:
        raise RuntimeFailure(failure)
