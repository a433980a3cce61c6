"""S3 server access log records, held against the real lines of the lab's object-store run.

The lines are the ones `deploy/lab/objectstore.py` captured (Flink 1.20.1 with flink-s3-fs-hadoop 1.20.1, whose S3A
is Hadoop 3.3.4 on AWS SDK 1.12; the records written by the lab's fault proxy in front of s3proxy 2.4.1, in the
documented access log format): `tests/data/lab/s3-1.20.1/s3-throttling/s3-access-lab-s3.log`.
"""

from __future__ import annotations

import json
from pathlib import Path

from sample_cases import run

from correlator.core.events import (
    HELD_STORE_REQUEST_MS,
    OBJECT_STORE_ROLE,
    SLOW_STORE_REQUEST_MS,
    ObjectStoreRequest,
    iso_ms,
)
from correlator.core.ingest.multiline import is_record_start
from correlator.core.ingest.parse.s3_access import is_record
from correlator.core.ingest.sources import sniff_family

RUN = Path(__file__).resolve().parents[3] / "data" / "lab" / "s3-1.20.1" / "s3-throttling"
LINES = (RUN / "s3-access-lab-s3.log").read_text().splitlines()
TRUTH = json.loads((RUN / "truth.json").read_text())


def _first(words: str) -> str:
    return next(line for line in LINES if words in line)


def test_the_run_is_the_versions_the_tests_name() -> None:
    assert TRUTH["flink"] == "1.20.1" and TRUTH["s3_filesystem"] == "flink-s3-fs-hadoop 1.20.1"
    assert "\"Hadoop 3.3.4, aws-sdk-java/1.12." in _first(" 503 SlowDown ")  # the user agent: S3A and its SDK


def test_a_throttled_put_is_an_object_store_request() -> None:
    line = _first(" 503 SlowDown ")
    [event] = run([line])
    assert isinstance(event, ObjectStoreRequest)
    assert (event.bucket, event.operation, event.status, event.error_code) == (
        "lab-checkpoints", "REST.PUT.OBJECT", 503, "SlowDown")
    assert event.key is not None and event.key.startswith(f"{TRUTH['fault']['prefix']}/")
    assert f"/{event.key} HTTP/1.1" in line and event.request_id and event.request_id in line
    assert (event.host, event.role) == ("lab-checkpoints", OBJECT_STORE_ROLE)
    stamp = line[line.index("[") + 1:line.index("]")]  # 05/Dec/2026:08:39:12 +0000
    day, month, rest = stamp.split("/")
    assert iso_ms(event.ts_ms) == f"{rest[:4]}-12-{day}T{rest[5:13]}.000Z" and month == "Dec"


def test_a_quick_successful_request_gives_no_event_but_is_read() -> None:
    ok = [line for line in LINES if " REST.PUT.OBJECT " in line and '" 200 - ' in line]
    assert ok and is_record(ok[0])
    assert not [e for e in run(ok) if isinstance(e, ObjectStoreRequest) and (e.total_ms or 0) < SLOW_STORE_REQUEST_MS]


def test_every_throttle_of_the_run_and_nothing_else_becomes_an_event() -> None:
    events = [e for e in run(LINES) if isinstance(e, ObjectStoreRequest)]
    throttled = [line for line in LINES if " 503 SlowDown " in line]
    slow = [e for e in events if e.status != 503]
    assert len(throttled) >= 5 and len(events) - len(slow) == len(throttled)
    assert all((e.total_ms or 0) >= SLOW_STORE_REQUEST_MS for e in slow)


def test_each_record_is_a_record_of_its_own_and_the_file_is_known_by_its_lines() -> None:
    assert all(is_record_start(line) for line in LINES)
    assert sniff_family("\n".join(LINES[:20])) == "objectstore"


def test_a_put_the_store_held_is_kept_for_its_total_time() -> None:
    """The slow-put run (the same versions): the proxy held PUTs under the prefix 15 s, the store answered 200."""
    slow_run = RUN.parent / "s3-slow-put"
    lines = (slow_run / "s3-access-lab-s3.log").read_text().splitlines()
    marker = next(line for line in lines if " REST.PUT.OBJECT " in line and "/chk-4/ " in line)
    [event] = run([marker])
    assert isinstance(event, ObjectStoreRequest)
    assert (event.status, event.error_code, event.operation) == (200, None, "REST.PUT.OBJECT")
    assert event.key is not None and event.key.endswith("/chk-4/")
    assert event.total_ms is not None and 15_000 <= event.total_ms < 16_000


