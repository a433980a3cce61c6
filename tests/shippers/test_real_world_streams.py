"""The lab's real logs as Kubernetes and other deployments have them, streamed through the real worker.

``correlator replay`` ships each rendered file as it is on disk (decompressed; CRI and Docker framing, JSON layout
records untouched, as a file-tailing shipper does), keyed by host and file, into a real broker; the worker must give
the verdicts ``analyze`` gives on the same files, which tests/offline/test_real_world_inputs.py holds equal to the
stock files' verdicts. Fluent Bit and Vector, the collectors that tail CRI files natively, are neither in Debian 12
nor on PyPI, so no collector process runs here: replay stands in for a tail-and-forward shipper.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from correlator.offline.analyze import analyze
from tests.offline.test_real_world_inputs import LAB, PAIRS, RENDERINGS
from tests.shippers.verdicts import streamed
from tests.support import rerender
from tests.support.worker import Stack, WorkerProcess

pytestmark = [pytest.mark.integration, pytest.mark.slow]

STREAMED = [("slow-disk", "cri-of-ecs"), ("datanode-pause", "docker-json-file"), ("lock-held", "gzip-rotations"),
            ("slow-disk", "dst-fall-back")]


def _offline(path: Path, **options: object) -> list[tuple[str, str, tuple[str, ...]]]:
    return sorted((v.verdict_id, v.root_cause.code, tuple(v.root_cause.hosts))
                  for v in analyze([str(path)], **options))  # type: ignore[arg-type]


@pytest.mark.parametrize(("scenario", "name"), STREAMED, ids=[f"{s}/{n}" for s, n in STREAMED])
def test_the_worker_gives_the_offline_verdicts_on_the_rendering(
    scenario: str, name: str, stack: Stack, workers: list[WorkerProcess], tmp_path: Path
) -> None:
    render, options, under = RENDERINGS[name]
    render(LAB / PAIRS[0] / scenario, tmp_path / "in")
    logs = tmp_path / "in" / under
    expected = _offline(logs, **options)
    assert expected, "the stock run has failed checkpoints; so must the rendering"
    if "tz" in options:
        stack.extra["CORRELATOR_TZ"] = str(options["tz"])
    workers.append(WorkerProcess(stack).start())
    result = stack.cli("replay", str(logs))
    assert result.returncode == 0, result.stderr
    got = streamed(stack.read("verdicts", until=len(expected), timeout_s=120))
    assert sorted(got) == expected
    if "tz" in options:  # the stamps of the repeated hour were placed by order, and the worker says how many
        assert re.search(r'correlator_guessed_times_total\{why="dst_repeated_hour"\} [1-9]', workers[0].metrics())


def test_two_clusters_replayed_from_one_folder_keep_their_own_verdicts(
    stack: Stack, workers: list[WorkerProcess], tmp_path: Path
) -> None:
    """Faults in the same second; replay tags each file with the cluster its HDFS proves, as analyze splits them."""
    rerender.two_clusters(LAB / PAIRS[0] / "slow-disk", LAB / PAIRS[0] / "lock-held", tmp_path / "in")
    expected = _offline(tmp_path / "in")
    assert len({code for _, code, _ in expected}) == 2, expected
    workers.append(WorkerProcess(stack).start())
    result = stack.cli("replay", str(tmp_path / "in"))
    assert result.returncode == 0, result.stderr
    assert "2 clusters told apart by the HDFS their logs name" in result.stderr
    got = streamed(stack.read("verdicts", until=len(expected), timeout_s=120))
    assert sorted(got) == expected
