"""Session fixtures: a real Kafka broker and a real redis-server on loopback, or the ones named by the environment.

Set ``CORRELATOR_BOOTSTRAP_SERVERS`` / ``CORRELATOR_REDIS_URL`` to test against running services instead.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.fake_slack import FakeSlack
from tests.support.services import KafkaBroker, RedisServer
from tests.support.worker import Stack, WorkerProcess


@pytest.fixture(scope="session")
def kafka_bootstrap() -> Iterator[str]:
    """Bootstrap servers of a real broker, started for this session unless the environment names one."""
    given = os.environ.get("CORRELATOR_BOOTSTRAP_SERVERS")
    if given:
        yield given
        return
    broker = KafkaBroker()
    broker.start()
    try:
        yield broker.bootstrap
    finally:
        broker.stop()


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """URL of a real redis-server, started for this session unless the environment names one."""
    given = os.environ.get("CORRELATOR_REDIS_URL")
    if given:
        yield given
        return
    server = RedisServer()
    server.start()
    try:
        yield server.url
    finally:
        server.stop()


@pytest.fixture
def unique() -> str:
    """A short random suffix that keeps topics, groups and Redis keys of one test apart from every other."""
    return uuid.uuid4().hex[:10]


@pytest.fixture
def stack(kafka_bootstrap: str, unique: str, tmp_path: Path) -> Stack:
    """A streaming stack of topics private to one test, created from ``topics/``."""
    s = Stack(kafka_bootstrap, unique, tmp_path)
    s.apply_topics()
    return s


@pytest.fixture
def workers(stack: Stack) -> Iterator[list[WorkerProcess]]:
    """Worker processes a test starts; each is stopped (SIGTERM, drained) afterwards."""
    started: list[WorkerProcess] = []
    yield started
    for worker in started:
        worker.stop()


@pytest.fixture
def slack(request: pytest.FixtureRequest) -> Iterator[FakeSlack]:
    """The local Slack Web API double, accepting the token named ``TOKEN`` in the calling test module."""
    fake = FakeSlack(token=request.module.TOKEN).start()
    yield fake
    fake.stop()
