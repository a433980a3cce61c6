"""The ingest boundary: bad input becomes a typed ParseError, never an exception; state snapshots round-trip."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from correlator.core.events import Event, SourceProgress
from correlator.core.ingest.ingest import Ingest, IngestConfig, SourceHint
from correlator.core.ingest.progress import thin as thin_progress
from correlator.core.ingest.records import ParseError

EXPIRED = ("{ts} INFO  org.apache.flink.runtime.checkpoint.CheckpointCoordinator     - Checkpoint 60 of job "
           "1a3bc71ac57f33961637adf340e9c28f expired before completing.")
PAUSE = ("2020-01-03 12:23:16,855 WARN org.apache.hadoop.util.JvmPauseMonitor: Detected pause in JVM or host machine "
         "(eg GC): pause of approximately 12345ms")


def _feed_all(ingest: Ingest, values: list[bytes], progress: bool = False, **kw: object) -> list[Event | ParseError]:
    """Outputs of feeding ``values``; ``source_progress`` events only when asked for."""
    out: list[Event | ParseError] = []
    for i, v in enumerate(values):
        out += ingest.feed(v, ref=f"t/0@{i}", **kw)  # type: ignore[arg-type]
    out += ingest.flush_all()
    return [o for o in out if progress or not (isinstance(o, Event) and o.type == "source_progress")]


class TestBadInput:
    def test_invalid_utf8_still_parses(self) -> None:
        """Invalid bytes are replaced; the record still becomes its event."""
        value = EXPIRED.format(ts="2020-01-02 17:18:53,301").encode() + b" \xff\xfe"
        ingest = Ingest(IngestConfig())
        [event] = _feed_all(ingest, [value])
        assert isinstance(event, Event) and event.type == "checkpoint_expired"
        assert ingest.stats["invalid_utf8"] == 1

    @pytest.mark.parametrize(
        ("value", "reason"),
        [
            (b"\x00\x01\x02\x03 binary \x00\xff", "binary"),
            (b"x" * (10 * 1024 * 1024), "line_too_long"),
            (b"2020-01-02 17:18:53,301 INFO " + b"y" * (2 * 1024 * 1024), "line_too_long"),
            (b'{"message": "2020-01-02 17:18:53,301 INFO', "bad_json"),
            (b'{"log": ["not", "a", "string"]}', "bad_envelope"),
            (EXPIRED.format(ts="1970-01-01 00:00:00,000").encode(), "bad_timestamp"),
            (EXPIRED.format(ts="2999-01-02 17:18:53,301").encode(), "bad_timestamp"),
            (EXPIRED.format(ts="2020-13-45 17:18:53,301").encode(), "bad_timestamp"),
            (b"Caused by: java.lang.Exception: Could not materialize checkpoint 3 for operator x.", "unknown_layout"),
        ],
    )
    def test_reasons(self, value: bytes, reason: str) -> None:
        """Each kind of bad input yields exactly one ParseError with its stable reason and a safe excerpt."""
        ingest = Ingest(IngestConfig())
        [error] = _feed_all(ingest, [value])
        assert isinstance(error, ParseError) and error.reason == reason
        assert error.ref == "t/0@0" and len(error.excerpt) <= 200 and error.excerpt.isprintable()
        assert ingest.stats["errors"] == {reason: 1}

    def test_noise_is_counted_not_returned(self) -> None:
        """Noise lines produce nothing and are counted."""
        ingest = Ingest(IngestConfig())
        noise = b"2020-01-02 17:18:53,301 INFO org.apache.hadoop.hdfs.server.datanode.DataNode: PacketResponder: x terminating"
        assert _feed_all(ingest, [noise] * 5) == []
        assert ingest.stats["noise"] == 5 and ingest.stats["lines"] == 5


class TestNeverRaises:
    @settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.lists(st.binary(max_size=300), max_size=8))
    def test_arbitrary_bytes(self, values: list[bytes]) -> None:
        """Arbitrary bytes yield only events and ParseErrors."""
        out = _feed_all(Ingest(IngestConfig()), values, now_ms=0)
        assert all(isinstance(o, (Event, ParseError)) for o in out)

    @settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(
        st.lists(
            st.one_of(
                st.text(max_size=200),
                st.sampled_from([EXPIRED.format(ts="2020-01-02 17:18:53,301"), PAUSE, "{", "{}", '{"message": 1}',
                                 "\tat x.y(Z.java:1)", "[2020-01-02T17:18:53.635+0800][info][gc] GC(1) Pause Young 1ms"]),
                st.builds(lambda a, b: a + b, st.sampled_from(["2020-01-02 17:18:53,301 ", "WARN ", "[", "12.5: ["]),
                          st.text(max_size=120)),
            ),
            max_size=10,
        ),
        st.sampled_from([None, "flink", "hdfs", "gc"]),
    )
    def test_arbitrary_text_near_real_layouts(self, lines: list[str], family: str | None) -> None:
        """Text that looks almost like headers, envelopes or GC lines never raises out of ``feed``."""
        out = _feed_all(Ingest(IngestConfig()), [line.encode() for line in lines], hint=SourceHint(family=family))
        assert all(isinstance(o, (Event, ParseError)) for o in out)

    @settings(max_examples=200, deadline=None)
    @given(st.dictionaries(st.sampled_from(["message", "log", "host", "@timestamp", "fields", "file", "timestamp"]),
                           st.one_of(st.none(), st.integers(), st.text(max_size=40), st.lists(st.integers(), max_size=3),
                                     st.dictionaries(st.text(max_size=5), st.text(max_size=5), max_size=3))))
    def test_arbitrary_envelopes(self, envelope: dict[str, object]) -> None:
        """Any JSON object as an envelope is decoded or rejected with a reason."""
        out = _feed_all(Ingest(IngestConfig()), [json.dumps(envelope).encode()])
        assert all(isinstance(o, (Event, ParseError)) for o in out)


class TestSnapshot:
    def test_restore_continues_the_open_record(self) -> None:
        """A record split across a snapshot is completed by the restored ingest exactly as without the restart."""
        lines = [PAUSE.encode(), b"GC pool 'ParNew' had collection(s): count=1 time=45ms", PAUSE.encode()]
        straight = _feed_all(Ingest(IngestConfig()), lines)
        first = Ingest(IngestConfig())
        out = first.feed(lines[0], ref="t/0@0")
        data = json.loads(json.dumps(first.snapshot()))
        second = Ingest.restore(IngestConfig(), data)
        out += second.feed(lines[1], ref="t/0@1") + second.feed(lines[2], ref="t/0@2") + second.flush_all()
        assert out == straight
        assert second.stats["lines"] == 3


class TestSourceProgress:
    """Coverage follows every line's time, noise included, at most one progress event per source per 10 s."""

    NOISE = "2026-12-01 09:{m:02d}:{s:02d},{ms:03d} INFO org.apache.hadoop.hdfs.StateChange: DIR* completeFile: /x"

    def _noise(self, count: int, step_ms: int) -> list[str]:
        out = []
        for i in range(count):
            t = i * step_ms
            out.append(self.NOISE.format(m=t // 60_000, s=t // 1000 % 60, ms=t % 1000))
        return out

    def test_streamed_noise_reports_at_most_one_per_bucket(self) -> None:
        ingest = Ingest(IngestConfig())
        hint = SourceHint(host="nn", role="namenode", family="hdfs")
        lines = self._noise(600, 250)  # 150 s of noise
        out = _feed_all(ingest, [line.encode() for line in lines], progress=True, hint=hint)
        progress = [o for o in out if isinstance(o, Event) and o.type == "source_progress"]
        assert 15 <= len(progress) <= 16  # one per 10 s bucket, and the last line at the end
        assert {(p.host, p.role) for p in progress} == {("nn", "namenode")}
        assert progress[0].ts_ms % 86_400_000 == (9 * 3600) * 1000
        assert progress[-1].ts_ms % 86_400_000 == (9 * 3600 + 149) * 1000 + 750
        assert [p.ts_ms for p in progress] == sorted(p.ts_ms for p in progress)

    @pytest.mark.parametrize("blocks", [True, False], ids=["blocks", "lines"])
    def test_a_clock_stepped_back_reports_the_latest_time_before_the_step(self, blocks: bool) -> None:
        """A bucket change reports the previous bucket's last line only when the clock went back: else the new line
        is later and already extends the source's span."""
        ingest = Ingest(IngestConfig())
        hint = SourceHint(host="nn", role="namenode", family="hdfs", file="hadoop-u-namenode-nn.log")
        seconds = [1, 9, 12, 19, -10, 25]  # from 09:00:00; 09:00:19 then 08:59:50 (an NTP step back)
        lines = [self.NOISE.format(m=0, s=s, ms=0) if s >= 0 else
                 self.NOISE.replace("09:", "08:").format(m=59, s=60 + s, ms=0) for s in seconds]
        if blocks:
            out = [o for line in lines for o in ingest.feed_block(f"{line}\n".encode(), file_ref="f", first_line=1,
                                                                  hint=hint).outputs]
        else:
            out = [o for line in lines for o in ingest.feed_line(line, ref="f", hint=hint)]
        out += ingest.flush_all()
        times = [datetime.fromtimestamp(o.ts_ms / 1000, UTC).strftime("%H:%M:%S")
                 for o in out if isinstance(o, SourceProgress)]
        assert times[0] == "09:00:01" and times[-1] == "09:00:25" and {"09:00:19", "08:59:50"} <= set(times)
        if not blocks:  # a block's last record closes only when the next block comes: its time is reported late
            assert times == ["09:00:01", "09:00:12", "09:00:19", "08:59:50", "09:00:25"]

    def test_block_path_reports_first_and_last_line(self) -> None:
        ingest = Ingest(IngestConfig())
        hint = SourceHint(host="nn", role="namenode", family="hdfs", file="hadoop-u-namenode-nn.log")
        block = ("\n".join(self._noise(400, 500)) + "\n").encode()
        out = ingest.feed_block(block, file_ref="f", first_line=1, hint=hint).outputs + ingest.flush_all()
        times = [o.ts_ms % 86_400_000 for o in out if isinstance(o, Event) and o.type == "source_progress"]
        assert times[0] == 9 * 3600 * 1000 and times[-1] == (9 * 3600 + 199) * 1000 + 500

    def test_a_block_reports_a_sources_span_not_each_bucket(self) -> None:
        """A block with a parsed record every 10 s of its 200 s reports the source's earliest and latest time."""
        ingest = Ingest(IngestConfig())
        hint = SourceHint(host="dn1", role="datanode", family="hdfs", file="hadoop-u-datanode-dn1.log")
        lines = self._noise(400, 500)
        for i in range(0, 400, 20):
            lines[i] = lines[i][:23] + PAUSE[23:]
        block = ("\n".join(lines) + "\n").encode()
        out = ingest.feed_block(block, file_ref="f", first_line=1, hint=hint).outputs
        assert sum(isinstance(o, Event) and o.type == "jvm_pause" for o in out) == 20
        times = [o.ts_ms % 86_400_000 for o in out if isinstance(o, SourceProgress)]
        assert times == [9 * 3600 * 1000, (9 * 3600 + 190) * 1000]
        # the counts say what was emitted, not the reports the thinning dropped
        assert ingest.stats["events"] == {"jvm_pause": 20, "source_progress": 2}

    def test_a_blocks_progress_keeps_each_sources_earliest_and_latest(self) -> None:
        """Only the reports between a source's earliest and latest are cut; other outputs keep their order."""
        def at(host: str, s: int) -> SourceProgress:
            return SourceProgress(ts_ms=s * 1000, cluster="c", host=host, role="datanode", ref=f"{host}:{s}")

        other = ParseError(reason="unknown_layout", detail="x", ref="r", excerpt="y")
        out: list[object] = [at("a", 10), at("b", 5), other, at("a", 20), at("a", 3), at("b", 5), at("a", 30),
                             at("a", 30)]
        assert thin_progress(out) == [at("b", 5), other, at("a", 3), at("b", 5), at("a", 30)]
        assert thin_progress(out[:3]) == out[:3]

    def test_unknown_role_waits_for_a_parsed_record(self) -> None:
        """A source that tells its role only later still reports its first line's time."""
        ingest = Ingest(IngestConfig())
        values = [line.encode() for line in self._noise(3, 20_000)] + [
            b"2026-12-01 09:01:00,000 INFO org.apache.hadoop.hdfs.server.datanode.DirectoryScanner: BlockPool BP-1 "
            b"Total blocks: 3, missing metadata files:0, missing block files:0, missing blocks in memory:0, "
            b"mismatched blocks:0"]
        out = _feed_all(ingest, values, progress=True, hint=SourceHint(host="dn"))
        progress = [o for o in out if isinstance(o, Event) and o.type == "source_progress"]
        assert progress and progress[0].ts_ms % 86_400_000 == 9 * 3600 * 1000

    @pytest.mark.parametrize("blocks", [True, False], ids=["blocks", "lines"])
    def test_each_source_reads_the_repeated_dst_hour_by_its_own_order(self, blocks: bool) -> None:
        """Across Berlin's fall-back (02:00-02:59 twice) a log well past 02:10 reads it as the second pass, another
        source's log, not that far yet, as the first, whichever source's lines came last; at the end of the input
        too, where a source's last line is reported by its own clock."""
        ingest = Ingest(IngestConfig(tz="Europe/Berlin"))
        line = "2023-10-29 02:{ms},000 INFO org.apache.hadoop.hdfs.StateChange: DIR* completeFile: /x"
        out: list[Event | ParseError] = []
        for host, ms in [("a", "50:00"), ("a", "10:00"), ("b", "12:00"), ("a", "10:05"), ("b", "14:00")]:
            hint = SourceHint(host=host, role="namenode", family="hdfs")
            text = line.format(ms=ms)
            if blocks:
                out += ingest.feed_block(f"{text}\n".encode(), file_ref=host, first_line=1, hint=hint).outputs
            else:
                out += ingest.feed_line(text, ref=host, hint=hint)
        out += ingest.flush_all()
        utc = {h: [datetime.fromtimestamp(o.ts_ms / 1000, UTC).strftime("%H:%M:%S")
                   for o in out if isinstance(o, SourceProgress) and o.host == h] for h in "ab"}
        assert utc["a"][0] == "00:50:00" and "01:10:00" in utc["a"] and utc["a"][-1] == "01:10:05"  # CEST, then CET
        assert set(utc["b"]) == {"00:12:00", "00:14:00"}  # CEST


class TestHostOfRawRecords:
    """Raw records: the key names host and file; a banner names later lines only on a keyed stream."""

    BANNER = (b"2020-01-02 08:59:38,521 INFO org.apache.hadoop.hdfs.server.datanode.DataNode: STARTUP_MSG: \n"
              b"/************************************************************\nSTARTUP_MSG: Starting DataNode\n"
              b"STARTUP_MSG:   host = dn02.example.com/10.20.30.42\n"
              b"************************************************************/")

    def hosts(self, key: bytes | None) -> set[str]:
        events = _feed_all(Ingest(IngestConfig()), [self.BANNER, PAUSE.encode()], key=key)
        return {e.host for e in events if isinstance(e, Event) and e.type == "jvm_pause"}

    def test_key_names_the_host(self) -> None:
        assert self.hosts(b"dn07.example.com:/var/log/hadoop/datanode.log") == {"dn07.example.com"}

    def test_standard_file_name_in_the_key(self) -> None:
        assert self.hosts(b"hadoop-hdfs-datanode-dn05.example.com.log") == {"dn05.example.com"}

    def test_banner_on_a_keyed_stream(self) -> None:
        assert self.hosts(b"stream-7") == {"dn02.example.com"}

    def test_banner_on_an_unkeyed_partition_names_no_other_line(self) -> None:
        assert self.hosts(None) == {"unknown"}
