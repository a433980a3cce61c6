"""A lost TaskManager (its heartbeat timed out on the JobManager) as a checkpoint's cause, and where it is not one.

The ``taskmanager-lost`` golden scenario is judged in ``test_golden``; here the same incident is played again with a
stall in storage beside it (storage still wins) and with a long GC pause on the TaskManager over its silence (the
pause is the root, the lost heartbeat its effect).
"""

from __future__ import annotations

from pathlib import Path

from correlator.offline.analyze import analyze
from correlator.simulate.cluster import JOB, Cluster, Failure, Spec
from correlator.simulate.scenarios import FAIL_AT, T_2024
from correlator.simulate.traffic import build

SILENT_MS = 51_500


def _lost(tmp_path: Path, *, tm_gc: bool = False, namenode_lock: bool = False) -> list[tuple[str, tuple[str, ...],
                                                                                          str]]:
    c = Cluster(Spec(flink="1.20.1", start_ms=T_2024, minutes=8, tm_gc_log=tm_gc), 0, 1)
    at = c.spec.start_ms + FAIL_AT
    if tm_gc:
        c.taskmanager_pause(at + SILENT_MS + 4_000, SILENT_MS + 2_500)
    if namenode_lock:
        c.namenode_lock(at + SILENT_MS - 500, SILENT_MS - 1_000)
    c.fail(Failure(JOB, at, SILENT_MS, "lost"))
    build(c, tmp_path)
    return [(v.root_cause.code, v.root_cause.hosts, v.root_cause.explanation) for v in analyze([str(tmp_path)])]


def test_a_storage_stall_over_the_checkpoint_outranks_the_lost_taskmanager(tmp_path: Path) -> None:
    [(code, hosts, _)] = _lost(tmp_path, namenode_lock=True)
    assert (code, hosts) == ("NAMENODE_SLOW", ("nn01.example.com",))


def test_a_gc_pause_over_the_silence_is_the_root_and_the_lost_heartbeat_its_effect(tmp_path: Path) -> None:
    [(code, hosts, why)] = _lost(tmp_path, tm_gc=True)
    assert (code, hosts) == ("TASKMANAGER_JVM_PAUSE", ("tm01.example.com",))
    assert "lost its heartbeat" in why and "the pause's effect" in why
