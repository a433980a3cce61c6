"""The simulated cluster: hosts, their clocks and log files, and a deterministic source of ids."""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass, field
from pathlib import Path

BLOCK_POOL = "BP-1473651231-10.20.30.40-1546300800000"
XFER_PORT = 9866


@dataclass(slots=True)
class Node:
    """One process that writes one log file (a DataNode, the NameNode, a JobManager, a TaskManager)."""

    host: str
    ip: str
    role: str
    file: str
    skew_ms: int = 0
    """How far this host's clock is ahead of true time."""
    storage: str = ""
    uuid: str = ""


@dataclass(slots=True)
class LogSet:
    """Lines per file, kept with their true time and arrival order, written sorted by (time, order)."""

    lines: dict[str, list[tuple[int, int, str]]] = field(default_factory=dict)
    seq: int = 0

    def add(self, file: str, ts_ms: int, text: str) -> None:
        self.seq += 1
        self.lines.setdefault(file, []).append((ts_ms, self.seq, text))

    def count(self, file: str) -> int:
        return len(self.lines.get(file, ()))

    def write(self, out_dir: Path) -> list[Path]:
        written = []
        for name in sorted(self.lines):
            path = out_dir / name
            path.parent.mkdir(parents=True, exist_ok=True)
            rows = sorted(self.lines[name])
            path.write_text("".join(text + "\n" for _, _, text in rows), encoding="utf-8")
            written.append(path)
        return written


class Ids:
    """Deterministic ids from one seeded generator: uuids, attempt ids, block ids, client names."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.next_block = 1107441000 + rng.randrange(0, 200)
        self.next_gs = 33718000 + rng.randrange(0, 200)

    def uuid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def hex32(self) -> str:
        return f"{self.rng.getrandbits(128):032x}"

    def block(self) -> tuple[int, int]:
        self.next_block += 1 + self.rng.randrange(0, 3)
        self.next_gs += 1
        return self.next_block, self.next_gs

    def client(self) -> str:
        return f"DFSClient_NONMAPREDUCE_{self.rng.randrange(-2**31, 2**31)}_{self.rng.randrange(1, 200)}"


def storage_id(rng: random.Random) -> str:
    return "DS-" + str(uuid.UUID(int=rng.getrandbits(128), version=4))


def datanode_info(node: Node) -> str:
    return f"DatanodeInfoWithStorage[{node.ip}:{XFER_PORT},{node.storage},DISK]"
