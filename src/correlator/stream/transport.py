"""How every Faust app of correlator reaches Kafka: brokers, security, and byte-valued topics.

The worker and the benchmark's baseline agents are built here alike, so a baseline differs from the worker only in
what its agents do. confluent-kafka clients get the same security settings from ``Settings.kafka_security``.
"""

from __future__ import annotations

import ssl

from typing import Any

import faust
from faust.types.auth import CredentialsT

from correlator.config import Settings


def ssl_context(settings: Settings) -> ssl.SSLContext | None:
    if not settings.security_protocol.upper().endswith("SSL"):
        return None
    context = ssl.create_default_context(cafile=str(settings.ssl_cafile) if settings.ssl_cafile else None)
    if settings.ssl_certfile:
        context.load_cert_chain(
            str(settings.ssl_certfile), str(settings.ssl_keyfile) if settings.ssl_keyfile else None
        )
    return context


def faust_credentials(settings: Settings) -> CredentialsT | None:
    """The same security settings as the confluent-kafka clients, in Faust's terms; ``None`` means PLAINTEXT."""
    protocol = settings.security_protocol.upper()
    context = ssl_context(settings)
    if protocol.startswith("SASL"):
        return faust.SASLCredentials(
            username=settings.sasl_username,
            password=settings.sasl_password_value(),
            mechanism=settings.sasl_mechanism or "PLAIN",
            ssl_context=context,
        )
    if protocol == "SSL" and context is not None:
        return faust.SSLCredentials(context)
    return None


SESSION_TIMEOUT_S = 10.0
"""As the raw consumers' (``raw_clients.SESSION_TIMEOUT_MS``): a dead worker's events partitions move on after 10 s,
not Faust's 60. aiokafka heartbeats from the event loop, which never blocks for seconds (decisions and snapshots
take milliseconds)."""
HEARTBEAT_S = 1.0


def faust_app(settings: Settings, **options: Any) -> faust.App:
    """A Faust app on the configured brokers and security; tables live in memory, rebuilt from their changelogs."""
    return faust.App(
        settings.worker_id,
        broker=[f"kafka://{server}" for server in settings.bootstrap_servers.split(",")],
        broker_credentials=faust_credentials(settings),
        store="memory://",
        datadir=str(settings.data_dir),
        table_standby_replicas=0,
        consumer_auto_offset_reset="earliest",
        broker_session_timeout=SESSION_TIMEOUT_S,
        broker_heartbeat_interval=HEARTBEAT_S,
        **options,
    )


def bytes_topic(app: faust.App, *names: str) -> faust.TopicT:
    """Keys and values stay bytes: decoding is the core's job (and its errors are data, not exceptions)."""
    return app.topic(*names, key_type=bytes, value_type=bytes, key_serializer="raw", value_serializer="raw")


def raw_logs_topic(app: faust.App, settings: Settings) -> faust.TopicT:
    return bytes_topic(app, *settings.raw_topics)


def read_committed() -> None:
    """Faust's worker consumer reads committed records only (events come in ingest transactions; an aborted batch
    is never seen). Faust itself asks for this only in its own exactly-once mode, which would make every Faust send
    transactional too; so its consumer factory is wrapped once per process instead."""
    from faust.transport.drivers import aiokafka as driver

    thread = driver.AIOKafkaConsumerThread
    if getattr(thread, "_correlator_read_committed", False):
        return
    create = thread._create_worker_consumer

    def create_read_committed(self: Any, transport: Any) -> Any:
        consumer = create(self, transport)
        consumer._isolation_level = "read_committed"  # read by the fetcher aiokafka builds in start()
        return consumer

    thread._create_worker_consumer = create_read_committed  # type: ignore[method-assign]
    thread._correlator_read_committed = True  # type: ignore[attr-defined]
