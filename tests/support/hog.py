"""A CPU hog for load tests: one busy loop per core, bounded in time, stopped by its pids."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def cpu_hog(seconds: float, cores: int | None = None) -> Iterator[list[int]]:
    """Busy loops on every core (or ``cores``) while the block runs; each also ends by itself after ``seconds``, so
    a test that dies without its ``finally`` leaves nothing spinning for long."""
    loop = f"import time\nend = time.monotonic() + {seconds}\nwhile time.monotonic() < end:\n    pass\n"
    procs = [subprocess.Popen([sys.executable, "-c", loop]) for _ in range(cores or os.cpu_count() or 2)]
    try:
        yield [p.pid for p in procs]
    finally:
        for proc in procs:
            proc.kill()
        for proc in procs:
            proc.wait(10)