def test_a_put_refused_for_an_expired_token_is_kept() -> None:
    """The expired-token run (the same versions): every PUT under the prefix answered `400 ExpiredToken`."""
    lines = (RUN.parent / "s3-expired-token" / "s3-access-lab-s3.log").read_text().splitlines()
    refused = next(line for line in lines if " 400 ExpiredToken " in line)
    [event] = run([refused])
    assert isinstance(event, ObjectStoreRequest)
    assert (event.status, event.error_code, event.operation) == (400, "ExpiredToken", "REST.PUT.OBJECT")


def test_the_clients_cause_chain_carries_the_stores_error_and_is_no_user_code() -> None:
    """The JobManager's record of the expired-token run's first failure: its cause chain ends in the AWS SDK's
    `AmazonS3Exception … (Service: Amazon S3; Status Code: 400; Error Code: ExpiredToken; …)`."""
    from correlator.core.events import CheckpointDeclined, CheckpointFailed

    lines = (RUN.parent / "s3-expired-token" / "flink-root-standalonesession-0-lab-jm.log").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if "Decline checkpoint" in line or "Declining checkpoint" in line)
    end = next(i for i in range(start + 1, len(lines)) if lines[i][:4].isdigit() and lines[i][4:5] == "-")
    record = lines[start:end]
    assert any("Error Code: ExpiredToken" in line for line in record)
    failures = [e for e in run(record) if isinstance(e, CheckpointFailed | CheckpointDeclined)]
    assert failures and all(e.store_error == "ExpiredToken" and e.user_exception is None for e in failures)


def test_a_write_that_held_its_connection_is_kept_and_a_quick_one_or_a_read_is_not() -> None:
    """The connection-limit run (the same versions): PUTs under the prefix held 0.9 s, one at a time."""
    lines = (RUN.parent / "s3-connection-limit" / "s3-access-lab-s3.log").read_text().splitlines()
    held = [line for line in lines if " REST.PUT.OBJECT " in line and '" 200 - ' in line
            and HELD_STORE_REQUEST_MS <= int(line.split('" ')[1].split()[4]) < SLOW_STORE_REQUEST_MS]
    assert len(held) >= 9
    [event] = run(held[:1])
    assert isinstance(event, ObjectStoreRequest) and (event.status, event.operation) == (200, "REST.PUT.OBJECT")
    assert event.total_ms is not None and HELD_STORE_REQUEST_MS <= event.total_ms < SLOW_STORE_REQUEST_MS
    quick = [line for line in lines if " REST.PUT.OBJECT " in line and '" 200 - ' in line
             and int(line.split('" ')[1].split()[4]) < HELD_STORE_REQUEST_MS]
    reads = [line.replace(" REST.PUT.OBJECT ", " REST.GET.OBJECT ") for line in held]
    assert quick and not run(quick) and not run(reads)


def _failure_records(log: Path) -> list[list[str]]:
    """The records of a Flink log that hold a cause chain (a dated line, then its continuation lines)."""
    lines = log.read_text().splitlines()
    starts = [i for i, line in enumerate(lines) if line[:4].isdigit() and line[4:5] == "-"] + [len(lines)]
    return [lines[a:b] for a, b in zip(starts, starts[1:]) if b - a > 1 and "S3Exception: " in "\n".join(lines[a:b])]


def test_the_native_filesystems_sdk_v2_chains_carry_the_stores_error_by_its_message() -> None:
    """flink-s3-fs-native 2.3.0 (AWS SDK v2) logs no error code, only S3's message and status (`S3Exception: The
    provided token has expired. (Service: S3, Status Code: 400, …)`): the failure carries the code they stand for.
    Real lines of the lab's native runs: `tests/data/lab/s3-2.3.0-native/`."""
    from correlator.core.events import CheckpointDeclined, CheckpointFailed

    native = RUN.parents[1] / "s3-2.3.0-native"
    for scenario, code, said in (("s3-expired-token", "ExpiredToken", "The provided token has expired. (Service: S3, "
                                  "Status Code: 400,"),
                                 ("s3-throttling", "SlowDown", "Please reduce your request rate. (Service: S3, "
                                  "Status Code: 503,")):
        records = _failure_records(native / scenario / "flink-root-standalonesession-0-lab-jm.log")
        assert records and all(any(said in line for line in r) for r in records if "(Service: S3," in "\n".join(r))
        failures = [e for r in records for e in run(r) if isinstance(e, CheckpointFailed | CheckpointDeclined)]
        assert failures and {e.store_error for e in failures} == {code}, scenario
