"""``create_app`` only wires: one agent on the events topic, the engine table, the parts sharing their state."""

from __future__ import annotations

from pathlib import Path

import pytest

from correlator.config import Settings
from correlator.stream import app as worker
from correlator.stream.app import Worker, WorkerOptions, create_app


def test_the_app_is_made_of_its_named_parts(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    settings = Settings(bootstrap_servers="127.0.0.1:1", data_dir=tmp_path)
    monkeypatch.setattr(worker, "partition_counts", lambda _settings, names: {name: 3 for name in names})
    app = create_app(settings, options=WorkerOptions(tick_s=2.0))
    parts = app.correlator_worker
    assert isinstance(parts, Worker)
    [agent] = app.agents.values()
    assert agent.name == "correlator.stream.app.correlate"
    assert set(agent.channel.topics) == {settings.topic_events}
    assert app.tables["engine"].partitions == 3 and parts.clusters.table is app.tables["engine"]
    assert parts.processor.clusters is parts.punctuator.clusters is parts.clusters
    assert parts.processor.publisher is parts.punctuator.publisher is parts.publisher
    assert parts.punctuator.liveness is parts.liveness and parts.liveness.raw_ingest is parts.raw_ingest
