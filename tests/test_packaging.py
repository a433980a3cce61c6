"""What `pip install .` gives a user outside the clone: the command's topic definitions and schemas inside the
package, found from any directory."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_wheel_carries_topics_and_schemas_and_finds_them_from_anywhere(tmp_path: Path) -> None:
    """Also as a user runs it: `topics apply --dry-run` lists the definitions (with no cluster to compare them with,
    it says so and fails), `schema feedback` prints the feedback record's schema."""
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path / "dist"), str(ROOT)],
                   check=True, capture_output=True, timeout=300)
    [wheel] = (tmp_path / "dist").glob("correlator-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    topics = sorted(Path(n).name for n in names if n.startswith("correlator/topics/") and n.endswith(".yaml"))
    assert topics == sorted(p.name for p in (ROOT / "src" / "correlator" / "topics").glob("*.yaml")) and topics
    assert "correlator/schemas/verdict-v1.schema.json" in names
    installed = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(installed)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    probe = ("from correlator.adapters.topics import load_specs; from correlator.config import Settings; "
             "import correlator; print(correlator.__file__); print(len(load_specs(None, Settings(_env_file=None))))")
    out = subprocess.run([sys.executable, "-c", probe], cwd=elsewhere, env={"PYTHONPATH": str(installed)},
                         capture_output=True, text=True, timeout=60, check=True).stdout.split()
    assert out[0].startswith(str(installed)) and int(out[1]) == len(topics)

    cli = [sys.executable, "-m", "correlator.cli"]
    env = {"PYTHONPATH": str(installed), "CORRELATOR_BOOTSTRAP_SERVERS": "127.0.0.1:9"}  # nothing listens there
    dry = subprocess.run([*cli, "topics", "apply", "--dry-run"], cwd=elsewhere, env=env, capture_output=True,
                         text=True, timeout=60)
    listed = [line.split()[1].rstrip(":") for line in dry.stdout.splitlines() if line.startswith("define ")]
    assert dry.returncode == 1 and len(listed) == len(topics) and "correlator.verdicts" in listed, dry.stdout
    assert "not compared with the cluster" in dry.stderr
    schema = subprocess.run([*cli, "schema", "feedback"], cwd=elsewhere, env=env, capture_output=True, text=True,
                            timeout=60, check=True).stdout
    assert '"urn:correlator:schema:feedback:v1"' in schema
