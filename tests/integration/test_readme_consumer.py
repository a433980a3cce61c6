"""The consumer of docs/operations.md (the README links it), run as printed against the real broker: it prints each
revision of a verdict once, never an older one after a newer."""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
VERDICTS = ROOT / "tests" / "data" / "verdicts" / "recurring.jsonl"


def readme_consumer() -> str:
    text = (ROOT / "docs" / "operations.md").read_text(encoding="utf-8")
    match = re.search(r"<!-- consumer -->\n```python\n(.*?)```", text, re.S)
    assert match, "docs/operations.md has no consumer example"
    return match.group(1)


def test_readme_consumer_prints_each_revision_once(kafka_bootstrap: str, unique: str) -> None:
    code = readme_consumer()
    assert len([line for line in code.splitlines() if line.strip() and not line.startswith("#")]) <= 13
    topic = f"correlator.verdicts.readme-{unique}"
    admin = AdminClient({"bootstrap.servers": kafka_bootstrap})
    admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(30)
    records = [json.loads(x) for x in VERDICTS.read_text(encoding="utf-8").splitlines() if x.startswith("{")]
    producer = Producer({"bootstrap.servers": kafka_bootstrap, "transactional.id": f"readme-{unique}"})
    producer.init_transactions(30)
    producer.begin_transaction()
    revised = {**records[0], "revision": 1, "revision_reason": "late evidence",
               "root_cause": {**records[0]["root_cause"], "code": "DATANODE_JVM_PAUSE", "title": "revised"}}
    for record in records + [revised] + records[:2] + [revised]:  # at least once: three come again
        producer.produce(topic, key=b"default", value=json.dumps(record).encode())
    producer.commit_transaction(30)
    producer.begin_transaction()
    producer.produce(topic, key=b"default", value=json.dumps({**records[0], "verdict_id": "aborted"}).encode())
    producer.abort_transaction(30)  # read_committed: never seen

    bounded = code.replace('"kafka:9092"', repr(kafka_bootstrap)).replace('"correlator.verdicts"', repr(topic))
    bounded = bounded.replace('"my-verdicts"', repr(f"readme-{unique}"))
    bounded = bounded.replace("while True:", "import time\nend = time.monotonic() + 30\nwhile time.monotonic() < end "
                                             "and (len(seen) < %d or not seen.get(%r)):" % (len(records),
                                                                                         revised["verdict_id"]))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        namespace: dict[str, object] = {}
        exec(compile(bounded, "README consumer", "exec"), namespace)  # noqa: S102 - the README's own example
        namespace["consumer"].close()  # type: ignore[attr-defined]
    printed = out.getvalue().splitlines()
    assert sorted(printed) == sorted(
        f"{r['failure']['failed_at']} {r['root_cause']['code']} {r['root_cause']['title']}" for r in [*records, revised])
