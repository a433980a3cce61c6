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
from correlator.stream.transport import faust_app, raw_logs_topic


def build(settings: Settings, result_file: Path, expected: int) -> faust.App:
    app = faust_app(settings, web_enabled=False)
    raw = raw_logs_topic(app, settings)
    seen = {"raw": 0}
    times: dict[str, float] = {}

    @app.agent(raw)
    async def count(stream: faust.StreamT[bytes]) -> None:
        # faust's StreamT does not declare take_events, which its Stream has
        async for batch in stream.take_events(5000, within=0.5):  # type: ignore[attr-defined]
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
