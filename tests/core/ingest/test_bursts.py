"""A source's slow-IO warnings of one kind, back to back, become one event with their count, span and longest."""

from __future__ import annotations

import pytest

from correlator.core.events import JvmPause, SlowIo
from correlator.core.ingest.burst_lines import BurstRun
from correlator.core.ingest.bursts import Bursts
from correlator.core.ingest.ingest import Ingest, IngestConfig, SourceHint

T0 = 1_700_000_000_000


def slow(ts: int, ms: int, *, host: str = "dn1", kind: str = "disk_write", block: str = "7") -> SlowIo:
    return SlowIo(ts_ms=ts, cluster="c", host=host, role="datanode", ref=f"f:{ts}", kind=kind, duration_ms=ms,
                  threshold_ms=300, block_id=block)


def test_a_lone_warning_is_emitted_as_it_came() -> None:
    bursts = Bursts()
    lone = slow(T0, 800)
    assert bursts.take([lone], None) == []
    assert bursts.flush_all() == [lone]


def test_back_to_back_warnings_become_one_event_with_count_span_and_longest() -> None:
    bursts = Bursts()
    warnings = [slow(T0 + i * 400, 350 + (i == 17) * 2000, block=str(i)) for i in range(20)]
    assert bursts.take(warnings, None) == []
    (burst,) = bursts.flush_all()
    assert isinstance(burst, SlowIo)
    assert (burst.count, burst.start_ts_ms, burst.ts_ms) == (20, T0 - 350, T0 + 19 * 400)
    assert (burst.duration_ms, burst.block_id, burst.ref) == (2350, "17", f"f:{T0 + 17 * 400}")


def test_hosts_kinds_gaps_and_long_storms_keep_bursts_apart() -> None:
    bursts = Bursts()
    out = bursts.take([slow(T0, 400), slow(T0 + 100, 400, host="dn2"), slow(T0 + 200, 400, kind="flush_or_sync"),
                       slow(T0 + 3_000, 400)], None)  # 2.6 s after the first ended: a new burst
    # the dn1 line 2.8 s later shows dn1's log moved on: both its held kinds are released, dn2's stays held
    assert [(e.host, e.kind, e.count) for e in out if isinstance(e, SlowIo)] == [("dn1", "disk_write", 1),
                                                                                  ("dn1", "flush_or_sync", 1)]
    storm = [slow(T0 + 3_000 + i * 500, 400) for i in range(1, 40)]  # 19.5 s of warnings: cut at 10 s spans
    out = bursts.take(storm, None) + bursts.flush_all()
    dn1_disk = [e for e in out if isinstance(e, SlowIo) and e.host == "dn1" and e.kind == "disk_write"]
    assert sum(e.count for e in dn1_disk) == 40 and len(dn1_disk) == 2
    assert all(e.ts_ms - (e.start_ts_ms or e.ts_ms) <= 10_400 for e in dn1_disk)


def test_a_burst_is_released_once_its_source_moves_on_or_falls_silent() -> None:
    bursts = Bursts()
    bursts.take([slow(T0, 400), slow(T0 + 300, 400)], None)
    later = JvmPause(ts_ms=T0 + 5_000, cluster="c", host="dn1", role="datanode", ref="f:x", pause_ms=1200, gc=True)
    out = bursts.take([later], None)
    assert [type(e).__name__ for e in out] == ["SlowIo", "JvmPause"] and out[0].count == 2  # type: ignore[union-attr]
    bursts.take([slow(T0 + 6_000, 400)], None)
    assert bursts.flush_idle(1_000, 2_000) == []  # first idle check: the clock starts
    assert bursts.flush_idle(2_500, 2_000) == []
    assert len(bursts.flush_idle(3_100, 2_000)) == 1


def test_a_held_burst_survives_a_snapshot() -> None:
    bursts = Bursts()
    bursts.take([slow(T0 + i * 300, 400) for i in range(5)], None)
    again = Bursts()
    again.restore(bursts.snapshot())
    assert again.flush_all() == bursts.flush_all()


