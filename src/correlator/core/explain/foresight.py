"""Foresight: adds the outlook and the what-if figures to each verdict, from the scanner lines and earlier failures.

It sits beside the engine, not inside it: it sees every event (the engine keeps scanner lines only as evidence near a
failure, while a schedule spans hours) and every verdict the engine decides. Each verdict reads only what was logged
up to its decision time and the failures of its incident decided so far (cluster, job, cause — as incidents group
them), so the figures are the same on any rerun.
"""

from __future__ import annotations

from dataclasses import astuple, replace
from typing import Any

from correlator.core.events import Event, JobStatus
from correlator.core.explain.outlook import ScanBook
from correlator.core.explain.verdict import Verdict
from correlator.core.explain.whatif import Stall, helpful_first, stall_of, whatif

HISTORY_LIMIT = 64
RESTART_STATES = ("RESTARTING", "FAILED")
SKEW_MS = 2_000


class Foresight:
    def __init__(self) -> None:
        self.book = ScanBook()
        self._stalls: dict[tuple[str, str, str], list[Stall]] = {}
        self._restarts: dict[tuple[str, str], list[int]] = {}
        """When each job went to RESTARTING or FAILED: the job-level lines no case keeps."""

    def observe(self, event: Event) -> None:
        self.book.observe(event)
        if isinstance(event, JobStatus) and event.job_id and event.to_state in RESTART_STATES:
            times = self._restarts.setdefault((event.cluster, event.job_id), [])
            if event.ts_ms not in times:
                times.append(event.ts_ms)
                times.sort()
                del times[:-HISTORY_LIMIT]

    def _restarted(self, v: Verdict) -> bool:
        times = self._restarts.get((v.cluster, v.job_id or ""), [])
        return any(v.failure.failed_at_ms - SKEW_MS <= t <= v.decided_at_ms for t in times)

    def annotate(self, v: Verdict) -> Verdict:
        rc = v.root_cause
        # as of the decision: what was logged up to it and nothing after, on a rerun or live
        outlook = self.book.outlook(v.cluster, rc.code, rc.hosts, v.decided_at_ms, v.decided_at_ms)
        for key, held in self._stalls.items():  # a revision replaces what its failure measured, under any cause
            held[:] = [s for s in held if s.verdict_id != v.verdict_id or key[2] == rc.code and not v.revision]
        stalls = self._stalls.setdefault((v.cluster, v.job_id or "", rc.code), [])
        if all(s.verdict_id != v.verdict_id for s in stalls):
            stalls.append(stall_of(v, self._restarted(v)))
            stalls.sort(key=lambda s: (s.failed_at_ms, s.verdict_id))
            del stalls[:-HISTORY_LIMIT]
        upto = [s for s in stalls if s.failed_at_ms <= v.failure.failed_at_ms]
        steps, figures = helpful_first(v.remediation, whatif(v.remediation, upto, outlook))
        return replace(v, outlook=outlook, remediation=steps, whatif=figures)

    def snapshot(self) -> dict[str, Any]:
        """Plain data, like the engine's: the stream worker keeps it beside the engine snapshot."""
        return {"book": self.book.snapshot(),
                "stalls": [[list(k), [list(astuple(s)) for s in v]] for k, v in sorted(self._stalls.items())],
                "restarts": [[c, j, v] for (c, j), v in sorted(self._restarts.items())]}

    @classmethod
    def restore(cls, data: dict[str, Any]) -> Foresight:
        f = cls()
        f.book = ScanBook.restore(data["book"])
        for key, stalls in data["stalls"]:
            f._stalls[(key[0], key[1], key[2])] = [_stall(s) for s in stalls]
        f._restarts = {(c, j): list(v) for c, j, v in data.get("restarts") or ()}
        return f


def _stall(d: list[Any]) -> Stall:
    span = d[8]
    return Stall(str(d[0]), d[1], int(d[2]), d[3], d[4], d[5], bool(d[6]), d[7],
                 None if span is None else (int(span[0]), int(span[1])))
