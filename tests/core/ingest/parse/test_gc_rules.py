"""The GC wording table: every wording is a prefilter trigger, and a line of it is taken by its row and read.

``gc.parse_gc`` reads a GC record whole (its form decides how), so the rows are the prefilter's GC triggers and tell a
safepoint's stop from a collection's pause (``parse_record`` drops a stop that is a pause's twin). Each row, given a
line of its wording (JDK 8 ``-XX:+PrintGCDetails`` / ``-XX:+PrintGCApplicationStoppedTime``, JDK 9+ ``-Xlog:gc`` and
``-Xlog:safepoint``), takes it, the prefilter keeps it, and it becomes the pause the row names; a stop's row takes no
collection's line and a collection's row no stop's.
"""

from __future__ import annotations

import pytest
from sample_cases import run

from correlator.core.events import Event
from correlator.core.ingest.ingest import SourceHint
from correlator.core.ingest.parse.gc import PAUSES, RULES, STOPS
from correlator.core.ingest.parse.wording import Wording
from correlator.core.ingest.prefilter import GC_TRIGGERS, NOTHING, ReScanner

JDK8 = "2020-01-02T17:18:15.512+0800: 12345.678: "
UNIFIED = "[2020-01-02T17:18:53.635+0800][12383.801s][info][gc          ] "
EXAMPLES: dict[str, str] = {
    # phrase of the row -> a line of its wording
    "[GC ": (f"{JDK8}[GC (Allocation Failure) [PSYoungGen: 1398144K->12345K(1465856K)] 2345678K->960000K(4194304K), "
             "0.0456789 secs] [Times: user=0.15 sys=0.01, real=0.05 secs]"),
    "[Full GC": (f"{JDK8}[Full GC (Ergonomics) [PSYoungGen: 12345K->0K(1465856K)] [ParOldGen: "
                 "2700000K->2600000K(2796544K)] 2712345K->2600000K(4262400K), [Metaspace: 56789K->56789K(1099776K)], "
                 "38.1234567 secs] [Times: user=120.12 sys=1.23, real=38.12 secs]"),
    ") Pause ": f"{UNIFIED}GC(122) Pause Young (Concurrent Start) (G1 Humongous Allocation) 1224M->310M(4096M) 9.5ms",
    " Pause Full": f"{UNIFIED}GC(123) Pause Full (G1 Compaction Pause) 3900M->3100M(4096M) 38123.456ms",
    " Pause Young": f"{UNIFIED}GC(124) Pause Young (Normal) (G1 Evacuation Pause) 1224M->310M(4096M) 12.345ms",
    " Pause Remark": f"{UNIFIED}GC(125) Pause Remark 1500M->1400M(4096M) 25.123ms",
    " Pause Cleanup": f"{UNIFIED}GC(125) Pause Cleanup 1400M->1400M(4096M) 0.456ms",
    " Pause Initial Mark": f"{UNIFIED}GC(126) Pause Initial Mark 800M->800M(4096M) 0.567ms",
    "application threads were stopped": ("2020-01-02T17:18:53.643+0800: 12383.809: Total time for which application "
                                         "threads were stopped: 38.1302345 seconds, Stopping threads took: 0.0001234 "
                                         "seconds"),
    'Safepoint "': ('[2023-05-04T12:00:05.118+0800][9912.302s][info][safepoint   ] Safepoint "G1CollectFull", Time '
                    "since last: 1002456789 ns, Reaching safepoint: 182345 ns, At safepoint: 38123456789 ns, Total: "
                    "38123639134 ns"),
}


def test_every_row_has_an_example_and_every_trigger_is_a_row() -> None:
    assert [r.phrase for r in RULES] == list(EXAMPLES)
    assert GC_TRIGGERS == tuple(EXAMPLES)
    assert RULES == PAUSES + STOPS


@pytest.mark.parametrize("rule", RULES, ids=[r.phrase.strip() for r in RULES])
def test_every_row_fires_on_its_wording(rule: Wording[None]) -> None:
    line = EXAMPLES[rule.phrase]
    assert rule.takes(line), "the row does not take its own wording"
    assert ReScanner().classify(line) != NOTHING, "the prefilter drops it"
    assert any(row.takes(line) for row in STOPS) is (rule in STOPS), "a stop and a pause are told apart wrongly"
    events = [e for e in run([line], hint=SourceHint(family="gc")) if isinstance(e, Event)]
    assert events and all(isinstance(e, rule.emits) for e in events), f"no pause from {line[:100]!r}"
