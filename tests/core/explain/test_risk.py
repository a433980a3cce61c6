"""The early warning: raised ahead of a real rise, silent on noise, withdrawn or superseded, the same after a restore."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from correlator.core.events import CheckpointCompleted, CheckpointExpired, CheckpointTriggered, Event, FlinkSetting
from correlator.core.explain.risk import MIN_POINTS, Risk, RiskWatch, risk_from_dict, risk_to_dict
from correlator.core.explain.trend import mann_kendall_z, theil_sen

T0 = 1_796_000_000_000
JOB = "a" * 32


def completed(i: int, at_ms: int, duration_ms: int, size: int = 1_000_000) -> CheckpointCompleted:
    return CheckpointCompleted(ts_ms=at_ms, cluster="c", host="jm", role="jobmanager", ref=f"jm.log:{i}", job_id=JOB,
                               checkpoint_id=i, duration_ms=duration_ms, size_bytes=size)


def run(events: list[Event], watch: RiskWatch | None = None) -> list[Risk]:
    watch = watch or RiskWatch()
    return [r for e in events for r in watch.observe(e)]


def setting(timeout_ms: int) -> FlinkSetting:
    return FlinkSetting(ts_ms=T0 - 1000, cluster="c", host="jm", role="jobmanager",
                        key="execution.checkpointing.timeout", value_ms=timeout_ms)


def creeping(n: int, interval_ms: int = 60_000, start_ms: int = 2_000, rise_ms: int = 100) -> list[Event]:
    """Durations rising by ``rise_ms`` per checkpoint with a little noise: the seed's restart loop coming."""
    rng = random.Random(7)
    return [completed(i, T0 + i * interval_ms, start_ms + i * rise_ms + rng.randint(-40, 40)) for i in range(n)]


def test_trend_of_a_straight_line_is_exact() -> None:
    trend = theil_sen([0, 1, 2, 3, 4], [1, 3, 5, 7, 9])
    assert (trend.slope, trend.intercept) == (2, 1)
    assert trend.low <= 2 <= trend.high
    assert mann_kendall_z([1, 3, 5, 7, 9]) > 1.5
    assert mann_kendall_z([5, 5, 5, 5]) == 0


def test_a_steady_rise_raises_one_risk_ahead_of_the_timeout() -> None:
    risks = run([setting(10_000), *creeping(80)])
    assert [r.status for r in risks] == ["raised"]
    risk = risks[0]
    assert risk.timeout_source == "configuration" and risk.timeout_ms == 10_000
    assert risk.cause == "duration_growth"
    # durations reach 10 s at checkpoint 80 (2 s + 80 × 0.1 s): the prediction lands within two intervals of it
    assert abs(risk.expiry_at_ms - (T0 + 80 * 60_000)) <= 2 * 60_000, risk.headline
    assert risk.expiry_earliest_ms <= risk.expiry_at_ms <= (risk.expiry_latest_ms or risk.expiry_at_ms)
    assert risk.as_of_ms < risk.expiry_at_ms
    assert "timeout 10.0 s, from the JobManager's configuration" in risk.headline
    assert any("execution.checkpointing.timeout" in step for step in risk.advice)


def test_growing_state_is_named_as_the_cause() -> None:
    events: list[Event] = [setting(10_000)]
    for i in range(40):
        events.append(completed(i, T0 + i * 60_000, 2_000 + i * 200, size=10_000_000 + i * 1_000_000))
    risk = run(events)[0]
    assert risk.cause == "state_growth"
    assert "The checkpointed state grew" in risk.headline
    assert any("incremental" in step for step in risk.advice)


def test_without_configuration_the_default_timeout_is_said_to_be_assumed() -> None:
    events = [completed(i, T0 + i * 60_000, 60_000 + i * 30_000) for i in range(30)]
    risk = run(list(events))[0]
    assert risk.timeout_source == "flink_default" and risk.timeout_ms == 600_000
    assert "assumed" in risk.headline and any("assumed" in step for step in risk.advice)


def test_an_expiry_supersedes_the_risk_and_gives_the_jobs_own_timeout() -> None:
    events = [setting(10_000), *creeping(70)]
    trigger = CheckpointTriggered(ts_ms=T0 + 70 * 60_000, cluster="c", host="jm", role="jobmanager", job_id=JOB,
                                  checkpoint_id=70)
    expired = CheckpointExpired(ts_ms=T0 + 70 * 60_000 + 9_000, cluster="c", host="jm", role="jobmanager",
                                job_id=JOB, checkpoint_id=70)
    watch = RiskWatch()
    risks = run([*events, trigger, expired], watch)
    assert [r.status for r in risks] == ["raised", "superseded"]
    assert risks[0].risk_id == risks[1].risk_id
    assert "failed at" in risks[1].headline and "takes over" in risks[1].headline
    more = run([completed(100 + i, T0 + (80 + i) * 60_000, 2_000 + i * 300) for i in range(20)], watch)
    assert more and more[0].timeout_source == "expired_checkpoint" and more[0].timeout_ms == 9_000


