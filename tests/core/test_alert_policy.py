"""The alert policy: which verdicts reach on-call and how loud, decided once from the settings."""

from __future__ import annotations

import pytest

from correlator.core.alert_policy import AlertPolicy, PolicyError
from correlator.core.explain.causes import Code
from correlator.core.explain.registry import CAUSES

NOW = 1_800_000_000_000


def verdict(code: str, failed_at: str = "2027-01-15T08:00:00.000Z") -> dict:
    return {"verdict_id": "v", "root_cause": {"code": code}, "failure": {"failed_at": failed_at}}


def test_by_default_a_verdict_that_names_no_cause_pages_nobody() -> None:
    policy = AlertPolicy()
    assert policy.suppressed(verdict("INSUFFICIENT_DATA"), NOW) == "INSUFFICIENT_DATA is not among the codes that alert"
    assert policy.suppressed(verdict("UNEXPLAINED"), NOW) is not None
    assert policy.suppressed(verdict("HDFS_DIRECTORY_SCAN"), NOW) is None
    assert policy.suppressed(verdict("A_CODE_OF_A_NEWER_VERSION"), NOW) is None, "shown as it is, not dropped"


def test_an_old_failure_is_not_fired_now() -> None:
    policy = AlertPolicy()
    why = policy.suppressed(verdict("HDFS_DIRECTORY_SCAN", "2020-01-02T09:05:40.006Z"), NOW)
    assert why is not None and "min old, over the 60 min limit" in why
    assert policy.suppressed(verdict("HDFS_DIRECTORY_SCAN", "2027-01-15T07:01:00.000Z"), NOW) is None


def test_severity_comes_from_the_registry_and_can_be_overridden() -> None:
    policy = AlertPolicy.parse("", "HDFS_SLOW_DISK=critical", 60)
    assert policy.severity_of("HDFS_SLOW_DISK") == "critical"
    assert policy.severity_of("DATANODE_DISK_FULL") == "critical"  # HDFS refuses every write until someone acts
    assert policy.severity_of("DATANODE_JVM_PAUSE") == "warning"
    assert policy.severity_of("UNEXPLAINED") == "info"
    assert {c.severity for c in CAUSES.values()} == {"critical", "warning", "info"}


def test_codes_are_chosen_by_name_or_all() -> None:
    assert AlertPolicy.parse("all", "", 60).suppressed(verdict("INSUFFICIENT_DATA"), NOW) is None
    only = AlertPolicy.parse("HDFS_DIRECTORY_SCAN, DATANODE_LOCK_HELD", "", 60)
    assert only.codes == {Code.HDFS_DIRECTORY_SCAN, Code.DATANODE_LOCK_HELD}
    assert only.suppressed(verdict("HDFS_SLOW_DISK"), NOW) is not None


@pytest.mark.parametrize("codes, severity", [("HDFS_SLOW_DSK", ""), ("", "HDFS_SLOW_DISK=loud"), ("", "NOPE=info")])
def test_a_setting_that_cannot_be_read_is_refused(codes: str, severity: str) -> None:
    with pytest.raises(PolicyError):
        AlertPolicy.parse(codes, severity, 60)
