"""A storm's warnings read in one go: the lines that extend held bursts, up to the first one that might not.

During a slow-disk storm a DataNode logs ``Slow BlockReceiver write data to disk``, ``Slow flushOrSync`` and ``Slow
PacketResponder send ack`` warnings for nearly every packet, interleaved, many per second; a DirectoryScanner's
reconcile logs one per block. Each line extends its source's held burst of its kind (``bursts``) by its stamp and
duration only. The block path hands a ``WriteReader`` the block's trigger hits and what the source's held bursts allow
(:class:`HeldBursts`); the reader walks the hits while each is such a line and returns how far it got and each
burst's new state (:class:`BurstRun`). The first line it is not sure of ends the run and takes the block path's own
steps, so a run never extends a burst differently from the line-by-line rules. The function below is the reference;
the native reader is its twin (a property test holds them equal).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

SLOW_MS = re.compile(rb"[ :](\d+)ms \(threshold=")
"""The duration of a slow-IO warning (``cost:1873ms (threshold=300ms)``, ``took 912ms (threshold=300ms)``)."""
STAMPED = re.compile(rb"\d{4}-\d\d-\d\d[ T]\d\d:\d\d")
"""A line that surely starts a record (the first form of ``multiline``'s record start): a run needs the line after
each of its lines to be one, as a warning with continuation lines is no longer one line's fact."""
MAX_DIGITS = 15
"""Longer durations (no real warning has them) end the run: the parsers' path reads them."""


@dataclass(frozen=True, slots=True)
class Held:
    """One held burst as a run sees it."""

    last_ts_ms: int
    start_ms: int
    longest_ms: int
    """A line that took longer ends the run (it becomes the burst's sample); ``-1``: no limit (reconcile)."""
    gap_ms: int
    timed: bool
    """Its lines carry a duration (slow IO) or not (reconcile)."""


@dataclass(frozen=True, slots=True)
class HeldBursts:
    """What the lines of a run may be: hits whose phrase index names one of ``held`` (``kinds``), stamped in the
    second ``prefix`` (the 19 bytes ``2020-01-02 08:00:07``, which began at ``second_ms``), each extending its burst
    as ``Bursts.extend`` would."""

    held: tuple[Held, ...]
    kinds: bytes
    """``kinds[index]``: 1 + the position in ``held`` of the burst a line of that phrase extends; 0 ends the run."""
    prefix: bytes
    second_ms: int
    max_span_ms: int
    until_ts_ms: int
    """A line stamped later would end a burst of the host held for another source: the run stops before it."""
    step_at: int
    """The block's next write step: a line starting after it waits for the step."""
    decided_until: int
    """End of the last line decided from its bytes; trigger hits before it are in lines already read."""
    write_from: int
    """Phrase indexes from here are write lines, never skipped."""


@dataclass(frozen=True, slots=True)
class BurstRun:
    next_hit: int
    """The first hit the run did not take."""
    decided_until: int
    extended: tuple[tuple[int, int, int], ...]
    """Per held burst: the lines it took, its new last time and start."""


def burst_run(block: bytes, hits: Sequence[tuple[int, int]], first: int, bursts: HeldBursts) -> BurstRun:
    """The lines from ``hits[first]`` on that extend ``bursts``, each as ``Bursts.extend`` would extend it: its own
    burst without passing its gap, span or longest warning, and no other burst of the host passed by its gap."""
    held = bursts.held
    counts, lasts, starts = [0] * len(held), [h.last_ts_ms for h in held], [h.start_ms for h in held]
    i, until, n = max(first, 0), bursts.decided_until, len(block)
    while i < len(hits):
        hit, index = hits[i]
        if hit < until and index < bursts.write_from:
            i += 1
            continue
        slot = bursts.kinds[index] - 1 if 0 <= index < len(bursts.kinds) else -1
        if not 0 <= slot < len(held) or not 0 <= hit <= n:
            break
        line = block.rfind(b"\n", 0, hit) + 1
        millis = block[line + 20:line + 23]
        if (line > bursts.step_at or block[line:line + 19] != bursts.prefix
                or block[line + 19:line + 20] not in (b",", b".") or len(millis) != 3 or not millis.isdigit()):
            break
        ts = bursts.second_ms + int(millis)
        end = block.find(b"\n", hit)
        end = n if end < 0 else end + 1
        if end < n and STAMPED.match(block, end) is None:
            break
        duration = 0
        if held[slot].timed:
            found = SLOW_MS.search(block, line, end)
            if found is None or len(found[1]) > MAX_DIGITS:
                break
            duration = int(found[1])
        if (ts - lasts[slot] > held[slot].gap_ms or ts - starts[slot] > bursts.max_span_ms
                or ts > bursts.until_ts_ms or 0 <= held[slot].longest_ms < duration
                or any(ts - lasts[j] > held[j].gap_ms for j in range(len(held)) if j != slot)):
            break
        counts[slot] += 1
        lasts[slot], starts[slot], until = max(lasts[slot], ts), min(starts[slot], ts - duration), end
        i += 1
    return BurstRun(i, until, tuple(zip(counts, lasts, starts)))
