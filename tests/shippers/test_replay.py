"""``correlator replay DIR`` ships only the log files of a directory, as ``analyze`` reads it, naming what it skips."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.shippers.verdicts import GOLDEN, raw_records
from tests.support.worker import Stack

pytestmark = [pytest.mark.integration]


def test_replay_skips_files_that_are_no_logs(stack: Stack, tmp_path: Path) -> None:
    logs = tmp_path / "seed"
    shutil.copytree(GOLDEN / "seed", logs)
    (logs / "expected.json").write_text(json.dumps({"verdicts": [{"code": "HDFS_DIRECTORY_SCAN"}]}, indent=2))
    (logs / "notes.txt").write_text("collected on the 2nd\n")
    (logs / "core.bin").write_bytes(bytes(range(256)) * 8)
    log_lines = sum(len(p.read_bytes().splitlines()) for p in (GOLDEN / "seed").iterdir())

    result = stack.cli("replay", str(logs))
    assert result.returncode == 0, result.stderr
    skipped = [line for line in result.stderr.splitlines() if line.startswith("replay: skipping ")]
    assert sorted(Path(line.split(" ")[2].rstrip(":")).name for line in skipped) == ["core.bin", "expected.json",
                                                                                      "notes.txt"]
    files = len(list((GOLDEN / "seed").iterdir()))
    assert f"replayed {log_lines} lines from {files} files" in result.stderr
    shipped = raw_records(stack, "logs_flink") + raw_records(stack, "logs_hdfs")
    assert len(shipped) == log_lines
    assert not any(b"HDFS_DIRECTORY_SCAN\"" in value or value.startswith(b"{") for _, value in shipped)
