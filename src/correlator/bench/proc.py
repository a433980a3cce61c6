"""What a running process costs, read from /proc (Linux): CPU seconds and its own peak RSS.

``ru_maxrss`` from ``wait4`` is no use for a child: Linux carries the forking parent's peak across ``exec``, so a
benchmark holding its corpus in memory would report that as the child's. ``VmHWM`` is the child's own.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path


def _stat(pid: int) -> list[str]:
    """Fields of ``/proc/PID/stat`` after the command name (state first, then the parent's pid, ...)."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def _status_kib(pid: int, field: str) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return next((int(line.split()[1]) for line in status.splitlines() if line.startswith(f"{field}:")), 0)


def usage(pid: int) -> tuple[float, int]:
    """CPU seconds (user + system) and peak RSS (KiB) of a running process."""
    fields = _stat(pid)
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"), _status_kib(pid, "VmHWM")


def tree_usage(pid: int) -> tuple[float, int]:
    """``usage`` summed over a process and its children (the worker's raw-ingest process): CPU seconds, and the sum
    of their peaks (an upper bound of the peak they held together)."""
    cpu, peak = usage(pid)
    for child in children(pid):
        try:
            more_cpu, more_peak = usage(child)
        except (OSError, IndexError, ValueError):  # exited while listed
            continue
        cpu, peak = cpu + more_cpu, peak + more_peak
    return cpu, peak


def tree_rss_kib(pid: int) -> list[int]:
    """Resident memory now (``VmRSS``, KiB) of a process, then of each of its children: a leak is found in one."""
    found = []
    for one in (pid, *children(pid)):
        try:
            found.append(_status_kib(one, "VmRSS"))
        except OSError:  # exited while listed
            continue
    return found


def children(pid: int) -> list[int]:
    """Pids of a process's running children (zombies left out)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        one = int(stat.parent.name)
        try:
            fields = _stat(one)
        except OSError:  # exited while listed
            continue
        if int(fields[1]) == pid and fields[0] not in ("Z", "X"):
            found.append(one)
    return found


def running(pid: int) -> bool:
    """Neither gone nor a zombie."""
    try:
        return _stat(pid)[0] not in ("Z", "X")
    except OSError:
        return False


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
