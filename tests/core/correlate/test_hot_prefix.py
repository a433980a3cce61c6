"""A throttle of keys that all start with one prefix is said to be one hot prefix; keys spread by an entropy marker
are not (S3 scales its request rate per key prefix)."""

from __future__ import annotations

from correlator.core.correlate.objectstore import HOT_PREFIX_MIN, Throttled, hot_prefix_sentence
from correlator.core.events import ObjectStoreRequest

JOB = "383cf884303628b53efda2997fb54fe0"


def throttled(key: str, n: int) -> ObjectStoreRequest:
    return ObjectStoreRequest(ts_ms=1_764_958_496_000 + n, cluster="default", host="lab-checkpoints", role="objectstore",
                              ref=f"s3:{n}", bucket="lab-checkpoints", key=key, operation="REST.PUT.OBJECT",
                              status=503, error_code="SlowDown", total_ms=3)


def test_keys_under_one_prefix_are_a_hot_prefix() -> None:
    found = Throttled("lab-checkpoints", f"flink/checkpoints/{JOB}",
                      tuple(throttled(f"flink/checkpoints/{JOB}/chk-3/file-{i}", i) for i in range(HOT_PREFIX_MIN)))
    said = hot_prefix_sentence(found)
    assert f"All {HOT_PREFIX_MIN} throttled keys start with the one prefix flink/" in said and "entropy" in said


def test_keys_spread_by_entropy_or_too_few_are_not() -> None:
    spread = tuple(throttled(f"{mark}/checkpoints/{JOB}/chk-3/file-{i}", i) for i, mark in enumerate(("a7Bx", "Q2zk",
                                                                                                         "m0Pr")))
    few = tuple(throttled(f"flink/checkpoints/{JOB}/chk-3/file-{i}", i) for i in range(HOT_PREFIX_MIN - 1))
    assert hot_prefix_sentence(Throttled("lab-checkpoints", "a7Bx/checkpoints", spread)) == ""
    assert hot_prefix_sentence(Throttled("lab-checkpoints", "flink/checkpoints", few)) == ""
