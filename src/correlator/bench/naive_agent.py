"""The baseline a Faust newcomer writes: one record at a time, state read and written per record.

Same work as the worker (the core's ``Ingest`` and ``Engine``, the same topics and tables), none of its batching.
Run as ``python -m correlator.bench.naive_agent RESULT_FILE EXPECTED_RAW``; it writes timings and exits once it has
processed every raw record and every event it forwarded.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import faust
import orjson

from correlator.config import Settings
from correlator.core.correlate.engine import Engine
from correlator.core.events import Event
from correlator.core.ingest.ingest import Ingest
from correlator.stream.app import partition_counts
from correlator.stream.transport import bytes_topic, faust_app, raw_logs_topic
from correlator.stream.wire import Position, decode_event, encode_event, encode_verdict, verdict_key


def build(settings: Settings, result_file: Path, expected_raw: int, budget_s: float = 30.0) -> faust.App:
    """``budget_s`` bounds the run: the naive agent is slow enough that a full corpus would take far too long."""
    app = faust_app(settings, web_enabled=False)
    raw = raw_logs_topic(app, settings)
    events = bytes_topic(app, settings.topic_events)
    verdicts = bytes_topic(app, settings.topic_verdicts)
    counts = partition_counts(settings, (settings.topic_logs_flink, settings.topic_events))
    ingest_table = app.Table("naive-ingest", key_type=bytes, value_type=bytes,
                             partitions=counts[settings.topic_logs_flink])
    engine_table = app.Table("naive-engine", key_type=bytes, value_type=bytes, partitions=counts[settings.topic_events])
    done = {"raw": 0, "forwarded": 0, "events": 0, "verdicts": 0}
    times: dict[str, float] = {}
    config, engine_config = settings.ingest_config(), settings.engine_config()

    def maybe_done() -> None:
        over_budget = "first" in times and time.time() - times["first"] > budget_s
        finished = done["raw"] >= expected_raw and done["events"] >= done["forwarded"]
        if (finished or over_budget) and "done" not in times:
            times["done"] = time.time()
            result_file.write_bytes(orjson.dumps({**done, **times}))

    @app.agent(raw)
    async def ingest(stream: faust.StreamT[bytes]) -> None:
        async for event in stream.events():
            times.setdefault("first", time.time())
            msg = event.message
            key = f"{msg.topic}/{msg.partition}".encode()
            blob = ingest_table.get(key)
            state = Ingest.restore(config, orjson.loads(blob)) if blob else Ingest(config)
            outputs = state.feed(msg.value or b"", ref=f"{msg.topic}/{msg.partition}@{msg.offset}",
                                 headers=dict(msg.headers or []), now_ms=int(time.time() * 1000))
            for seq, item in enumerate(outputs):
                if isinstance(item, Event):
                    await events.send(key=item.cluster.encode(),
                                      value=encode_event(item, Position(msg.topic, msg.partition, msg.offset, seq)))
                    done["forwarded"] += 1
            ingest_table[key] = orjson.dumps(state.snapshot())
            done["raw"] += 1
            maybe_done()

    @app.agent(events)
    async def correlate(stream: faust.StreamT[bytes]) -> None:
        async for event in stream.events():
            msg = event.message
            blob = engine_table.get(msg.key)
            engine = Engine.restore(engine_config, orjson.loads(blob)) if blob else Engine(engine_config)
            parsed, _ = decode_event(msg.value)
            for verdict in engine.feed(parsed):
                await verdicts.send(key=verdict_key(verdict), value=encode_verdict(verdict))
                done["verdicts"] += 1
            engine_table[msg.key] = orjson.dumps(engine.snapshot())
            done["events"] += 1
            maybe_done()

    return app


def main() -> None:
    result_file, expected = Path(sys.argv[1]), int(sys.argv[2])
    app = build(Settings(), result_file, expected)
    faust.Worker(app, loglevel="WARNING", quiet=True).execute_from_commandline()


if __name__ == "__main__":
    main()
