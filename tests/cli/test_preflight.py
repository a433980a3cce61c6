"""The broker probe reads every bootstrap form librdkafka accepts, and says at once when nothing listens."""

from __future__ import annotations

import socket

from correlator.cli.preflight import _addresses, _refused


def test_bootstrap_forms() -> None:
    assert _addresses("SASL_SSL://b1:9093, [::1]:9092,kafka,b2:x") == [("b1", 9093), ("::1", 9092)]


def test_a_closed_port_is_refused_and_a_listening_one_is_not() -> None:
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        open_port = listening.getsockname()[1]
        with socket.socket() as closed:
            closed.bind(("127.0.0.1", 0))
            closed_port = closed.getsockname()[1]  # bound, never listening: a connect is refused
            assert _refused(f"127.0.0.1:{closed_port}") == "Connection refused"
            assert _refused(f"127.0.0.1:{closed_port},127.0.0.1:{open_port}") is None
    assert _refused("no-port-given") is None, "a list we cannot read is left to librdkafka"
