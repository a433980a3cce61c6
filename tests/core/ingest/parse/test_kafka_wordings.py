"""The Kafka wordings as the lab's real daemons wrote them: the broker's ``server.log`` (Apache Kafka 3.9.1, KRaft)
and, in the TaskManager's log, the Kafka client's producer configuration and the exactly-once sink's committer: Flink
1.20.1 with flink-connector-kafka 3.4.0-1.20 and kafka-clients 3.4.0 (which logs the configuration as
``ProducerConfig``), Flink 2.1.1 with 5.0.0-2.1 and kafka-clients 4.2.0 (as ``AbstractConfig``, the committable
printed with its producer); each truth.json names the versions.

Every row of the Kafka wording tables must take a real record of its wording (the first one in the captured logs;
the row is asked, and the dispatch picks it), be kept by the prefilter, and become the event the row names; each run's
events must agree with its truth.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from sample_cases import run

from correlator.core.events import Event, TransactionAborted, TransactionCommitFailed, TransactionSetting
from correlator.core.ingest.parse.header import parse_header
from correlator.core.ingest.parse.kafka import (
    BROKER_DISPATCH,
    BROKER_RULES,
    CLIENT_DISPATCH,
    CLIENT_RULES,
    broker_record,
)
from correlator.core.ingest.parse.wording import Handler, Wording
from correlator.core.ingest.prefilter import KAFKA_TRIGGERS, NOTHING, ReScanner
from correlator.offline.analyze import collect_events

LAB = Path(__file__).resolve().parents[4] / "tests" / "data" / "lab"
RUNS = sorted(p.parent for p in LAB.glob("*/*/truth.json") if "kafka" in json.loads(p.read_text()))
RECORD_START = re.compile(r"^(?:\[)?\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}")


def _records(path: Path) -> list[list[str]]:
    records: list[list[str]] = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        if RECORD_START.match(line) or not records:
            records.append([line])
        else:
            records[-1].append(line)
    return records


def _first_record(phrase: str) -> list[str] | None:
    for run_dir in RUNS:
        for log in sorted([*run_dir.glob("flink-*-taskexecutor-*.log"), *run_dir.glob("*/server.log")]):
            for record in _records(log):
                if phrase in "\n".join(record):
                    return record
    return None


@pytest.mark.parametrize("rule", BROKER_RULES + CLIENT_RULES, ids=lambda r: r.phrase)
def test_each_row_reads_a_real_record_of_its_wording(rule: Wording[Handler]) -> None:
    record = _first_record(rule.phrase)
    assert record is not None, f"no captured record holds {rule.phrase!r}: a row must read a wording a real log shows"
    text = "\n".join(record)
    broker = broker_record(record[0])
    if broker is not None:  # the broker's own layout: its message is all that is read
        message, whole, dispatch = broker["msg"].strip(), None, BROKER_DISPATCH
    else:
        header = parse_header(record[0])
        assert header is not None
        message, whole, dispatch = header.message.strip(), text, CLIENT_DISPATCH
    assert rule.takes(message, whole), "the row does not take its own wording"
    assert dispatch.first(message, whole) is rule, "an earlier row takes this wording"
    assert ReScanner().classify(record[0]) != NOTHING
    events = [e for e in run([text]) if isinstance(e, Event)]
    assert any(isinstance(e, rule.emits) for e in events), record[0]


def test_the_prefilter_keeps_every_kafka_phrase() -> None:
    assert set(KAFKA_TRIGGERS) == {r.phrase for r in BROKER_RULES + CLIENT_RULES}


@pytest.mark.parametrize("run_dir", RUNS, ids=[f"{p.parent.name}/{p.name}" for p in RUNS])
def test_each_runs_events_agree_with_its_truth(run_dir: Path) -> None:
    truth = json.loads((run_dir / "truth.json").read_text())["kafka"]
    events, errors = collect_events([str(run_dir)])
    aborted = [(e.transactional_id, e.at) for e in events if isinstance(e, TransactionAborted)]
    assert aborted == [(a["transactional_id"], a["at"]) for a in truth["aborted"]]
    assert all(e.role == "kafka" and e.host == "lab-kafka" for e in events if isinstance(e, TransactionAborted))
    settings = [e for e in events if isinstance(e, TransactionSetting)]
    assert settings and {e.timeout_ms for e in settings} == {truth["transaction_timeout_ms"]}
    assert {e.prefix for e in settings} == {truth["transactional_id_prefix"]}
    failed = [e for e in events if isinstance(e, TransactionCommitFailed)]
    assert len(failed) == len(truth.get("commit_failed", [])), [e.message[:120] for e in failed]
