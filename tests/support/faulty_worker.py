"""``correlator worker`` with one injected fault: while the file named by ``FAULT_FILE`` exists, the correlate
stage's snapshot raises — a stand-in for any bug a record could trigger past the parsers' checks."""

from __future__ import annotations

import os
from pathlib import Path

from correlator.cli import main
from correlator.stream import state

_dump = state.ClusterState.dump


def _faulty_dump(self: state.ClusterState) -> bytes:
    if Path(os.environ["FAULT_FILE"]).exists():
        raise RuntimeError("injected snapshot fault")
    return _dump(self)


state.ClusterState.dump = _faulty_dump  # type: ignore[method-assign]

if __name__ == "__main__":
    import sys

    sys.argv = ["correlator", "worker"]
    main()
