"""The lab's Kafka broker, for the scenarios whose job writes through an exactly-once Kafka sink: the project's own
`deploy/local/kafka.sh` (KRaft, broker and controller in one JVM, jars from Maven Central) on a loopback port of the
lab's, its state under the run directory, stopped by the pid the script keeps.

The broker checks for timed-out transactions every second (its default is ten), so that the moment it aborts one
is within a second of the transaction's timeout, as the scenarios' truth reads it from the broker's own log.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path

from cluster import ROOT, LabError

VERSION = "3.9.1"
"""The broker release (kafka.sh resolves its jars from Maven Central)."""
KAFKA_PORT = int(os.environ.get("LAB_KAFKA_PORT", "19492"))
SCRIPT = ROOT / "deploy" / "local" / "kafka.sh"
HOST = "lab-kafka"
"""The broker's log goes to `<logs>/lab-kafka/server.log`: Kafka's stock file name, in a folder naming its host."""
SERVER_EXTRA = "transaction.abort.timed.out.transaction.cleanup.interval.ms=1000\n"
ABORTED = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\] INFO .*Completed rollback of ongoing transaction "
                     r"for transactionalId (\S+) due to timeout")


class Broker:
    def __init__(self, run_dir: Path) -> None:
        self.state = run_dir / "kafka"
        self.env = {**os.environ, "KAFKA_VERSION": VERSION, "KAFKA_PORT": str(KAFKA_PORT),
                    "KAFKA_STATE_DIR": str(self.state),
                    "KAFKA_HEAP": "-Xms128m -Xmx384m -Duser.timezone=UTC", "KAFKA_SERVER_EXTRA": SERVER_EXTRA,
                    "PYTHON": "/nonexistent"}  # readiness from the broker's log line, not a client library

    @property
    def servers(self) -> str:
        return f"127.0.0.1:{KAFKA_PORT}"

    def start(self) -> None:
        done = subprocess.run(["bash", str(SCRIPT), "start"], env=self.env, capture_output=True, text=True,
                              timeout=180)
        if done.returncode != 0:
            raise LabError(f"the Kafka broker did not start: {done.stdout[-400:]} {done.stderr[-400:]}")

    def stop(self) -> None:
        subprocess.run(["bash", str(SCRIPT), "stop"], env=self.env, capture_output=True, timeout=60, check=False)

    def copy_log(self, logs: Path) -> Path:
        """The broker's server.log beside the daemons' logs (in its host's folder)."""
        dest = logs / HOST / "server.log"
        dest.parent.mkdir(parents=True, exist_ok=True)
        src = self.state / "logs" / "server.log"
        if src.exists():
            shutil.copyfile(src, dest)
        return dest

    def aborted(self) -> list[dict[str, str]]:
        """Each transaction the broker rolled back for its timeout, with when (UTC, as logged)."""
        src = self.state / "logs" / "server.log"
        out = []
        for line in src.read_text(errors="replace").splitlines() if src.exists() else []:
            m = ABORTED.match(line)
            if m:
                at = datetime.strptime(m[1], "%Y-%m-%d %H:%M:%S,%f").replace(tzinfo=UTC)
                out.append({"transactional_id": m[2], "at": at.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"})
        return out
