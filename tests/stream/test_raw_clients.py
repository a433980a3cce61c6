"""The raw consumer's librdkafka configuration: what the settings bound, librdkafka itself accepts."""

from __future__ import annotations

import pytest
from confluent_kafka import Consumer
from pydantic import ValidationError

from correlator.config import Settings
from correlator.stream.raw_clients import consumer_config


def test_the_prefetch_bound_reaches_librdkafka_which_accepts_it() -> None:
    """The soak found the raw process holding ~190 MB with librdkafka's 64 MiB default prefetch; the setting bounds
    it. Building a consumer checks the property name and range without a broker."""
    settings = Settings(bootstrap_servers="127.0.0.1:1", raw_queued_max_kbytes=2_097_151)
    config = consumer_config(settings)
    assert config["queued.max.messages.kbytes"] == 2_097_151
    assert consumer_config(Settings())["queued.max.messages.kbytes"] == 16_384
    Consumer(config).close()


def test_a_prefetch_bound_librdkafka_would_refuse_is_refused_by_the_settings() -> None:
    with pytest.raises(ValidationError):
        Settings(raw_queued_max_kbytes=2_097_152)
    with pytest.raises(Exception, match="queued.max.messages.kbytes"):
        too_big = {"queued.max.messages.kbytes": 2_097_152}
        Consumer(consumer_config(Settings(bootstrap_servers="127.0.0.1:1"), **too_big))
