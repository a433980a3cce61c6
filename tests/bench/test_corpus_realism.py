"""The generated bad-day corpus is no kinder to the reader than the lab's real DataNode logs.

Real logs are the yardstick (``correlator.bench.realism``): where a generated corpus has fewer interleaved writes,
fewer small slow writes or fewer continuation lines than the real ones, the bench would report speed the real logs
do not get.
"""

from __future__ import annotations

import itertools

from correlator.bench.incident import incident_lines
from correlator.bench.real import LAB_DIR, real_files, real_lines
from correlator.bench.realism import shape_of


def _real_datanode_lines() -> list[bytes]:
    files = [p for p in real_files(LAB_DIR) if "-datanode-" in p.name]
    assert len(files) >= 30, "the lab's DataNode logs are the yardstick"
    return [line for path in files for line in path.read_bytes().splitlines()]


def test_the_bad_day_corpus_is_no_kinder_than_the_real_datanode_logs() -> None:
    real = shape_of(_real_datanode_lines())
    generated = shape_of(line.encode() for line in incident_lines(1, 60_000))
    assert real.writes > 1000 and generated.writes > 1000
    assert generated.kinder_than(real) == [], f"generated: {generated}; real: {real}"


def test_the_real_corpus_keeps_the_real_logs_shape() -> None:
    """Laying the files end to end (stamps and block ids shifted) must not change what makes them hard."""
    real = shape_of(_real_datanode_lines())
    laid = shape_of(itertools.islice((line for line in real_lines(LAB_DIR)), 400_000))
    assert laid.continuation >= 0.8 * real.continuation
    assert laid.small_and_slow >= 0.5 * real.small_and_slow


def test_the_measures_see_what_they_measure() -> None:
    stamp = "2020-01-02 08:00:0{}"
    start = stamp + ",000 INFO DataNode: Receiving BP-1:blk_{}_1 src: /a:1 dest: /b:2"
    end = (stamp + ",500 INFO DataNode.clienttrace: src: /a:1, dest: /b:2, bytes: {}, op: HDFS_WRITE, cliID: c, "
           "offset: 0, srvID: s, blockid: BP-1:blk_{}_1, duration(ns): {}")
    lines = [start.format(0, 1), start.format(1, 2), end.format(2, 10, 1, 2_000_000_000), "\tat a.b(C.java:1)",
             end.format(3, 10 << 30, 2, 2_000_000_000)]
    shape = shape_of(line.encode() for line in lines)
    assert (shape.open_at_start, shape.small_and_slow, shape.continuation) == (0.5, 0.5, 0.2)
