"""Before a command talks to Kafka for real: is the broker there, do our topics exist? One line if not.

These run before the heavy imports (Faust takes seconds to import), so a start-up failure costs the probe alone.
"""

from __future__ import annotations

import errno
import socket
from collections.abc import Iterable

from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient

from correlator.cli import RuntimeFailure
from correlator.config import Settings

REACH_TIMEOUT_S = 10.0


def require_topics(settings: Settings, topics: Iterable[str]) -> dict[str, int]:
    """Partition counts of ``topics``; exit 1 with one line when the broker does not answer or one is missing."""
    admin = AdminClient(settings.kafka_client(**{"socket.timeout.ms": int(REACH_TIMEOUT_S * 1000), "log_level": 0}))
    try:
        metadata = admin.list_topics(timeout=REACH_TIMEOUT_S)
    except KafkaException as exc:
        raise RuntimeFailure(f"cannot reach Kafka at {settings.bootstrap_servers}: {exc.args[0].str()}") from None
    names = sorted(set(topics))
    missing = [n for n in names if n not in metadata.topics]
    if missing:
        raise RuntimeFailure(f"topics {', '.join(missing)} do not exist on {settings.bootstrap_servers} "
                             "(run: correlator topics apply)")
    return {n: len(metadata.topics[n].partitions) for n in names}


def require_free_port(host: str, port: int) -> None:
    """Exit 1 with one line when the worker's web port is taken (Faust would retry binding it at length)."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise RuntimeFailure(f"web port {host}:{port} is already in use (set CORRELATOR_WEB_PORT)") from None
