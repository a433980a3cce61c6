"""Millions of finalized replicas on a stopped DataNode's disk, without writing one byte through HDFS.

A real DirectoryScanner stall needs a replica map in the millions: the scan compares every replica on disk with every
one in memory. Writing millions of blocks through HDFS would take hours on one machine, so the replicas are made the
way a DataNode leaves them on disk: an empty block file `blk_<id>` and its `blk_<id>_<gs>.meta`, in the finalized
subdir the block id maps to. The DataNode loads them like any other replicas when it starts (its `replicas` cache is
removed so the map is rebuilt from disk); the NameNode, which knows none of these ids, skips them in the first block
report after the DataNode registers again, so nothing is invalidated or replicated during a run.
"""

from __future__ import annotations

import multiprocessing
import os
import re
import shutil
import struct
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from cluster import USER, Cluster, LabError, Proc, wait_for

FIRST_ID = 1 << 40
"""Far above what the NameNode allocates (it starts at 2^30 + 1): no fabricated id can meet a real block."""
GENSTAMP = 1001
# A block's .meta header (BlockMetadataHeader): version 1, checksum type CRC32C (2), 512 bytes per checksum. An empty
# block has no checksums after it.
META_HEADER = struct.pack(">hbi", 1, 2, 512)
WRITERS = 2


def block_pool_dirs(data_dir: Path) -> list[Path]:
    """The block pools' `current` dirs of one DataNode data dir (`<data>/current/BP-*/current`)."""
    return sorted(p / "current" for p in (data_dir / "current").glob("BP-*") if (p / "current").is_dir())


def subdir_of(finalized: Path, block_id: int) -> Path:
    """Where a finalized replica lives (DatanodeUtil.idToBlockDir: two levels of 32 subdirs from the id's bits)."""
    return finalized / f"subdir{(block_id >> 16) & 0x1F}" / f"subdir{(block_id >> 8) & 0x1F}"


def _write_range(finalized: str, first: int, count: int) -> int:
    """Writes replicas `first`..`first+count-1`; one process of the pool, plain syscalls relative to an open subdir
    (a Path, or a full path walked per file, would make this several times slower)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
    dir_fd, current = -1, ""
    try:
        for block_id in range(first, first + count):
            d = str(subdir_of(Path(finalized), block_id))
            if d != current:
                if dir_fd >= 0:
                    os.close(dir_fd)
                os.makedirs(d, exist_ok=True)
                dir_fd, current = os.open(d, os.O_RDONLY | os.O_DIRECTORY), d
            os.close(os.open(f"blk_{block_id}", flags, 0o644, dir_fd=dir_fd))
            fd = os.open(f"blk_{block_id}_{GENSTAMP}.meta", flags, 0o644, dir_fd=dir_fd)
            os.write(fd, META_HEADER)
            os.close(fd)
    finally:
        if dir_fd >= 0:
            os.close(dir_fd)
    return count


def fabricate(data_dir: Path, count: int, first: int = FIRST_ID) -> tuple[Path, float]:
    """`count` finalized replicas in the DataNode's (only) block pool; returns that pool's dir and the seconds taken.

    The DataNode must be stopped: it would otherwise keep its old map and rewrite the cache on shutdown."""
    pools = block_pool_dirs(data_dir)
    if len(pools) != 1:
        raise LabError(f"expected one block pool under {data_dir}/current, found {len(pools)}")
    pool = pools[0]
    need = 2 * count + 10_000
    free = os.statvfs(data_dir).f_favail
    if free < need:
        raise LabError(f"{count} replicas need {need} inodes; {data_dir} has {free} free")
    (pool / "replicas").unlink(missing_ok=True)  # the replica-map cache: without it the map is read from disk
    t0 = time.monotonic()
    step = -(-count // WRITERS)
    chunks = [(str(pool / "finalized"), first + i, min(step, count - i)) for i in range(0, count, step)]
    with multiprocessing.get_context("fork").Pool(len(chunks)) as pool_:
        made = sum(pool_.starmap(_write_range, chunks))
    if made != count:
        raise LabError(f"wrote {made} of {count} replicas")
    return pool, time.monotonic() - t0


def remove(data_dir: Path) -> None:
    """Drops a DataNode's data dir (millions of files) once the run is over: fabricated replicas are big."""
    shutil.rmtree(data_dir, ignore_errors=True)


# ---- the scanning DataNode ----

