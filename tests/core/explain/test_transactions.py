"""An exactly-once Kafka sink's transactions: warned about before the broker's timeout, a loss record when it aborts,
silent when checkpoints recover in time or the timeout is long, the same after a restore."""

from __future__ import annotations

from correlator.core.events import (
    CheckpointCompleted,
    CheckpointFailed,
    CheckpointTriggered,
    Event,
    TransactionAborted,
    TransactionCommitFailed,
    TransactionSetting,
    sink_checkpoint,
)
from correlator.core.explain.risk import Risk, risk_from_dict, risk_to_dict
from correlator.core.explain.transactions import TransactionLoss, TransactionWatch, loss_from_dict, loss_to_dict

T0 = 1_796_000_000_000
JOB = "b" * 32
INTERVAL = 5_000


def _jm(i: int, at: int) -> dict[str, object]:
    return {"ts_ms": at, "cluster": "c", "host": "jm", "role": "jobmanager", "ref": f"jm.log:{i}", "job_id": JOB}


def triggered(i: int, at: int) -> CheckpointTriggered:
    return CheckpointTriggered(**_jm(i, at), checkpoint_id=i, trigger_ts_ms=at)  # type: ignore[arg-type]


def completed(i: int, at: int) -> CheckpointCompleted:
    return CheckpointCompleted(**_jm(i, at), checkpoint_id=i, duration_ms=300)  # type: ignore[arg-type]


def failed(i: int, at: int) -> CheckpointFailed:
    return CheckpointFailed(**_jm(i, at), checkpoint_id=i, kind="declined",  # type: ignore[arg-type]
                            message="safe mode")


def setting(timeout_ms: int, tid: str = "lab-eos-0-3") -> TransactionSetting:
    return TransactionSetting(ts_ms=T0, cluster="c", host="tm", role="taskmanager", ref="tm.log:1",
                              transactional_id=tid, timeout_ms=timeout_ms)


def aborted(tid: str, at: int) -> TransactionAborted:
    return TransactionAborted(ts_ms=at, cluster="c", host="lab-kafka", role="kafka", ref="server.log:9",
                              transactional_id=tid,
                              line=f"[TransactionCoordinator id=1] Completed rollback of ongoing transaction for "
                                   f"transactionalId {tid} due to timeout")


def outage(last_ok: int, failures: int) -> list[Event]:
    """Checkpoints complete up to ``last_ok``, then ``failures`` in a row, one every interval."""
    events: list[Event] = []
    for i in range(1, last_ok + 1):
        events += [triggered(i, T0 + i * INTERVAL), completed(i, T0 + i * INTERVAL + 300)]
    for i in range(last_ok + 1, last_ok + 1 + failures):
        events += [triggered(i, T0 + i * INTERVAL), failed(i, T0 + i * INTERVAL + 200)]
    return events


def run(events: list[Event], watch: TransactionWatch | None = None) -> tuple[list[Risk], list[TransactionLoss]]:
    watch = watch or TransactionWatch()
    risks = [r for e in events for r in watch.observe(e)]
    return risks, watch.take_losses()


def test_failures_past_half_the_timeout_warn_with_the_time_left() -> None:
    risks, losses = run([setting(30_000), *outage(3, 6)])
    [risk] = risks
    opened = T0 + 3 * INTERVAL  # the last completed checkpoint's trigger: the oldest open transaction began then
    assert risk.cause == "transaction_timeout" and risk.timeout_source == "producer_configuration"
    assert risk.expiry_at_ms == opened + 30_000 and risk.window_start_ms == opened
    assert risk.time_left_ms == risk.expiry_at_ms - risk.as_of_ms and 0 < risk.time_left_ms <= 15_000
    assert risk.failed_checkpoints[0] == 4 and "30 s" in risk.headline
    assert losses == []


