"""Loading the copied log excerpts of ``tests/data/samples`` and running them through a fresh :class:`Ingest`."""

from __future__ import annotations

import json
from pathlib import Path

from correlator.core.events import Event
from correlator.core.ingest.ingest import Ingest, IngestConfig, SourceHint
from correlator.core.ingest.records import ParseError

SAMPLES = Path(__file__).resolve().parents[3] / "data" / "samples"


def reference_cases(family: str) -> dict[str, list[str]]:
    """``# case: <id>`` sections of ``reference/<family>-examples.log``."""
    cases: dict[str, list[str]] = {}
    current: str | None = None
    for line in (SAMPLES / "reference" / f"{family}-examples.log").read_text(encoding="utf-8").split("\n"):
        if line.startswith("# case: "):
            current = line[len("# case: "):].strip()
            cases[current] = []
        elif current is not None:
            cases[current].append(line)
    return cases


def real_sample(name: str) -> list[str]:
    """A real excerpt without its leading ``#`` provenance lines."""
    lines = (SAMPLES / "real" / name).read_text(encoding="utf-8").split("\n")
    return [line for line in lines if not line.startswith("# ")]


def run(
    lines: list[str],
    *,
    hint: SourceHint | None = None,
    shipper_ts: str | None = None,
    tz: str = "UTC",
) -> list[Event | ParseError]:
    """Feed the lines one record per line (as a raw shipper would), or wrapped in Filebeat envelopes with a time.

    ``source_progress`` events (coverage bookkeeping, tested in ``test_ingest``) are left out.
    """
    ingest = Ingest(IngestConfig(tz=tz))
    out: list[Event | ParseError] = []
    for number, line in enumerate(lines, start=1):
        if shipper_ts is None:
            value = line.encode()
        else:
            value = json.dumps({"@timestamp": shipper_ts, "message": line, "host": {"name": "h"}}).encode()
        out += ingest.feed(value, ref=f"case:{number}", hint=hint)
    out += ingest.flush_all()
    return [o for o in out if not (isinstance(o, Event) and o.type == "source_progress")]