REPLICAS = int(os.environ.get("LAB_SCAN_REPLICAS", "3000000"))
SCAN_HEAP = "6g"
"""3 M replicas take ~2.5 GB of replica map; the scan copies and sorts them on top of that."""
SCAN_SETTINGS: dict[str, object] = {
    # Scans back to back: the disk walk alone takes longer than this, so the next scan starts as one ends.
    "dfs.datanode.directoryscan.interval": 90,
    # The VolumeScanner would otherwise verify millions of (empty) replicas at full speed, a load of its own.
    "dfs.block.scanner.volume.bytes.per.second": 0,
    # The report after the restart is the DataNode's first, whose unknown replicas the NameNode skips; the next one
    # comes at a random time within this interval (6 h by default: one run met it after a minute), and the NameNode
    # then invalidates every fabricated replica, 1000 a heartbeat. Never within a run now (~24.8 days, the most).
    "dfs.blockreport.intervalMsec": 2**31 - 1,
}
FULL = {"dfs.datanode.du.reserved": 10**15}
"""A DataNode with no room left: the NameNode places no replica on it, so it is outside every write pipeline."""
LOAD_TIMEOUT = 900.0
SCAN_TIMEOUT = 600.0
STAMP = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3}) ", re.M)
HELD = re.compile(r"lockHeldTimeMs=(\d+) ms")
TOTALS = re.compile(r"Total blocks: (\d+)")


@dataclass(frozen=True)
class Hold:
    """One DirectoryScanner pass that held the dataset lock, as the DataNode logged it when it let go."""

    start: float
    end: float
    held_ms: int


def _stamp(text: str) -> float:
    return datetime.strptime(text, "%Y-%m-%d %H:%M:%S,%f").replace(tzinfo=UTC).timestamp()


def scanner_holds(log: Path, after: int = 0) -> list[Hold]:
    """Lock reports whose stack names `DirectoryScanner.scan`, past byte `after` of a DataNode log: the hold ends at
    the report's time (it is logged on release) and began `lockHeldTimeMs` earlier."""
    with log.open("rb") as f:
        f.seek(after)
        text = f.read().decode("utf-8", "replace")
    starts = [m.start() for m in STAMP.finditer(text)] + [len(text)]
    holds = []
    for a, b in zip(starts, starts[1:]):
        record = text[a:b]
        held = HELD.search(record)
        if held and "DirectoryScanner.scan" in record:
            end = _stamp(record[:23])
            holds.append(Hold(end - int(held.group(1)) / 1000, end, int(held.group(1))))
    return holds


def wait_hold(proc: Proc, after: int, timeout: float = SCAN_TIMEOUT) -> Hold:
    """The next scanner lock hold the DataNode logs past byte `after` (complete records only)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        holds = scanner_holds(proc.log, after) if proc.log.exists() else []
        if holds:
            return holds[0]
        if not proc.alive():
            raise LabError(f"{proc.name} exited while waiting for a directory scan; see {proc.log}")
        time.sleep(1.0)
    raise LabError(f"no DirectoryScanner lock hold in {proc.log} within {timeout:.0f}s")


def prepare(cluster: Cluster, host: str, full: bool = False, count: int = REPLICAS,
            say=print) -> dict[str, object]:  # noqa: ANN001 - the lab's say()
    """Stop `host`, give it `count` replicas, start it again with the scan settings (and no room for writes when
    `full`), and wait for its first scan: the run goes on with a DataNode whose every scan stalls its dataset lock.
    Returns what was measured (counts, seconds, the first hold)."""
    data = cluster.run_dir / "data" / host / "data"
    cluster.stop_datanode(host)
    _pool, made_s = fabricate(data, count)
    say(f"{host}: {count} replicas fabricated in {made_s:.0f}s")
    log = cluster.logs / f"hadoop-{USER}-datanode-{host}.log"
    after = log.stat().st_size if log.exists() else 0
    t0 = time.monotonic()
    proc = cluster.start_datanode(host, {**SCAN_SETTINGS, **(FULL if full else {})}, SCAN_HEAP, fixed_heap=True)
    wait_for(proc.log, re.compile(r"Successfully sent block report"), LOAD_TIMEOUT, proc, after)
    load_s = time.monotonic() - t0
    say(f"{host}: up again, replica map loaded and reported in {load_s:.0f}s")
    first = wait_hold(proc, after)
    say(f"{host}: first scan held the dataset lock {first.held_ms} ms")
    return {"host": host, "replicas": count, "fabricate_seconds": round(made_s, 1),
            "restart_to_block_report_seconds": round(load_s, 1), "heap": SCAN_HEAP, "outside_writes": full,
            "settings": {**SCAN_SETTINGS, **(FULL if full else {})}, "first_hold_ms": first.held_ms}
