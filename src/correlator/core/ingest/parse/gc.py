"""JVM GC logs (JDK 8 ``-XX:+PrintGCDetails``, JDK 9+ unified ``-Xlog:gc``) to ``jvm_pause`` events.

GC stamps carry their own UTC offset, so they do not need the configured zone. Every event's ``ts_ms`` is the end
of the pause (``jvm_pause`` covers ``[ts − pause, ts]``), which for JDK 8 collection lines means stamp + pause.

The wordings are rows of ``RULES`` (``wording.Wording``), the prefilter's GC triggers: a GC record is read whole by
:func:`parse_gc`, its form (a JDK 8 stamp, unified logging's decorations) deciding how, so the rows read nothing
themselves; ``STOPS`` tells a safepoint's stop from a collection's pause (``parse_record`` drops a stop that is a
pause's twin).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from correlator.core.events import JvmPause
from correlator.core.ingest.parse.emit import Emit
from correlator.core.ingest.parse.wording import Wording
from correlator.core.ingest.timestamps import to_epoch_ms

_ISO = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[.,]\d{3}(?:[+-]\d\d:?\d\d|Z)"
_JDK8 = re.compile(rf"({_ISO}): (?:\d+\.\d+: )?(.*)", re.DOTALL)
_UNIFIED = re.compile(r"((?:\[[^\]]*\])+)\s?(.*)", re.DOTALL)
_DECORATION = re.compile(r"\[([^\]]*)\]")
_LEVELS = frozenset({"trace", "debug", "info", "warning", "error"})
_UNIFIED_PAUSE = re.compile(r"GC\(\d+\) Pause .*?(\d+(?:\.\d+)?)ms\s*$")
_STOPPED = re.compile(r"Total time for which application threads were stopped: (\d+(?:\.\d+)?) seconds")
_SAFEPOINT = re.compile(r'Safepoint "(\w+)".*?Total: (\d+) ns')
_REAL = re.compile(r"real=(\d+(?:\.\d+)?) secs")
_SECS = re.compile(r", (\d+(?:\.\d+)?) secs\]")
_GC_OPERATION = re.compile(r"GC|Collect|G1|CMS|Parallel|Gen|Z|Shenandoah")

GC_RECORD_START = re.compile(rf"(?:{_ISO}: |\d+\.\d{{3}}: \[|\[)")

PAUSES: tuple[Wording[None], ...] = tuple(
    Wording(phrase, None, "message", emits=(JvmPause,))
    for phrase in ("[GC ", "[Full GC", ") Pause ", " Pause Full", " Pause Young", " Pause Remark", " Pause Cleanup",
                   " Pause Initial Mark"))
"""A collection's pause: JDK 8's ``[GC …`` and ``[Full GC …`` (``-XX:+PrintGCDetails``), unified logging's ``GC(n)
Pause …`` (``-Xlog:gc``); the message is the record's line."""
STOPS: tuple[Wording[None], ...] = (
    Wording("application threads were stopped", None, "message", emits=(JvmPause,)),
    Wording('Safepoint "', None, "message", emits=(JvmPause,)),
)
"""A safepoint's stop (``-XX:+PrintGCApplicationStoppedTime``, ``-Xlog:safepoint``): every stop of the JVM, a
collection's as well."""
RULES: tuple[Wording[None], ...] = PAUSES + STOPS
"""Every GC wording read."""


def is_gc_line(line: str) -> bool:
    return _JDK8.match(line) is not None or (line.startswith("[") and _UNIFIED.match(line) is not None)


def parse_gc(lines: Sequence[str], emit: Emit, *, min_pause_ms: int = 0) -> bool:
    """Emit the pause a GC record describes; return False when the line has no usable wall-clock stamp."""
    first = lines[0]
    if first.startswith("["):
        return _unified(first, emit, min_pause_ms)
    m = _JDK8.match(first)
    if m is None:
        return False
    stamp_ms = to_epoch_ms(m[1])
    body = m[2]
    stopped = _STOPPED.search(body)
    if stopped:
        _emit(emit, stamp_ms, float(stopped[1]) * 1000, True, min_pause_ms)
        return True
    head = body.lstrip()
    if head.startswith(("[GC", "[Full GC")) and "concurrent" not in head.split("]", 1)[0]:
        text = "\n".join(lines)
        real = _REAL.search(text)
        secs = _SECS.findall(text)
        seconds = float(real[1]) if real else (float(secs[-1]) if secs else None)
        if seconds is not None:
            pause_ms = seconds * 1000
            _emit(emit, stamp_ms + round(pause_ms), pause_ms, True, min_pause_ms)
    return True


def _unified(line: str, emit: Emit, min_pause_ms: int) -> bool:
    m = _UNIFIED.match(line)
    if m is None:
        return False
    decorations = [d.strip() for d in _DECORATION.findall(m[1])]
    stamp = next((d for d in decorations if re.fullmatch(_ISO, d)), None)
    tags = ""
    for i, d in enumerate(decorations):
        if d in _LEVELS and i + 1 < len(decorations):
            tags = decorations[i + 1].replace(" ", "")
            break
    if stamp is None:
        return False
    stamp_ms = to_epoch_ms(stamp)
    message = m[2]
    if tags == "gc":
        p = _UNIFIED_PAUSE.search(message)
        if p:
            _emit(emit, stamp_ms, float(p[1]), True, min_pause_ms)
        return True
    stopped = _STOPPED.search(message)
    if stopped:
        _emit(emit, stamp_ms, float(stopped[1]) * 1000, True, min_pause_ms)
        return True
    sp = _SAFEPOINT.search(message)
    if sp:
        _emit(emit, stamp_ms, int(sp[2]) / 1e6, _GC_OPERATION.search(sp[1]) is not None, min_pause_ms)
    return True


def _emit(emit: Emit, end_ms: int, pause_ms: float, gc: bool, min_pause_ms: int) -> None:
    if pause_ms >= min_pause_ms:
        emit(JvmPause, ts_ms=end_ms, pause_ms=round(pause_ms), gc=gc)