def test_the_brokers_abort_supersedes_the_warning_and_records_the_loss() -> None:
    watch = TransactionWatch()
    risks, _ = run([setting(30_000), *outage(3, 6)], watch)
    abort_at = T0 + 3 * INTERVAL + 30_400
    more, losses = run([aborted("lab-eos-0-4", abort_at)], watch)
    assert [r.status for r in risks + more] == ["raised", "superseded"]
    [loss] = losses
    assert loss.transactional_id == "lab-eos-0-4" and loss.checkpoint_id == 4 and loss.job_id == JOB
    assert loss.evidence == "broker_abort" and loss.timeout_ms == 30_000
    assert loss.failed_checkpoints == (4, 5, 6, 7, 8, 9) and loss.opened_at_ms == T0 + 3 * INTERVAL
    assert "Completed rollback" in loss.line and loss.refs[0] == "server.log:9"


def test_the_committers_later_failure_of_the_same_transaction_is_the_same_loss() -> None:
    watch = TransactionWatch()
    run([setting(30_000), *outage(3, 6), aborted("lab-eos-0-4", T0 + 50_000)], watch)
    fenced = TransactionCommitFailed(ts_ms=T0 + 60_000, cluster="c", host="tm", role="taskmanager", kind="fenced",
                                     message="Unable to commit transaction (CommitRequestImpl@1a2b) because its "
                                             "producer is already fenced.")
    _, losses = run([fenced], watch)
    assert losses == []


def test_without_the_brokers_log_a_fenced_commit_is_the_loss() -> None:
    fenced = TransactionCommitFailed(ts_ms=T0 + 80_000, cluster="c", host="tm", role="taskmanager", kind="fenced",
                                     transactional_id="lab-eos-0-4", checkpoint_id=4, timeout_ms=30_000,
                                     message="Unable to commit transaction (…) because its producer is already "
                                             "fenced.")
    _, [loss] = run([setting(30_000), *outage(3, 12), fenced])
    assert loss.evidence == "commit_failed" and loss.transactional_id == "lab-eos-0-4" and loss.job_id == JOB


def test_a_checkpoint_completing_in_time_withdraws_the_warning() -> None:
    events = [setting(30_000), *outage(3, 4), triggered(8, T0 + 8 * INTERVAL), completed(8, T0 + 8 * INTERVAL + 300)]
    risks, losses = run(events)
    assert [r.status for r in risks] == ["raised", "withdrawn"] and losses == []


def test_a_long_timeout_or_an_unknown_one_raises_nothing() -> None:
    assert run([setting(600_000), *outage(3, 15)]) == ([], [])
    assert run(outage(3, 15)) == ([], [])


def test_the_shortest_timeout_logged_counts() -> None:
    [risk], _ = run([setting(600_000, "other-0-1"), setting(30_000), *outage(3, 6)])
    assert risk.timeout_ms == 30_000


def test_records_survive_their_dict_form_and_the_watch_its_snapshot() -> None:
    watch = TransactionWatch()
    [risk], _ = run([setting(30_000), *outage(3, 6)], watch)
    assert risk_from_dict(risk_to_dict(risk)) == risk
    restored = TransactionWatch.restore(watch.snapshot())
    more, [loss] = run([aborted("lab-eos-0-4", T0 + 50_000)], restored)
    assert [r.status for r in more] == ["superseded"]
    assert loss_from_dict(loss_to_dict(loss)) == loss
    assert loss_to_dict(loss)["schema"] == "correlator.loss/v1"


def test_the_sinks_transactional_id_names_its_checkpoint() -> None:
    assert sink_checkpoint("lab-eos-0-17") == 17 and sink_checkpoint("my-app.sink-3-1024") == 1024
    assert sink_checkpoint("custom-id") is None


def test_a_checkpoint_completing_after_the_timeout_supersedes_the_warning() -> None:
    """Without the broker's log no abort is seen: the late completion ends the warning all the same."""
    late = T0 + 3 * INTERVAL + 31_000
    risks, losses = run([setting(30_000), *outage(3, 6), triggered(10, late - 300), completed(10, late)])
    assert [r.status for r in risks] == ["raised", "superseded"] and losses == []
    assert "committer says whether" in risks[-1].headline
