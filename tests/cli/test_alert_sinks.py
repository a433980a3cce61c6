"""Redis only where a sink needs it: Alertmanager alone keeps its own alerts, the incident targets keep theirs in
Redis (nothing listens on the discard port of loopback, so the store is unreachable here)."""

from __future__ import annotations

import pytest

from correlator.cli import RuntimeFailure
from correlator.cli.alerts import build_sinks
from correlator.config import Settings
from correlator.notify.alert_forwarder import AlertForwarder

NO_REDIS = "redis://127.0.0.1:9/0"


def test_alertmanager_alone_runs_without_an_incident_store_and_says_what_it_gives_up(
        capsys: pytest.CaptureFixture[str]) -> None:
    settings = Settings(_env_file=None, alertmanager_url="http://127.0.0.1:9", redis_url=NO_REDIS)  # type: ignore[call-arg]
    sinks = build_sinks(settings)
    assert [type(p) for p in sinks.parts] == [AlertForwarder]
    assert "an alert per incident needs Redis" in capsys.readouterr().err


def test_an_incident_target_still_needs_the_store() -> None:
    settings = Settings(_env_file=None, alertmanager_url="http://127.0.0.1:9",  # type: ignore[call-arg]
                        webhook_url="http://127.0.0.1:9/hook", redis_url=NO_REDIS)
    with pytest.raises(RuntimeFailure, match="CORRELATOR_REDIS_URL"):
        build_sinks(settings)
