"""``correlator worker`` with one injected fault: while the file named by ``FAULT_FILE`` exists, the snapshot of one
stage raises — the correlate stage's, or raw ingest's with ``FAULT_STAGE=ingest`` — a stand-in for any bug a record
could trigger past the parsers' checks."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from correlator.cli import main
from correlator.stream import state

_target: Any = state.RawPartitionState if os.environ.get("FAULT_STAGE") == "ingest" else state.ClusterState
_dump = _target.dump


def _faulty_dump(self: Any) -> bytes:
    if Path(os.environ["FAULT_FILE"]).exists():
        raise RuntimeError("injected snapshot fault")
    result: bytes = _dump(self)
    return result


_target.dump = _faulty_dump

if __name__ == "__main__":
    import sys

    sys.argv = ["correlator", "worker"]
    main()
