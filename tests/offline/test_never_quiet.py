"""analyze and parse never end silently: what was skipped or rejected is said on stderr; nothing recognised is exit 1."""

from __future__ import annotations

import io
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from correlator.cli import cli
from correlator.offline.reading import Overlong, bounded_lines, line_blocks

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "scenarios"
HEADER = b"2020-01-02 17:18:53,337 WARN org.apache.hadoop.hdfs.server.datanode.DataNode: Slow BlockReceiver "


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def binary_dir(tmp_path: Path) -> Path:
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "datanode.log").write_bytes(os.urandom(50_000))
    (tmp_path / "bin" / "core").write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(4000))
    return tmp_path / "bin"


@pytest.mark.parametrize("command", ["analyze", "parse"])
class TestNothingRecognised:
    def test_binary_files(self, command: str, binary_dir: Path) -> None:
        code, out, err = run(command, str(binary_dir))
        assert (code, out) == (1, "")
        assert "no log record recognised" in err and "2 skipped (2 binary)" in err

    def test_empty_directory(self, command: str, tmp_path: Path) -> None:
        code, _, err = run(command, str(tmp_path))
        assert code == 1 and "no log record recognised: 0 files read" in err

    def test_unrecognised_layout(self, command: str, tmp_path: Path) -> None:
        (tmp_path / "notes.txt").write_text("dear diary\nnothing happened today\n")
        code, _, err = run(command, str(tmp_path))
        assert code == 1 and "1 skipped (1 unrecognised layout)" in err

    def test_one_line_beyond_every_limit(self, command: str, tmp_path: Path) -> None:
        """A 9 MB single-line file is cut where it is read (memory stays bounded) and reported as too long."""
        (tmp_path / "datanode.log").write_bytes(HEADER + b"x" * 9_000_000 + b"\n")
        code, _, err = run(command, str(tmp_path))
        assert code == 1 and "1 lines too long" in err.splitlines()[-1]


def test_logs_without_a_failed_checkpoint_say_why_there_is_no_verdict(tmp_path: Path) -> None:
    """Only a DataNode's log: no Flink checkpoint at all. The seed's JobManager log without its failure: checkpoints
    that all completed. Either way no verdict, exit 0, and the reason on stderr."""
    datanode = tmp_path / "dn" / "hadoop-hdfs-datanode-dn1.log"
    datanode.parent.mkdir()
    datanode.write_bytes(HEADER + b"write data to disk cost:1873ms (threshold=300ms), volume=file:/d/1, blockId=1\n")
    code, out, err = run("analyze", str(datanode.parent))
    assert (code, out) == (0, "") and "no verdict: no Flink checkpoint in these logs" in err

    flink = tmp_path / "jm" / "flink-jobmanager.log"
    flink.parent.mkdir()
    job = "1a3bc71ac57f33961637adf340e9c28f"
    flink.write_text("".join(
        f"2020-01-02 10:0{n}:00,000 INFO  org.apache.flink.runtime.checkpoint.CheckpointCoordinator    [] - "
        f"{phrase}" for n in range(3) for phrase in (
            f"Triggering checkpoint {n + 1} (type=CHECKPOINT) @ 1577959200000 for job {job}.\n",
            f"Completed checkpoint {n + 1} for job {job} (8872 bytes in 3120 ms).\n")))
    code, out, err = run("analyze", str(flink.parent))
    assert (code, out) == (0, "") and "no verdict: 3 checkpoints triggered, none failed" in err


def test_skipped_files_next_to_good_ones_are_reported_but_succeed(binary_dir: Path) -> None:
    shutil.copytree(GOLDEN / "seed", binary_dir / "seed")
    code, out, err = run("analyze", str(binary_dir))
    assert code == 0 and out.count("\n") >= 1
    last = err.splitlines()[-1]
    assert last.startswith("correlator: analyze: done:") and "2 skipped (2 binary)" in last
    skipped = [line for line in err.splitlines() if ": skipped: " in line]
    assert len(skipped) == 2 and all("binary" in line for line in skipped), skipped


def test_a_clean_run_says_only_what_it_read() -> None:
    """A line per file (how it was read, whose it is) and the totals; nothing skipped, rejected or guessed."""
    err = run("analyze", str(GOLDEN / "seed"))[2]
    assert "skipped" not in err and "rejected" not in err and "guess" not in err, err
    assert err.splitlines()[-1].startswith("correlator: analyze: done: 8 files read;")


class TestBoundedReading:
    def test_blocks_cut_long_lines_and_keep_the_rest(self) -> None:
        data = b"a\n" + b"x" * 100 + b"\nshort\n" + b"y" * 30 + b"\nend"
        seen = Overlong()
        blocks = list(line_blocks(io.BytesIO(data), 16, 4, seen))
        assert b"".join(blocks).split(b"\n") == [b"a", b"x" * 20, b"short", b"y" * 20, b"end", b""]
        assert seen.lines == 2 and all(b.endswith(b"\n") for b in blocks)

    def test_lines_cut_at_the_limit(self) -> None:
        seen = Overlong()
        lines = list(bounded_lines(io.BytesIO(b"ok\n" + b"z" * 5000 + b"\nnext\n"), 100, seen))
        assert lines == [b"ok\n", b"z" * 101, b"next\n"] and seen.lines == 1
