"""The Faust transport's own ceiling: an agent that only counts batches of raw records.

Run as ``python -m correlator.bench.bare_faust RESULT_FILE EXPECTED``; writes the timings once it has seen them all.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import faust
import orjson

from correlator.config import Settings
from correlator.stream.security import faust_credentials


def build(settings: Settings, result_file: Path, expected: int) -> faust.App:
    app = faust.App(
        settings.worker_id,
        broker=[f"kafka://{s}" for s in settings.bootstrap_servers.split(",")],
        broker_credentials=faust_credentials(settings),
        store="memory://",
        web_enabled=False,
        consumer_auto_offset_reset="earliest",
    )
    raw = app.topic(settings.topic_logs_flink, settings.topic_logs_hdfs, key_type=bytes, value_type=bytes,
                    key_serializer="raw", value_serializer="raw")
    seen = {"raw": 0}
    times: dict[str, float] = {}

    @app.agent(raw)
    async def count(stream: faust.StreamT[bytes]) -> None:
        async for batch in stream.take_events(5000, within=0.5):
            times.setdefault("first", time.time())
            seen["raw"] += len(batch)
            if seen["raw"] >= expected and "done" not in times:
                times["done"] = time.time()
                result_file.write_bytes(orjson.dumps({**seen, **times}))

    return app


def main() -> None:
    app = build(Settings(), Path(sys.argv[1]), int(sys.argv[2]))
    faust.Worker(app, loglevel="WARNING", quiet=True).execute_from_commandline()


if __name__ == "__main__":
    main()
