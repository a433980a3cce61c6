"""``--layout``: a log4j pattern compiled once, each matching line rewritten into the layout the parsers read."""

from __future__ import annotations

from zoneinfo import ZoneInfo

import pytest

from correlator.core.ingest.ingest import Ingest, IngestConfig, SourceHint
from correlator.core.ingest.patterns import PatternError, TextLayout

CASES = [
    ("%-5p [%t] %d{dd MMM yyyy HH:mm:ss,SSS} %c - %m%n",
     "WARN  [DataXceiver for client at /10.0.0.7:4122 [Receiving block]] 01 Dec 2026 09:36:55,808 "
     "org.apache.hadoop.hdfs.server.datanode.DataNode - Slow BlockReceiver write data to disk cost:2003ms",
     "2026-12-01 09:36:55,808 WARN  org.apache.hadoop.hdfs.server.datanode.DataNode - Slow BlockReceiver write data "
     "to disk cost:2003ms"),
    ("[%d{ISO8601}][%-5p][%c] %m%n", "[2026-12-01T09:36:55,808][INFO ][org.apache.flink.X] Triggering checkpoint 3",
     "2026-12-01 09:36:55,808 INFO  org.apache.flink.X - Triggering checkpoint 3"),
    ("%d{UNIX_MILLIS} %p %c: %m%n", "1796117751576 INFO a.b.C: hello - world",
     "2026-12-01 09:35:51,576 INFO  a.b.C - hello - world"),
    ("%d{yyyy-MM-dd HH:mm:ss.SSSXXX} %highlight{%-5level} %logger{36} - %msg%n",
     "2026-12-01 10:36:55.808+01:00 INFO  org.x.Y - hi", "2026-12-01 09:36:55,808 INFO  org.x.Y - hi"),
    ("%d{HH:mm:ss.SSS} [%thread] %-5level %logger{36} - %msg%n", "09:36:55.808 [main] INFO  org.x.Y - a - b",
     "09:36:55,808 INFO  org.x.Y - a - b"),
    ("%5p %d{d/M/yy H:mm:ss} %c %X{trace} - %m%n", " INFO 1/2/26 9:05:07 org.x.Y abc123 - m",
     "2026-02-01 09:05:07,000 INFO  org.x.Y - m"),
]


@pytest.mark.parametrize(("pattern", "line", "rewritten"), CASES, ids=[c[0] for c in CASES])
def test_a_line_of_the_pattern_is_rewritten(pattern: str, line: str, rewritten: str) -> None:
    assert TextLayout.compile(pattern).line(line) == rewritten


def test_lines_the_pattern_does_not_match_pass_unchanged() -> None:
    layout = TextLayout.compile(CASES[0][0])
    for line in ("\tat org.apache.hadoop.X.y(X.java:12)", "Caused by: java.io.IOException: boom",
                 "2026-12-01 09:36:55,808 INFO org.x.Y: a stock line", ""):
        assert layout.line(line) == line


def test_a_zoned_stamp_is_written_in_the_run_zone() -> None:
    layout = TextLayout.compile("%d{ISO8601_OFFSET_DATE_TIME_HHCMM} %p %c - %m", ZoneInfo("Europe/Berlin"))
    assert layout.line("2026-12-01T09:00:00,250Z INFO a.B - x") == "2026-12-01 10:00:00,250 INFO  a.B - x"


@pytest.mark.parametrize(("pattern", "why"), [
    ("%p %c %m%n", "has no %d"), ("%d %p %c", "has no %m"), ("%d{hh:mm a} %m", "not supported"),
    ("%d{yyyy-MM-dd} %m", "no hours and minutes"), ("%d{'x} %m", "unclosed quote"),
])
def test_an_unusable_pattern_is_refused_with_the_reason(pattern: str, why: str) -> None:
    with pytest.raises(PatternError, match=why):
        TextLayout.compile(pattern)


def test_streamed_records_and_file_blocks_read_the_pattern_alike() -> None:
    """The worker's per-record path and the offline block path give the same events for the same lines."""
    pattern = "%-5p [%t] %d{dd MMM yyyy HH:mm:ss,SSS} %c - %m%n"
    lines = [
        "INFO  [main] 01 Dec 2026 09:36:55,641 org.apache.flink.runtime.checkpoint.CheckpointCoordinator - Triggering "
        "checkpoint 3 (type=CheckpointType{name='Checkpoint', sharingFilesStrategy=FORWARD_BACKWARD}) @ 1796117815641 "
        "for job f7b7554f1d383aa4c98c41a7669dd349.",
        "INFO  [main] 01 Dec 2026 09:37:05,641 org.apache.flink.runtime.checkpoint.CheckpointCoordinator - Checkpoint 3 "
        "of job f7b7554f1d383aa4c98c41a7669dd349 expired before completing.",
    ]
    config = IngestConfig(layout=pattern)
    hint = SourceHint(host="jm", file="flink-x-standalonesession-0-jm.log", family="flink")
    block = Ingest(config)
    by_block = block.feed_block(("\n".join(lines) + "\n").encode(), file_ref="f", first_line=1, hint=hint).outputs
    by_block += block.flush_all()
    stream = Ingest(config)
    headers = {"host": b"jm", "file": b"flink-x-standalonesession-0-jm.log"}
    by_record = stream.feed_records([ln.encode() for ln in lines], [0, 1], stream_ref="t/0", headers=headers)
    by_record += stream.flush_all()
    kinds = sorted(getattr(e, "type", "") for e in by_block if getattr(e, "type", "") != "source_progress")
    assert kinds == ["checkpoint_expired", "checkpoint_triggered"], kinds
    assert sorted((e.type, e.ts_ms) for e in by_block if hasattr(e, "ts_ms") and e.type != "source_progress") == \
        sorted((e.type, e.ts_ms) for e in by_record if hasattr(e, "ts_ms") and e.type != "source_progress")
