"""The layering rules of ARCHITECTURE.md, enforced."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_import_contracts_hold() -> None:
    """import-linter: the core imports no I/O library and layers point downward."""
    result = subprocess.run(
        [str(Path(sys.executable).with_name("lint-imports")), "--no-cache"], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout[-3000:]


def test_offline_path_loads_no_service_client() -> None:
    """Importing the offline analyzer and parser loads none of faust, redis, confluent_kafka."""
    code = (
        "import sys, correlator.offline.analyze, correlator.offline.files, correlator.cli.analyze, correlator.cli.parse;"
        "print(sorted(m for m in ('faust', 'redis', 'confluent_kafka', 'aiokafka') if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_core_type_checks_strictly() -> None:
    """mypy --strict over the pure core (configured in pyproject): its types are part of its contract."""
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental"], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout[-3000:]
