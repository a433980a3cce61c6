"""A tiny run of ``correlator bench soak`` on the real broker: it feeds a worker and samples its memory (never a
full ten-minute run here; that is ``make soak``)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from correlator.cli import cli
from tests.support.services import ROOT

pytestmark = pytest.mark.integration


def test_a_soak_too_short_to_judge_says_so_and_fails(kafka_bootstrap: str) -> None:
    result = CliRunner().invoke(cli, ["bench", "soak", "--bootstrap-servers", kafka_bootstrap, "--minutes", "0.25",
                                      "--rate", "500"])
    assert result.exit_code == 1, result.output
    samples = [line for line in result.output.splitlines() if "produced" in line and "RSS" in line]
    assert samples and all(int(line.split("RSS")[1].split()[0]) > 0 for line in samples), result.output
    assert "too short to judge" in result.output


def test_the_soak_stream_has_a_jobmanager_on_the_datanodes_clock() -> None:
    """Its checkpoints parse as completed checkpoints stamped like the DataNode line before them, so the engine
    evicts HDFS evidence behind Flink as on a real cluster."""
    import itertools

    from correlator.bench.soak import CHECKPOINT_EVERY, _stream
    from correlator.core.events import Event
    from correlator.core.ingest.ingest import Ingest, IngestConfig

    records = list(itertools.islice(_stream(2), CHECKPOINT_EVERY + 2))
    flink = [r for r in records if r[0]]
    assert len(flink) == 2 and not any(r[0] for r in records[:CHECKPOINT_EVERY])
    ingest = Ingest(IngestConfig(default_cluster="soak"))
    found = [e for _, key, value, headers in flink
             for e in ingest.feed(value, ref="soak@1", key=key, headers=dict(headers)) if isinstance(e, Event)]
    found += [e for e in ingest.flush_all() if isinstance(e, Event)]
    types = {e.type for e in found}
    assert {"checkpoint_triggered", "checkpoint_completed"} <= types, types
    assert flink[0][2][:23] == records[CHECKPOINT_EVERY - 1][2][:23]