def test_the_ingest_emits_one_event_for_a_storm_of_warning_lines() -> None:
    dn = "org.apache.hadoop.hdfs.server.datanode.DataNode"
    lines = [f"2026-12-01 09:36:{10 + i // 10:02d},{i % 10 * 100:03d} WARN {dn}: Slow BlockReceiver write data to disk "
             f"cost:{400 + i}ms (threshold=300ms), volume=file:/data/1/dfs/dn, blockId={1000 + i}" for i in range(50)]
    ingest = Ingest(IngestConfig())
    hint = SourceHint(host="dn1", file="hadoop-hdfs-datanode-dn1.log", role="datanode", family="hdfs")
    out = ingest.feed_block(("\n".join(lines) + "\n").encode(), file_ref="f", first_line=1, hint=hint).outputs
    out += ingest.flush_all()
    (burst,) = [e for e in out if isinstance(e, SlowIo)]
    assert (burst.count, burst.duration_ms, burst.block_id) == (50, 449, "1049")
    assert ingest.stats["events"]["slow_io"] == 1


def test_a_scanners_reconcile_warnings_become_one_burst_its_interval_counts_them_all() -> None:
    from correlator.core.correlate.evidence import interval_of, reconcile_bursts
    from correlator.core.events import DirectoryScanReconcile

    def fix(ts: int, block: int) -> DirectoryScanReconcile:
        return DirectoryScanReconcile(ts_ms=ts, cluster="c", host="dn2", role="datanode", ref=f"f:{ts}",
                                      action="add_to_memory", block=str(block))

    singles = [fix(T0 + i * 7, i) for i in range(1_000)]
    bursts = Bursts()
    held = bursts.take(list(singles), None) + bursts.flush_all()
    assert [(e.count, e.start_ts_ms, e.ts_ms) for e in held] == [(1_000, T0, T0 + 999 * 7)]  # type: ignore[attr-defined]
    one = [iv for e in held if (iv := interval_of(e)) is not None]
    many = [iv for e in singles if (iv := interval_of(e)) is not None]
    assert [(b.start_ms, b.end_ms, b.magnitude_ms, b.summary) for b in reconcile_bursts(one)] == \
        [(b.start_ms, b.end_ms, b.magnitude_ms, b.summary) for b in reconcile_bursts(many)]


@pytest.mark.parametrize("native", [False, True], ids=["stdlib reader", "native reader"])
def test_bursts_read_from_bytes_equal_the_parsers_path(monkeypatch: pytest.MonkeyPatch, native: bool) -> None:
    """A bad day's DataNode log (slow-IO storms, reconcile bursts, a clock step back) gives the same events when
    its blocks take the fast path (held bursts extended from their lines' bytes, runs of them by the write reader)
    as line by line through the parsers: the same bursts, counts, spans and worst lines."""
    from correlator.adapters.scanners import fastest_scanner
    from correlator.bench import incident
    from correlator.core.event_dicts import event_to_dict
    from correlator.core.events import Event

    monkeypatch.setattr(incident, "STORM_EVERY", 8_000)
    monkeypatch.setattr(incident, "RECONCILE_EVERY", 15_000)
    monkeypatch.setattr(incident, "RECONCILE_LINES", 600)
    lines = list(incident.incident_lines(4, 30_000, step_back_at=12_000))
    hint = SourceHint(host="dn4", file="/l/hadoop-hdfs-datanode-dn4.log", role="datanode", family="hdfs")

    def shape(out: list[object]) -> list[str]:
        return sorted(repr(sorted((k, v) for k, v in event_to_dict(o).items() if k != "ref"))
                      for o in out if isinstance(o, Event) and o.type != "source_progress")

    scanner = fastest_scanner() if native else None
    runs: list[BurstRun] = []
    if scanner is not None:
        take = scanner.write_reader.burst_run
        monkeypatch.setattr(scanner.write_reader, "burst_run", lambda *a: runs.append(run := take(*a)) or run)
    fast = Ingest(IngestConfig(), scanner)
    data = ("\n".join(lines) + "\n").encode()
    out: list[object] = []
    at, line = 0, 1
    while at < len(data):  # 1 MiB blocks cut at line ends, as the file reader cuts them
        end = data.rfind(b"\n", at, at + (1 << 20)) + 1
        read = fast.feed_block(data[at:end], file_ref="f", first_line=line, hint=hint)
        out += read.outputs
        at, line = end, line + read.newlines
    out += fast.flush_all()
    slow = Ingest(IngestConfig())
    reference = [o for i, ln in enumerate(lines) for o in slow.feed_line(ln, ref=f"f:{i + 1}", hint=hint)]
    reference += slow.flush_all()
    assert shape(out) == shape(reference)
    assert sum(getattr(o, "count", 0) for o in out if isinstance(o, SlowIo)) > 1_000
    assert not native or sum(count for run in runs for count, _, _ in run.extended) > 300  # runs were taken
