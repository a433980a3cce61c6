"""Kafka security settings reach both clients: Faust (aiokafka) and confluent-kafka."""

from __future__ import annotations

import ssl
import subprocess
from pathlib import Path

import faust
import pytest
from faust.transport.drivers.aiokafka import credentials_to_aiokafka_auth

from correlator.config import Settings
from correlator.stream.transport import faust_credentials


@pytest.fixture(scope="module")
def ca_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A throwaway self-signed CA (openssl), so the TLS context really loads a file."""
    folder = tmp_path_factory.mktemp("tls")
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=test-ca",
         "-keyout", str(folder / "ca.key"), "-out", str(folder / "ca.pem")],
        check=True, capture_output=True,
    )
    return folder / "ca.pem"


class TestSecurity:
    def test_sasl_ssl_scram_for_both_clients(self, ca_file: Path) -> None:
        """SASL_SSL with SCRAM-SHA-512 becomes aiokafka's SASL_SSL auth and librdkafka's properties alike."""
        settings = Settings(
            security_protocol="SASL_SSL", sasl_mechanism="SCRAM-SHA-512", sasl_username="correlator",
            sasl_password="s3cret", ssl_cafile=ca_file,
        )
        credentials = faust_credentials(settings)
        assert isinstance(credentials, faust.SASLCredentials)
        auth = credentials_to_aiokafka_auth(credentials)
        assert auth["security_protocol"] == "SASL_SSL" and auth["sasl_mechanism"] == "SCRAM-SHA-512"
        assert auth["sasl_plain_username"] == "correlator" and auth["sasl_plain_password"] == "s3cret"
        assert isinstance(auth["ssl_context"], ssl.SSLContext)
        assert "s3cret" not in repr(credentials)
        assert settings.kafka_security() == {
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.username": "correlator",
            "sasl.password": "s3cret",
            "ssl.ca.location": str(ca_file),
        }

    def test_password_from_a_file_reaches_both_clients(self, tmp_path: Path) -> None:
        """A password file (no secret in argv or env) is read for librdkafka and aiokafka alike."""
        secret = tmp_path / "sasl-password"
        secret.write_text("from-a-file\n")
        settings = Settings(security_protocol="SASL_PLAINTEXT", sasl_mechanism="SCRAM-SHA-256",
                            sasl_username="u", sasl_password_file=secret)
        assert settings.kafka_security()["sasl.password"] == "from-a-file"
        credentials = faust_credentials(settings)
        assert credentials_to_aiokafka_auth(credentials)["sasl_plain_password"] == "from-a-file"
        assert "from-a-file" not in repr(settings)

    def test_tls_only_and_plaintext(self, ca_file: Path) -> None:
        assert isinstance(faust_credentials(Settings(security_protocol="SSL", ssl_cafile=ca_file)), faust.SSLCredentials)
        assert faust_credentials(Settings()) is None
        assert Settings().kafka_security() == {"security.protocol": "PLAINTEXT"}
