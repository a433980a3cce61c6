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
CONNECT_TIMEOUT_S = 3.0


def _addresses(bootstrap: str) -> list[tuple[str, int]]:
    """``host:port`` pairs of a bootstrap list (``proto://`` prefixes and ``[v6]`` brackets allowed)."""
    found = []
    for entry in bootstrap.split(","):
        host, _, port = entry.strip().rpartition("://")[2].rpartition(":")
        if host and port.isdigit():
            found.append((host.strip("[]"), int(port)))
    return found


def _refused(bootstrap: str) -> str | None:
    """Why no bootstrap address takes a TCP connection, or ``None`` if one does (or the list is not host:port).

    librdkafka retries a refused connection until its timeout; a plain connect says in milliseconds that nothing
    listens, so an absent broker costs no ten-second wait."""
    reasons = []
    for host, port in _addresses(bootstrap):
        try:
            socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S).close()
            return None
        except OSError as exc:
            reasons.append(exc.strerror or type(exc).__name__)
    return "; ".join(dict.fromkeys(reasons)) or None


def require_topics(settings: Settings, topics: Iterable[str]) -> dict[str, int]:
    """Partition counts of ``topics``; exit 1 with one line when the broker does not answer or one is missing."""
    refused = _refused(settings.bootstrap_servers)
    if refused:
        raise RuntimeFailure(f"cannot reach Kafka at {settings.bootstrap_servers}: {refused}")
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
