"""The image's install step, as its Dockerfile runs it, in a fresh venv (no base image can be pulled here): the
runtime lock alone, then the package without dependencies; what it leaves runs, checks clean and holds no test tool."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_images_install_step_leaves_a_working_command_and_no_test_tool(tmp_path: Path) -> None:
    make = shutil.which("make")
    assert make is not None
    venv = tmp_path / "image"
    done = subprocess.run([make, "--no-print-directory", "image-install-check", f"IMAGE_VENV={venv}"], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "no test tool" in done.stdout
    dockerfile = (ROOT / "deploy" / "Dockerfile").read_text()
    assert "requirements-runtime.lock" in dockerfile and "requirements.lock" not in dockerfile.replace(
        "requirements-runtime.lock", "")
    assert (venv / "bin" / "correlator").exists()
