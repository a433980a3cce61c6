"""HDFS saying why it refused a checkpoint's write becomes the verdict's cause, with the limit and the setting.

The "unexplained" golden scenario (checkpoint 60 expires, the HDFS logs show nothing abnormal) gets one more
TaskManager record: the task's failure with the cause chain a Flink 1.7 client logs when HDFS refuses, in the
wording of the Hadoop sources named per row. Kerberos cannot run here: the expired-token row is judged on the
wording only, like the others until the lab captures them from real daemons.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from correlator.offline.analyze import analyze

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "scenarios" / "unexplained"
JOB = "1a3bc71ac57f33961637adf340e9c28f"
FILE = f"/saas/app/flink/checkpoints/{JOB}/chk-60/3d792fa1-2284-47a4-87e7-f5938b5885ca"
TM = "flink-flink-taskexecutor-0-tm01.example.com.log"

CHAINS: dict[str, tuple[str, str, int | None, str | None, str | None]] = {
    # code: (innermost cause as the client logs it, where the wording is from, limit, setting, value)
    "NAMENODE_SAFE_MODE": (
        "org.apache.hadoop.ipc.RemoteException(org.apache.hadoop.hdfs.server.namenode.SafeModeException): Cannot "
        f"create file{FILE}. Name node is in safe mode.",
        "FSNamesystem.checkNameNodeSafeMode, 2.7-3.4", None, "dfs.namenode.resource.du.reserved", None),
    "HDFS_NO_DATANODES": (
        f"org.apache.hadoop.ipc.RemoteException(java.io.IOException): File {FILE} could only be written to 0 of the 1 "
        "minReplication nodes. There are 3 datanode(s) running and 3 node(s) are excluded in this operation.",
        "BlockManager.chooseTarget4NewBlock, 3.x", 1, "dfs.client.block.write.replace-datanode-on-failure.best-effort",
        "true"),
    "DATANODE_XCEIVER_LIMIT": (
        "java.io.IOException: Xceiver count 4097 exceeds the limit of concurrent xcievers: 4096",
        "DataXceiverServer.run, 2.x-3.x (as the DataNode logs it; a client sees the DataNode close its stream)", 4096,
        "dfs.datanode.max.transfer.threads", "8192"),
    "DATANODE_DISK_FULL": (
        "org.apache.hadoop.ipc.RemoteException(org.apache.hadoop.util.DiskChecker$DiskOutOfSpaceException): Out of "
        "space: The volume with the most available space (=0 B) is less than the block size (=134217728 B).",
        "RoundRobinVolumeChoosingPolicy.chooseVolume, 2.x-3.x", None, "dfs.datanode.du.reserved", None),
    "NAMENODE_LIMIT": (
        "org.apache.hadoop.ipc.RemoteException(org.apache.hadoop.hdfs.protocol.FSLimitException$"
        f"MaxDirectoryItemsExceededException): The directory item limit of /saas/app/flink/checkpoints/{JOB} is "
        "exceeded: limit=1048576 items=1048576",
        "FSDirectory.verifyMaxDirItems, 2.x-3.x", 1048576, "dfs.namenode.fs-limits.max-directory-items", "2097152"),
    "HDFS_TOKEN_EXPIRED": (
        "org.apache.hadoop.ipc.RemoteException(org.apache.hadoop.security.token.SecretManager$InvalidToken): token "
        "(HDFS_DELEGATION_TOKEN token 7212 for flink) is expired, current time: 2020-01-02 09:05:41,000+0000 expected "
        "renewal time: 2020-01-02 09:00:00,000+0000",
        "AbstractDelegationTokenSecretManager.checkToken, 2.x-3.x", None, "security.kerberos.login.keytab", None),
}


def _record(cause: str) -> str:
    op = "Source: analytics_standarddata_weapp_share-druid -> Map (1/1)"
    return "\n".join((
        f"2020-01-02 09:05:41,200 INFO  org.apache.flink.runtime.taskmanager.Task                     - {op} "
        "(f77383c13458a748e9bb17bca3f2c9bf) switched from RUNNING to FAILED.",
        f"AsynchronousException{{java.lang.Exception: Could not materialize checkpoint 60 for operator {op}.}}",
        "\tat org.apache.flink.streaming.runtime.tasks.StreamTask$AsyncCheckpointRunnable.run(StreamTask.java:884)",
        f"Caused by: java.lang.Exception: Could not materialize checkpoint 60 for operator {op}.",
        "\t... 6 more",
        f"Caused by: java.io.IOException: Could not flush and close the file system output stream to hdfs:{FILE} in "
        "order to obtain the stream state handle",
        "\t... 7 more",
        f"Caused by: {cause}",
        "\tat org.apache.hadoop.ipc.Client.call(Client.java:1476)",
        "",
    ))


@pytest.mark.parametrize("code", sorted(CHAINS))
def test_the_refusal_in_the_failure_chain_is_the_cause(code: str, tmp_path: Path) -> None:
    cause, _source, limit, setting, value = CHAINS[code]
    run = tmp_path / "logs"
    shutil.copytree(GOLDEN, run)
    with (run / TM).open("a", encoding="utf-8") as f:
        f.write(_record(cause))
    [v] = analyze([str(run)])
    assert v.checkpoint_id == 60
    assert v.root_cause.code == code, (v.root_cause.title, v.alternatives)
    assert v.root_cause.hosts == ("tm01.example.com",)
    assert "HDFS refused the write of checkpoint 60" in v.root_cause.title
    if limit is not None and code != "HDFS_NO_DATANODES":
        assert f"of {limit}" in v.root_cause.title
    assert any(e.type == "hdfs_refusal" for e in v.evidence)
    steps = {s.setting: s.value for s in v.remediation}
    assert setting in steps and steps[setting] == value, v.remediation


def test_without_the_refusal_the_scenario_stays_unexplained() -> None:
    [v] = analyze([str(GOLDEN)])
    assert v.root_cause.code == "UNEXPLAINED"
