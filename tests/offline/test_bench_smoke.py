"""A tiny run of ``correlator bench parse``: it prints the rates and the ratios (never a full-size run here)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from correlator.bench.datanode import datanode_lines, routine_share
from correlator.cli import cli


def test_bench_parse_small() -> None:
    """With 2 MiB corpora the command prints both corpora, our rates, the naive loop, grep and the ratios."""
    result = CliRunner().invoke(cli, ["bench", "parse", "--size-mb", "2"])
    assert result.exit_code == 0, result.output
    for text in ("corpus 'datanode'", "corpus 'incident'", "corpus 'mixed'", "correlator (offline path", "correlator parse FILE",
                 "correlator analyze FILE", "ratio correlator analyze / grep", "write reader only: native",
                 "naive loop", "grep -cE", "ratio ours / naive", "ratio ours / grep", "CPU us/line", "peak RSS", "start-up",
                 "clock step back: offline path", "best of 3 interleaved rounds", "round by round"):
        assert text in result.output


def test_the_real_corpus_reads_the_lab_logs_it_is_given(tmp_path: Path) -> None:
    """An installed package carries no lab logs: ``--real-dir`` names them, and a folder without them is refused."""
    empty = CliRunner().invoke(cli, ["bench", "parse", "--kind", "real", "--real-dir", str(tmp_path), "--size-mb", "1"])
    assert empty.exit_code == 2 and "none in" in empty.output and "--real-dir" in empty.output
    run = tmp_path / "3.4.1-2.1.1" / "slow-disk"
    run.mkdir(parents=True)
    lab = Path(__file__).resolve().parents[1] / "data" / "lab" / "3.4.1-2.1.1" / "slow-disk"
    for log in lab.glob("hadoop-*-datanode-*.log"):
        (run / log.name).write_bytes(log.read_bytes())
    given = CliRunner().invoke(cli, ["bench", "parse", "--kind", "real", "--real-dir", str(tmp_path), "--size-mb", "1"])
    assert given.exit_code == 0, given.output
    assert f"logs of the lab's runs in {tmp_path}" in given.output and "ratio ours / grep" in given.output


class TestDataNodeCorpus:
    def test_mostly_routine_block_writes(self) -> None:
        """At least half of a busy DataNode's lines are routine block-write lines. Write lines are in time order;
        some reads are stamped a few ms before the line above them, as threads waiting for log4j's appender are."""
        lines = list(datanode_lines(3, 20_000))
        assert len(lines) == 20_000
        assert routine_share(lines) >= 0.5
        writes = [line for line in lines if "op: HDFS_READ" not in line]
        assert writes == sorted(writes, key=lambda line: line[:23])
        earlier = [b for a, b in zip(lines, lines[1:]) if b[:23] < a[:23]]
        assert earlier and all("op: HDFS_READ" in line for line in earlier)
        assert any(b[:19] < a[:19] for a, b in zip(lines, lines[1:]))  # across a second's edge too
        assert any("op: HDFS_READ" in line for line in lines)

    def test_the_disorder_it_imitates_is_in_a_real_log(self) -> None:
        """The lab's real Flink 1.20.1 TaskManager log (log4j2, as Hadoop's log4j stamps before it appends) has
        lines stamped a few ms before the line above them."""
        from tests.support.services import ROOT

        path = ROOT / "tests/data/lab/3.3.6-1.20.1/task-error/flink-root-taskexecutor-0-lab-tm.log"
        stamps = [line[:23] for line in path.read_text(encoding="utf-8").splitlines() if line[:4].isdigit()]
        earlier = [(a, b) for a, b in zip(stamps, stamps[1:]) if b < a]
        assert ("2026-12-01 09:41:32,431", "2026-12-01 09:41:32,428") in earlier
        assert all(b[:16] == a[:16] for a, b in earlier)  # by ms, never by minutes


class TestIncidentCorpus:
    def test_a_bad_day_in_the_shares_it_claims(self) -> None:
        """Two in five writes take a second or more, slow-IO and reconcile warnings come in bursts, lock warnings
        at most one of each kind per 10 s with their stack traces, the clock steps back once."""
        import re

        from correlator.bench.incident import CLOCK_STEP_BACK_MS, LOCK_LOG_GAP_MS, RECONCILE_LINES, incident_lines

        lines = list(incident_lines(2, 300_000))
        took = [int(m[1]) // 1_000_000 for ln in lines if (m := re.search(r"op: HDFS_WRITE.*duration\(ns\): (\d+)", ln))]
        assert 0.35 <= sum(1 for t in took if t >= 1000) / len(took) <= 0.45
        assert sum(1 for ln in lines if "from memory with missing block file" in ln
                   or "Added missing block to memory" in ln) >= RECONCILE_LINES
        assert sum(1 for ln in lines if " Slow " in ln) > len(lines) // 20

        def ms(line: str) -> int:
            h, m, s = line[11:23].replace(",", ":").split(":")[:3]
            return (int(h) * 3600 + int(m) * 60 + int(s)) * 1000 + int(line[20:23])

        for phrase in ("Lock held time above threshold", "Waited above threshold"):  # InstrumentedLock's own gap
            logged = [ms(ln) for ln in lines if phrase in ln]
            assert len(logged) >= 2 and all(b - a >= LOCK_LOG_GAP_MS for a, b in zip(logged, logged[1:]) if b > a)
            trace = lines.index(next(ln for ln in lines if phrase in ln)) + 1
            assert lines[trace].startswith("org.apache.hadoop.util.StringUtils.getStackTrace(")

        newest, steps = 0, 0
        for line in lines:
            if not line[:4].isdigit():  # a stack trace's lines
                continue
            t = ms(line)
            steps += t < newest - CLOCK_STEP_BACK_MS // 2
            newest = max(newest, t) if t >= newest - CLOCK_STEP_BACK_MS // 2 else t
        assert steps == 1
