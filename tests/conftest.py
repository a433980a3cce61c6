"""Session fixtures: a real Kafka broker and a real redis-server on loopback, or the ones named by the environment.

Set ``CORRELATOR_BOOTSTRAP_SERVERS`` / ``CORRELATOR_REDIS_URL`` to test against running services instead.

Also the ``slow`` marker of the quick tier (``make check``: ``-m "not integration and not slow"``), given here in one
place: see ``SLOW`` below.
"""

from __future__ import annotations

import os
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.fake_slack import FakeSlack
from tests.support.services import KafkaBroker, RedisServer
from tests.support.worker import Stack, WorkerProcess

SLOW: dict[str, str] = {
    # Test modules ("path") or tests ("path::name", every parametrization; "path::Class" its methods), each with why
    # it is slow: what `make check` leaves to `make test`. Every `browser` test is slow as well (it starts Debian's
    # chromium: 2-20 s each). Times measured on a 2-core machine. Benches, subprocess builds and long property runs
    # belong here; the golden, lab and words snapshot checks stay in the quick tier, whatever they add up to.
    "tests/offline/test_bench_smoke.py":
        "runs `correlator bench parse` on 2 MiB corpora against grep and a naive loop, best of 3 rounds (13-22 s)",
    "tests/bench/test_corpus_realism.py":
        "reads every real DataNode log of the lab and generates 60k-line corpora to compare (3-5 s)",
    "tests/offline/test_real_world_inputs.py::test_the_rendering_gives_the_stock_verdicts":
        "a lab run re-rendered and analyzed per case, ~300 cases (40 s in all); the module's other tests stay",
    "tests/test_packaging.py":
        "builds the wheel with pip in a subprocess (5 s)",
    "tests/test_readme_quickstart.py::test_offline_quick_start_works_as_printed":
        "runs the README's offline quick start in a new shell, command by command (2.5 s)",
    "tests/test_architecture.py::test_core_type_checks_strictly":
        "mypy --strict --no-incremental in a subprocess (2 s, growing with the part of src/ it checks)",
    "tests/adapters/test_timeline_plot.py":
        "draws matplotlib figures as PNG and SVG, up to 0.9 s each (4.5 s)",
    "tests/stream/test_raw_process.py::test_a_child_that_keeps_dying_fails_the_stage_with_its_exit_status":
        "kills a raw-ingest child process until its respawn budget is spent (2.4 s)",
    "tests/core/ingest/test_bursts.py::test_bursts_read_from_bytes_equal_the_parsers_path":
        "a 30k-line bad day read both ways, per write reader (2.6 s)",
    "tests/adapters/test_write_readers.py::test_native_reader_finds_and_reads_what_the_stdlib_reader_does":
        "property test, 1500 examples (3 s)",
    "tests/adapters/test_write_readers.py::test_native_reader_sees_lines_of_one_second_as_the_stdlib_reader_does":
        "property test, 1000 examples (2 s)",
    "tests/adapters/test_write_readers.py::test_native_reader_times_and_sizes_pairs_as_the_stdlib_reader_does":
        "property test, 1500 examples (3 s)",
    "tests/adapters/test_write_readers.py::test_native_reader_runs_bursts_as_the_stdlib_reader_does":
        "property test, 600 examples (3 s)",
    "tests/adapters/test_write_readers.py::"
    "test_with_the_native_reader_blocks_decide_writes_as_lines_do_out_of_stamp_order":
        "property test, 300 examples, each decided both ways (2.5 s)",
    "tests/core/explain/test_risk.py::test_a_flat_noisy_series_raises_no_risk":
        "property test, 150 series of up to 200 checkpoints each (6-10 s)",
    "tests/core/explain/test_risk.py::test_without_a_timeout_a_flat_noisy_series_raises_no_risk":
        "property test, 150 series of up to 200 checkpoints each, judged against their spacing (12 s)",
    "tests/test_image_install.py":
        "pip installs the image's runtime lock into a fresh virtualenv (50 s); it needs no service, so `make test` "
        "runs it beside the other tests without services",
    "tests/core/ingest/test_write_batch.py::test_blocks_decide_writes_as_lines_do":
        "property test, 200 examples per pairing (2 s)",
    "tests/core/ingest/test_write_batch.py::"
    "test_blocks_decide_writes_as_lines_do_when_threads_log_a_little_out_of_stamp_order":
        "property test, 200 examples per pairing (1.7 s)",
    "tests/core/ingest/test_write_batch.py::test_blocks_decide_writes_as_lines_do_when_a_block_id_comes_again":
        "property test, 200 examples per pairing (2 s)",
    "tests/core/ingest/test_ingest.py::TestNeverRaises":
        "property tests, 200-300 examples each (1.4 s)",
    "tests/stream/test_state_properties.py::test_ingest_and_snapshots_accept_every_record":
        "property test, 150 examples each through an ingest and its snapshots (2.3 s)",
}
"""What the quick tier leaves out, and why. An entry naming a test its collected module no longer has warns: a renamed
test must be renamed here too, or it slips back into the quick tier."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the tests of ``SLOW`` and every ``browser`` test ``slow``."""
    modules: dict[str, object] = {}
    for item in items:
        path = item.nodeid.split("::", 1)[0]
        name = item.nodeid.split("[", 1)[0]
        modules[path] = getattr(item, "module", None)
        if any(entry in SLOW for entry in (path, name, name.rsplit("::", 1)[0])) or item.get_closest_marker("browser"):
            item.add_marker(pytest.mark.slow)
    for entry in SLOW:
        path, _, name = entry.partition("::")
        if name and path in modules and not hasattr(modules[path], name.split("::", 1)[0]):
            warnings.warn(pytest.PytestWarning(f"tests/conftest.py SLOW names {entry}, which is not in its module"),
                          stacklevel=1)


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
