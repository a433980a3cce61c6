"""The kinds of evidence a verdict weighs, and the schedules a cause may recur on: named once, as enums.

An evidence kind names what one interval of evidence shows (a lock held by the scanner, a slow disk write, a refusal),
not yet which cause it speaks for: the cause registry (``causes.py``) maps each to its cause and weight, the evidence
stage (``core/correlate/evidence.py``) makes them from events. Code names a kind by its member, never by its string,
so every producer and reader of a kind is found by search (``tests/core/test_vocabulary.py`` keeps it that way).
"""

from __future__ import annotations

from enum import StrEnum

from correlator.core.events import JvmPause


class EvidenceKind(StrEnum):
    """What an evidence interval shows; its value is its name in the engine's words (never on the wire)."""

    SCANNER_LOCK = "scanner_lock"
    """The DataNode's dataset lock held by the DirectoryScanner (its frame in the lock report)."""
    LOCK_HELD = "lock_held"
    """The dataset lock held by anything else (the holder's frame is named)."""
    SCANNER_WAIT = "scanner_wait"
    """The DirectoryScanner waited for the dataset lock: a victim of the holder, never a cause."""
    LOCK_WAIT = "lock_wait"
    """Another thread waited for the dataset lock."""
    SCAN_STATS = "scan_stats"
    """The scanner's totals line, with differences between disk and memory: a moment."""
    SCAN_RECONCILE = "scan_reconcile"
    """Reconcile warnings of the scanner (one per difference it fixed), held together as a burst: a moment."""
    SLOW_DISK = "slow_disk"
    """A slow local disk write, flush or cache call of a DataNode."""
    SLOW_PIPELINE = "slow_pipeline"
    """A slow write to the next DataNode of the pipeline, or a slow ack upstream."""
    SLOW_COMMANDS = "slow_commands"
    """A DataNode slow to process the NameNode's commands."""
    DN_STALL = "dn_stall"
    """A DataNode of the pipeline received the block and neither finished it nor passed it on."""
    BAD_LINK = "bad_link"
    """The pipeline's upstream DataNode could not reach this one (the client's ``firstBadLink``)."""
    DN_PAUSE = "dn_pause"
    NN_PAUSE = "nn_pause"
    TM_PAUSE = "tm_pause"
    """A JVM or host pause of a DataNode, the NameNode or a TaskManager."""
    NN_LOCK = "nn_lock"
    """The NameNode's namesystem lock held long."""
    CLIENT_SLOW = "client_slow"
    """The HDFS client inside Flink waited long for an ack (context: it speaks for no cause of its own)."""
    REFUSED_XCEIVER_LIMIT = "refused_xceiver_limit"
    REFUSED_NO_DATANODES = "refused_no_datanodes"
    REFUSED_SAFE_MODE = "refused_safe_mode"
    REFUSED_DIRECTORY_ITEMS = "refused_directory_items"
    REFUSED_SPACE_QUOTA = "refused_space_quota"
    REFUSED_NAMESPACE_QUOTA = "refused_namespace_quota"
    REFUSED_DISK_FULL = "refused_disk_full"
    REFUSED_TOKEN_EXPIRED = "refused_token_expired"
    """HDFS refused the write and said why: a moment that states its cause."""


class Periodic(StrEnum):
    """A schedule a cause may recur on, which the outlook predicts; its value is the outlook's ``kind`` on the wire."""

    DIRECTORY_SCAN = "directory_scan"
    JVM_PAUSE = JvmPause.type
    """Named as the event it recurs as."""
