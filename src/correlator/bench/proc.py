"""What a running process costs, read from /proc (Linux): CPU seconds and its own peak RSS.

``ru_maxrss`` from ``wait4`` is no use for a child: Linux carries the forking parent's peak across ``exec``, so a
benchmark holding its corpus in memory would report that as the child's. ``VmHWM`` is the child's own.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path


def usage(pid: int) -> tuple[float, int]:
    """CPU seconds (user + system) and peak RSS (KiB) of a running process."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    status = Path(f"/proc/{pid}/status").read_text()
    peak = next((int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM:")), 0)
    return cpu, peak


class PeakRss:
    """Samples a child's ``VmHWM`` every ``every_s`` until it exits; ``kib`` is the last value seen."""

    def __init__(self, pid: int, every_s: float = 0.02) -> None:
        self.kib = 0
        self._pid, self._every_s = pid, every_s
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def stop(self) -> int:
        self._done.set()
        self._thread.join()
        return self.kib

    def _sample(self) -> None:
        while not self._done.is_set():
            try:
                self.kib = max(self.kib, usage(self._pid)[1])
            except (OSError, IndexError, ValueError):  # exited (a zombie has no VmHWM left to read)
                return
            self._done.wait(self._every_s)
