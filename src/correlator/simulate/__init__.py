"""Scenario generators: realistic Flink and Hadoop log files for a named incident (golden tests, demo, benchmarks)."""

from __future__ import annotations

from pathlib import Path

from correlator.simulate.envelope import to_envelopes
from correlator.simulate.scenarios import SCENARIOS, Scenario
from correlator.simulate.traffic import build


class UnknownScenario(ValueError):
    """A scenario name that is not in :data:`SCENARIOS`."""


def generate(name: str, out_dir: str | Path, *, scale: int = 1, seed: int = 0) -> list[Path]:
    """Write the scenario's log files under ``out_dir``; the same name, scale and seed give the same bytes."""
    scenario = SCENARIOS.get(name)
    if scenario is None:
        raise UnknownScenario(f"unknown scenario {name!r}; known: {', '.join(sorted(SCENARIOS))}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    cluster = scenario.build(seed, scale)
    if name == "envelopes":
        return to_envelopes(cluster, out)
    return build(cluster, out)


__all__ = ["SCENARIOS", "Scenario", "UnknownScenario", "generate"]