def test_a_recovered_trend_is_withdrawn_once() -> None:
    """As the rise flattens the predicted expiry moves later (updates), until the warning is withdrawn, once."""
    events = creeping(40, rise_ms=150)
    events += [completed(40 + i, T0 + (40 + i) * 60_000, 2_000 + (i % 3) * 50) for i in range(60)]
    risks = run([setting(10_000), *events])
    statuses = [r.status for r in risks]
    assert statuses[0] == "raised" and statuses[-1] == "withdrawn" and statuses.count("withdrawn") == 1
    assert set(statuses[1:-1]) <= {"updated"}
    updated = [r.expiry_at_ms for r in risks if r.status in ("raised", "updated")]
    assert updated == sorted(updated), "a flattening rise only moves the expiry later"
    assert "withdrawn" in risks[-1].headline


def test_snapshot_and_restore_give_the_same_records() -> None:
    events: list[Event] = [setting(10_000), *creeping(80)]
    whole = run(events)
    first = RiskWatch()
    run(events[:30], first)
    restored = RiskWatch.restore(first.snapshot())
    assert run(events[30:], restored) == whole
    assert risk_from_dict(risk_to_dict(whole[0])) == whole[0]


def test_replayed_completions_are_counted_once() -> None:
    events = creeping(80)
    assert run([setting(10_000), *events, *events]) == run([setting(10_000), *events])


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(MIN_POINTS, 200), level=st.floats(0.05, 0.5),
       noise=st.floats(0.0, 0.12), interval_s=st.integers(1, 600), outliers=st.floats(0.0, 0.05))
def test_a_flat_noisy_series_raises_no_risk(seed: int, n: int, level: float, noise: float, interval_s: int,
                                            outliers: float) -> None:
    """Durations around a level up to half the timeout, with noise up to an eighth of it and rare spikes up to the
    timeout: whatever the series, no warning."""
    timeout = 10_000
    rng = random.Random(seed)
    events: list[Event] = [setting(timeout)]
    for i in range(n):
        d = level * timeout + rng.gauss(0, noise * timeout / 3)
        d = min(max(d, (level - noise) * timeout), (level + noise) * timeout)
        if rng.random() < outliers:
            d = rng.uniform(d, 0.95 * timeout)
        events.append(completed(i, T0 + i * interval_s * 1000, max(1, int(d))))
    assert run(events) == []


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(MIN_POINTS, 200), level=st.floats(0.05, 0.5),
       noise=st.floats(0.0, 0.12), interval_s=st.integers(1, 600), outliers=st.floats(0.0, 0.05))
def test_without_a_timeout_a_flat_noisy_series_raises_no_risk(seed: int, n: int, level: float, noise: float,
                                                              interval_s: int, outliers: float) -> None:
    """No timeout in any log, so the checkpoints' spacing is the yardstick: durations around a level up to half of
    it, noise up to an eighth, rare spikes up to the spacing itself — whatever the series, no warning."""
    interval = interval_s * 1000
    rng = random.Random(seed)
    events: list[Event] = []
    for i in range(n):
        d = level * interval + rng.gauss(0, noise * interval / 3)
        d = min(max(d, (level - noise) * interval), (level + noise) * interval)
        if rng.random() < outliers:
            d = rng.uniform(d, 0.95 * interval)
        events.append(completed(i, T0 + i * interval, max(1, int(d))))
    assert run(events) == []


def test_without_a_timeout_a_rise_toward_the_interval_warns_before_the_first_expiry() -> None:
    """A timeout set in the job's code shows in no log. Checkpoints every 5 s whose durations rose from 1 s toward
    5 s are judged against the 5 s spacing, saying the timeout is unknown and how to make it known."""
    rng = random.Random(11)
    events = [completed(i, T0 + i * 5_000, 1_000 + i * 60 + rng.randint(-60, 60)) for i in range(60)]
    risks = run(list(events))
    assert risks and risks[0].status == "raised"
    risk = risks[0]
    assert (risk.timeout_source, risk.timeout_ms) == ("checkpoint_interval", 5_000)
    assert risk.expiry_at_ms < T0 + 80 * 5_000, risk.headline
    assert "timeout unknown, so judged against the checkpoints' 5.0 s spacing" in risk.headline
    assert any("correlator flink-stats" in step for step in risk.advice)


def test_the_jobs_own_timeout_from_rest_outranks_the_interval_and_the_cluster() -> None:
    own = FlinkSetting(ts_ms=T0 - 500, cluster="c", host="jm", role="jobmanager",
                       key="execution.checkpointing.timeout", value_ms=8_000, job_id=JOB)
    risks = run([setting(60_000), own, *creeping(80)])
    assert risks and (risks[0].timeout_source, risks[0].timeout_ms) == ("job_configuration", 8_000)
    assert "from the job's checkpoint configuration (REST)" in risks[0].headline
