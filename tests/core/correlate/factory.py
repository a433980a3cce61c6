"""Hand-built event streams for engine tests: the seed incident and its variations, without any parser."""

from __future__ import annotations

from correlator.core.events import (
    BlockWrite,
    CheckpointCompleted,
    CheckpointExpired,
    CheckpointFailed,
    CheckpointTriggered,
    DaemonStart,
    DatasetLockHeld,
    DirectoryScanReconcile,
    DirectoryScanStats,
    Event,
    HdfsClientSlow,
    JvmPause,
    SlowIo,
    SourceProgress,
    TaskStatus,
)

T0 = 1_577_956_723_295  # 2020-01-02 09:18:43.295 UTC, the trigger of checkpoint 60
JOB = "1a3bc71ac57f33961637adf340e9c28f"
BP = "BP-1473651231-10.20.30.40-1546300800000"
BLOCK = f"{BP}:blk_1107441237_33718412"
PATH = f"hdfs:/saas/app/flink/checkpoints/{JOB}/chk-60/253fc668-9241-41c7-994d-3e72aa7281ef"
DN_IPS = {"dn02.example.com": "10.20.30.42", "dn03.example.com": "10.20.30.43", "dn04.example.com": "10.20.30.44"}
PIPELINE = tuple(f"{ip}:9866" for ip in DN_IPS.values())


def ev(cls: type[Event], at: int, host: str, role: str, **fields: object) -> Event:
    return cls(ts_ms=at, cluster="default", host=host, role=role, ref=f"{host}:{at - T0}", **fields)  # type: ignore


def noise(start: int, end: int, step: int = 20_000) -> list[Event]:
    """Healthy traffic: completed checkpoints on the JM, quick block writes on every DataNode."""
    out: list[Event] = []
    for i, t in enumerate(range(start, end, step)):
        for n, (host, ip) in enumerate(sorted(DN_IPS.items())):
            blk = f"{BP}:blk_{1107400000 + i * 10 + n}_1"
            out.append(ev(BlockWrite, t + n, host, "datanode", block=blk, src="/10.20.30.41:50000",
                          dest=f"/{ip}:9866"))
            out.append(ev(BlockWrite, t + n + 30, host, "datanode", block=blk, src="/10.20.30.41:50000",
                          dest=f"/{ip}:9866", duration_ms=2))
        out.append(ev(CheckpointCompleted, t + 5, "jm01.example.com", "jobmanager", job_id=JOB,
                      checkpoint_id=1000 + i, duration_ms=40))
    return out


def read_too(start: int, end: int, step: int = 20_000) -> list[Event]:
    """The NameNode's and the TaskManager's logs running over ``[start, end)``: lines of no finding."""
    return [ev(SourceProgress, t, host, role) for t in range(start, end, step)
            for host, role in (("nn01.example.com", "namenode"), ("tm01.example.com", "taskmanager"))]


def failure(chk: int = 60, at: int = T0, write_ms: int = 37_829, job: str = JOB, with_client: bool = True,
            timeout_ms: int = 10_000) -> list[Event]:
    """Flink side of a slow state write: trigger, expiry after the timeout, async failure when the write ends."""
    path = PATH.replace("chk-60", f"chk-{chk}").replace(JOB, job)
    out = [
        ev(CheckpointTriggered, at, "jm01.example.com", "jobmanager", job_id=job, checkpoint_id=chk, trigger_ts_ms=at),
        ev(CheckpointExpired, at + timeout_ms + 2, "jm01.example.com", "jobmanager", job_id=job, checkpoint_id=chk),
        ev(CheckpointFailed, at + write_ms, "tm01.example.com", "taskmanager", checkpoint_id=chk,
           kind="async_materialize", operator="Source: analytics -> Map (1/1)", path=path,
           message=f"Could not flush and close the file system output stream to {path}"),
        ev(TaskStatus, at + write_ms + 3, "jm01.example.com", "jobmanager", job_id=job, task="Source (1/1)",
           from_state="RUNNING", to_state="FAILED",
           cause=f"AsynchronousException: Could not materialize checkpoint {chk} for operator Source (1/1)."),
    ]
    if with_client:
        out.append(ev(HdfsClientSlow, at + write_ms - 17, "tm01.example.com", "taskmanager", op="waitForAckedSeqno",
                      duration_ms=write_ms - 17, threshold_ms=30_000, path=path.removeprefix("hdfs:"), block=BLOCK,
                      datanodes=PIPELINE))
    return out


def scanner(host: str, end: int, held_ms: int, version: str | None = "3.1.0") -> list[Event]:
    """A DirectoryScanner stall on one DataNode: lock held until ``end``, totals, a reconcile burst."""
    out = [
        ev(DatasetLockHeld, end, host, "datanode", lock="org.apache.hadoop.hdfs.server.datanode.fsdataset.impl."
           "FsDatasetImpl", held_ms=held_ms, holder="DirectoryScanner.scan"),
        ev(DirectoryScanStats, end - 1, host, "datanode", block_pool=BP, total_blocks=2_000_000, missing_meta=0,
           missing_block=3, missing_memory=1200, mismatched=4),
    ]
    out += [ev(DirectoryScanReconcile, end + 5 + i, host, "datanode", action="added_missing") for i in range(5)]
    return out


def seed(version: str | None = "3.1.0") -> list[Event]:
    """The seed incident: DirectoryScanner on dn02 holds the lock across checkpoint 60's 37.8 s write."""
    out = noise(T0 - 600_000, T0 + 400_000)
    if version:
        out.append(ev(DaemonStart, T0 - 3_000_000, "dn02.example.com", "datanode", component="DataNode",
                      version=version))
    out.append(ev(DaemonStart, T0 - 3_000_000, "jm01.example.com", "jobmanager",
                  component="StandaloneSessionClusterEntrypoint", version="1.7.1"))
    out.append(ev(BlockWrite, T0 + 266, "dn02.example.com", "datanode", block=BLOCK, src="/10.20.30.41:53412",
                  dest="/10.20.30.42:9866"))
    out.append(ev(BlockWrite, T0 + 37_792, "dn02.example.com", "datanode", block=BLOCK, src="/10.20.30.41:53412",
                  dest="/10.20.30.42:9866", duration_ms=2))
    out += scanner("dn02.example.com", T0 + 37_617, 37_400)
    out += failure()
    return sorted(out, key=lambda e: e.ts_ms)


def with_event(events: list[Event], *extra: Event) -> list[Event]:
    return sorted([*events, *extra], key=lambda e: e.ts_ms)


__all__ = ["JvmPause", "SlowIo", "ev", "failure", "noise", "read_too", "scanner", "seed", "with_event"]
