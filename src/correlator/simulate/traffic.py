"""The timeline of a simulated cluster: process starts, checkpoints (healthy or failing), HDFS block writes."""

from __future__ import annotations

from pathlib import Path

from correlator.simulate.cluster import JOB_NAME, NOISE_PATHS, OTHER_CLIENTS, TASK, Cluster, Failure, checkpoint_path
from correlator.simulate.hdfs import full_block
from correlator.simulate.render import gc_unified
from correlator.simulate.world import Node

RESTART_MS = 10_040


class Traffic:
    def __init__(self, cluster: Cluster) -> None:
        self.c = cluster
        self.rng = cluster.rng

    def run(self) -> None:
        c = self.c
        start = c.spec.start_ms
        c.jm.banner(start, "StandaloneSessionClusterEntrypoint")
        c.tm.banner(start + 2_113, "TaskManager")
        if c.spec.with_namenode:
            c.nn.banner(start - 41_000, "NameNode")
        if c.spec.with_datanodes:
            for name, log in sorted(c.dn.items()):
                at = start - 30_000 + self.rng.randrange(0, 20_000)
                log.banner(at, "DataNode")
                first = c.first_scan.get(name, start + 3_600_000 + self.rng.randrange(0, 14_400_000))
                log.scanner_start(at + 3_870, first, c.scan_interval.get(name, 21_600_000))
        for index, (job, name) in enumerate(c.spec.jobs):
            self.job(job, name, start + 45_000 + index * 7_000, c.spec.first_chk + index * 100)
        self.noise_writes()
        self.datanode_noise()
        self.namenode_noise()
        if c.spec.tm_gc_log:
            self.tm_gc()

    # --- Flink -------------------------------------------------------------------------------------------------

    def job(self, job: str, name: str, at: int, first_chk: int) -> None:
        c = self.c
        task = f"{TASK} (1/1)" if job == c.spec.jobs[0][0] else "Source: events_raw -> Filter -> Sink: es (1/1)"
        location = f"{c.tm_node.host}:39217-7a1b2c @ {c.tm_node.host} (dataPort=40211)"
        c.jm.job_status(at, name, job, "CREATED", "RUNNING")
        attempt, tm_task = self.deploy(at + 12, task, 0, location)
        pending = sorted((f for f in c.failures if f.job == job), key=lambda f: f.at_ms)
        chk = first_chk
        t = at + 15_000
        last_good, last_good_ms = chk - 1, t - c.spec.interval_ms
        restarts = 0
        while t < c.end_ms - 5_000:
            failure = pending[0] if pending and pending[0].at_ms < t + c.spec.interval_ms else None
            if failure is not None:
                pending.pop(0)
                t = failure.at_ms
                c.jm.trigger(t, chk, job)
                t = self.failed_checkpoint(failure, chk, job, name, task, tm_task, attempt, location,
                                           last_good, last_good_ms)
                if failure.outcome != "late":
                    restarts += 1
                    attempt, tm_task = self.deploy(t - c.spec.interval_ms, task, restarts, location)
            else:
                size = 7_000 + self.rng.randrange(0, 3_000)
                c.jm.trigger(t, chk, job)
                path = checkpoint_path(job, chk, c.ids)
                written = self.write(t + 200, c.tm_node.ip, self.healthy_pipeline(t), path, size)
                c.jm.completed(written + 25, chk, job, size, written + 21 - t)
                last_good, last_good_ms = chk, t
                t += c.spec.interval_ms
            chk += 1

    def deploy(self, at: int, task: str, restarts: int, location: str) -> tuple[str, str]:
        """A (re)deployment of the job's task: a new attempt id on the JM and the TM."""
        c = self.c
        attempt = c.ids.hex32()
        tm_task = task.replace(" (1/1)", f" (1/1)#{restarts}") if c.tm.v >= (1, 12, 0) else task
        c.jm.task_status(at, task, attempt, "SCHEDULED", "DEPLOYING", location)
        c.jm.task_status(at + 468, task, attempt, "DEPLOYING", "RUNNING", location)
        c.tm.line(at + 288, "INFO", "org.apache.flink.runtime.taskmanager.Task",
                  f"{tm_task} ({attempt}) switched from DEPLOYING to RUNNING.")
        return attempt, tm_task

    def failed_checkpoint(self, f: Failure, chk: int, job: str, name: str, task: str, tm_task: str, attempt: str,
                          location: str, last_good: int, last_good_ms: int) -> int:
        """Log one failing checkpoint; returns when the next trigger may happen."""
        c = self.c
        at = f.at_ms
        timeout = c.spec.timeout_ms
        path = checkpoint_path(job, chk, c.ids)
        pipeline = [c.dn_nodes[d] for d in f.pipeline if d in c.dn_nodes]
        block_id, gs = c.ids.block()
        block = full_block(block_id, gs)
        write_end = at + f.write_ms
        writes = f.outcome not in ("decline", "lost")  # a declined snapshot and a frozen TaskManager write nothing
        if writes:
            self.write(at + 250, c.tm_node.ip, pipeline, path, 8_761, end_ms=write_end - 23, block=(block_id, gs))
        uri = "hdfs:" + path
        if writes:
            c.jm.expired(at + timeout + 6, chk, job)
        if f.write_ms >= 30_000 and writes:
            c.tm.slow_read_ack(write_end - 40, f.write_ms - 290, block, pipeline)
            c.tm.slow_ack(write_end - 17, f.write_ms - 267, path, block, pipeline)
        if f.outcome == "fail":
            c.tm.fail_externally(write_end, chk, tm_task, attempt, uri)
            c.jm.async_failure(write_end + 8, chk, job, name, task, attempt, uri, last_good, last_good_ms, location)
            return write_end + RESTART_MS + c.spec.interval_ms
        if f.outcome == "late":
            c.jm.late_ack(write_end + 5, chk, job, attempt, location)
            return at + c.spec.interval_ms * (1 + f.write_ms // c.spec.interval_ms)
        if f.outcome == "lost":
            c.jm.taskmanager_lost(write_end, chk, job, task, attempt, location, location.split(" @ ")[0])
            return write_end + RESTART_MS + c.spec.interval_ms
        if f.outcome == "cancel":
            c.jm.global_failover(at + timeout + 9, job, name, "Checkpoint expired before completing.")
            c.tm.cancelled_upload(at + timeout + 15, chk, tm_task, attempt)
            return at + timeout + 1_100 + c.spec.interval_ms
        error = f.error or "java.lang.NullPointerException: null"
        c.tm.declined_snapshot(at + 61, chk, tm_task, error)
        cause = (f"org.apache.flink.util.SerializedThrowable: Could not complete snapshot {chk} for operator {tm_task}."
                 " Failure reason: Checkpoint was declined.")
        frame = c.jm.frame("org.apache.flink.streaming.api.operators.StreamOperatorStateHandler.snapshotState"
                           "(StreamOperatorStateHandler.java:269)")
        c.jm.decline(at + 70, chk, job, task, attempt, location, cause, frame,
                     f"Caused by: org.apache.flink.util.SerializedThrowable: {error}")
        c.jm.failure_manager(at + 72, chk, job, "org.apache.flink.runtime.checkpoint.CheckpointException: "
                             f"Could not complete snapshot {chk} for operator {task}. Failure reason: "
                             "Checkpoint was declined.", frame, f"Caused by: {error}")
        c.jm.global_failover(at + 80, job, name, "Checkpoint was declined.")
        return at + 1_100 + c.spec.interval_ms

    def healthy_pipeline(self, t: int) -> list[Node]:
        c = self.c
        busy = {d for d, spans in (c.stalls | c.slow).items() for a, b in spans if a - 60_000 <= t <= b + 5_000}
        free = [n for d, n in sorted(c.dn_nodes.items()) if d not in busy] or list(c.dn_nodes.values())
        return self.rng.sample(free, min(3, len(free)))

    # --- HDFS writes -------------------------------------------------------------------------------------------

    def write(self, t: int, src_ip: str, pipeline: list[Node], path: str, size: int, *, end_ms: int | None = None,
              block: tuple[int, int] | None = None, client: str | None = None) -> int:
        """One client write of one block through a DataNode pipeline; returns when it finished."""
        c = self.c
        block_id, gs = block or c.ids.block()
        name = full_block(block_id, gs)
        client = client or c.ids.client()
        duration = 15 + int(self.rng.expovariate(1 / 120))
        stall_end = None
        for node in pipeline:
            short = node.host.split(".")[0]
            for a, b in c.stalls.get(short, ()):
                if a <= t <= b:
                    stall_end = max(stall_end or 0, b)
            for a, b in c.slow.get(short, ()):
                if a <= t <= b:
                    duration += 2_000 + self.rng.randrange(0, 6_000)
        end = end_ms if end_ms is not None else max(t + duration, (stall_end or 0) + 30 + duration)
        if c.spec.with_namenode:
            c.nn.allocate(t - 4, block_id, gs, pipeline, path)
        if c.spec.with_datanodes:
            blocked = False
            port = 40_000 + self.rng.randrange(0, 20_000)
            for k, node in enumerate(pipeline):
                src = src_ip if k == 0 else pipeline[k - 1].ip
                received = (stall_end + 2 * k) if blocked and stall_end else t + 2 * k
                short = node.host.split(".")[0]
                resumed = [b for a, b in c.paused.get(short, ()) if a <= received <= b]
                if resumed:
                    received = resumed[0] + 3 + 2 * k
                if any(a <= t <= b for a, b in c.stalls.get(short, ())):
                    blocked = True
                log = c.dn[short]
                log.receiving(received, name, src, port)
                done = end - 2 * k - 2
                log.clienttrace(done, name, src, port, size, client, max(1, min(duration, done - received)) * 1_000_000
                                + self.rng.randrange(0, 999_999))
                log.responder(done + 1, name, pipeline[k + 1:])
                port = 50_000 + self.rng.randrange(0, 10_000)
        if c.spec.with_namenode:
            c.nn.complete_file(end + 3, path, client)
        return end

    def noise_writes(self) -> None:
        c = self.c
        rate = c.spec.noise_per_s * c.scale
        t = c.spec.start_ms + 1_000
        n = 0
        nodes = list(c.dn_nodes.values())
        while t < c.end_ms:
            t += int(self.rng.expovariate(rate) * 1000) + 1
            n += 1
            template = NOISE_PATHS[n % len(NOISE_PATHS)]
            path = template.format(day="2020-01-02", n=n, k=1 + n % 3)
            src = OTHER_CLIENTS[n % len(OTHER_CLIENTS)]
            if len(nodes) >= 3:
                self.write(t, src, self.rng.sample(nodes, 3), path, 1_000 + self.rng.randrange(0, 134_217_728))

    def datanode_noise(self) -> None:
        c = self.c
        if not c.spec.with_datanodes:
            return
        for _, log in sorted(c.dn.items()):
            t = c.spec.start_ms + self.rng.randrange(0, 60_000)
            while t < c.end_ms:
                block_id, gs = c.ids.block()
                log.deleted(t, block_id - 300, gs - 300)
                t += int(self.rng.expovariate(0.012 * c.scale) * 1000) + 1

    def namenode_noise(self) -> None:
        """Short JVM pauses on a busy NameNode, away from the incidents (they are noise, not causes)."""
        c = self.c
        if not c.spec.with_namenode:
            return
        t = c.spec.start_ms + 150_000
        while t < c.end_ms:
            if not any(a - 30_000 <= t <= b + 30_000 for a, b in c.quiet):
                c.nn.jvm_pause(t, 1_050 + self.rng.randrange(0, 600), None)
            t += 200_000 + self.rng.randrange(0, 120_000)

    def tm_gc(self) -> None:
        c = self.c
        file = f"{c.tm_node.host}/taskmanager-gc.log"
        boot = c.spec.start_ms + 1_500
        c.logs.add(file, boot, gc_unified(boot, 12, "gc,init", "Version: 11.0.16+8 (release)"))
        c.logs.add(file, boot + 1, gc_unified(boot + 1, 13, "gc", "Using G1"))
        pauses = sorted(c.tm_pauses)
        t = boot + 20_000
        n = 0
        while t < c.end_ms:
            ms = 4 + self.rng.random() * 30
            c.logs.add(file, t, gc_unified(t, t - boot, "gc", f"GC({n}) Pause Young (Normal) (G1 Evacuation Pause) "
                                                               f"{900 + n % 300}M->{210 + n % 40}M(4096M) {ms:.3f}ms"))
            n += 1
            t += 15_000 + self.rng.randrange(0, 20_000)
            while pauses and pauses[0][0] < t:
                end, pause = pauses.pop(0)
                c.logs.add(file, end - pause, gc_unified(end - pause, end - pause - boot, "gc,start",
                                                         f"GC({n}) Pause Full (G1 Compaction Pause)"))
                c.logs.add(file, end, gc_unified(end, end - boot, "gc", f"GC({n}) Pause Full (G1 Compaction Pause) "
                                                                         f"3900M->3100M(4096M) {pause:.3f}ms"))
                n += 1


def build(cluster: Cluster, out_dir: Path) -> list[Path]:
    """Play the cluster's timeline and write its log files under ``out_dir``."""
    Traffic(cluster).run()
    return cluster.logs.write(out_dir)


__all__ = ["JOB_NAME", "Traffic", "build"]
