"""Kafka security settings for the Faust (aiokafka) side; confluent-kafka clients use ``Settings.kafka_security``."""

from __future__ import annotations

import ssl

import faust
from faust.types.auth import CredentialsT

from correlator.config import Settings


def ssl_context(settings: Settings) -> ssl.SSLContext | None:
    if not settings.security_protocol.endswith("SSL"):
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
