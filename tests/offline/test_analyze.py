"""``correlator analyze``: verdict JSON lines, byte-identical across runs, and a readable text form."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from correlator.cli import cli

GOLDEN = Path(__file__).parents[1] / "golden" / "scenarios"


def run(*args: str) -> tuple[int, bytes, str]:
    result = CliRunner().invoke(cli, ["analyze", *args])
    return result.exit_code, result.stdout_bytes, result.stderr


class TestAnalyzeCommand:
    def test_seed_prints_one_contract_verdict(self) -> None:
        """One JSON object per line in the verdict shape, naming the scanner on dn02 with HDFS-15415."""
        code, out, _ = run(str(GOLDEN / "seed"))
        assert code == 0
        [line] = out.decode().splitlines()
        v = json.loads(line)
        assert v["schema"] == "correlator.verdict/v1"
        assert (v["job_id"], v["checkpoint_id"]) == ("1a3bc71ac57f33961637adf340e9c28f", 60)
        assert v["root_cause"]["code"] == "HDFS_DIRECTORY_SCAN"
        assert v["root_cause"]["hosts"] == ["dn02.example.com"]
        assert v["root_cause"]["known_issue"] == "HDFS-15415"
        assert set(v) >= {"failure", "alternatives", "evidence", "remediation", "coverage", "decided_at"}

    def test_output_is_byte_identical_across_runs(self) -> None:
        """Same input, same bytes (ordering, ids and field order are deterministic)."""
        first = run(str(GOLDEN / "two-jobs"))[1]
        assert first and first == run(str(GOLDEN / "two-jobs"))[1]

    def test_verdicts_are_ordered_by_failure_time(self) -> None:
        code, out, _ = run(str(GOLDEN / "recurring"))
        times = [json.loads(line)["failure"]["failed_at"] for line in out.decode().splitlines()]
        assert code == 0 and len(times) == 4 and times == sorted(times)

    def test_text_format_is_a_human_summary(self) -> None:
        code, out, _ = run(str(GOLDEN / "seed"), "--format", "text")
        text = out.decode()
        assert code == 0
        assert "checkpoint 60 of job 1a3bc71ac57f33961637adf340e9c28f failed" in text
        assert "cause: HDFS_DIRECTORY_SCAN" in text and "dfs.datanode.directoryscan.interval" in text

    def test_no_failures_prints_no_verdict_says_why_and_succeeds(self) -> None:
        code, out, err = run(str(GOLDEN / "no-failures"))
        assert (code, out) == (0, b"") and "checkpoints triggered, none failed" in err

    def test_missing_path_is_a_runtime_failure(self, tmp_path: Path) -> None:
        code, _, err = run(str(tmp_path / "absent.log"))
        assert code == 1 and "absent.log" in err

    def test_no_progress_bar_without_a_terminal(self) -> None:
        """stderr holds only the closing summary when it is not a TTY: a line per file, then the totals."""
        err = run(str(GOLDEN / "seed"))[2]
        lines = err.splitlines()
        assert "\r" not in err and "analyzing" not in err
        assert all(line.startswith("correlator: analyze: ") for line in lines), lines
        assert len(lines) == len(list((GOLDEN / "seed").glob("*.log"))) + 1, lines
        assert "from its daemon file name" in lines[0] and lines[-1].startswith("correlator: analyze: done: ")


class TestRealExcerpt:
    def test_the_incident_blog_lines_alone_are_insufficient_data(self) -> None:
        """The real incident excerpt (JobManager lines only) is one failed checkpoint 60 with no storage logs."""
        sample = Path(__file__).parents[1] / "data" / "samples" / "real" / "flink-O-incident-blog.log"
        code, out, _ = run(str(sample))
        [v] = [json.loads(line) for line in out.decode().splitlines()]
        assert code == 0
        assert (v["checkpoint_id"], v["failure"]["kind"]) == (60, "async_materialize")
        assert v["failure"]["failed_at"] == "2020-01-02T17:18:53.337Z"
        assert v["root_cause"]["code"] == "INSUFFICIENT_DATA"
        assert any(m["role"] == "datanode" for m in v["coverage"]["missing"])
