"""The pace of a checkpoint's uploads in the store's log: one after another, each in good time, while more subtasks
had state to upload, is a client out of connections; uploads in parallel, or with pauses between them, are not."""

from __future__ import annotations

from dataclasses import replace

from correlator.core.correlate.objectstore import QUEUED_BUSY, fewest_connections, most_in_flight, queued_requests
from correlator.core.correlate.ranking import Window
from correlator.core.events import ObjectStoreRequest

JOB = "0f1d3051bacb176f84c5dd63a89c419e"
T0 = 1_764_958_496_000
WINDOW = Window(T0, T0 + 10_000, 10_000)


def put(at_s: float, total_ms: int, chk: int = 3, n: int = 0, status: int = 200) -> ObjectStoreRequest:
    return ObjectStoreRequest(ts_ms=T0 + int(at_s * 1000), cluster="default", host="lab-checkpoints",
                              role="objectstore", ref=f"s3:{at_s}:{n}", bucket="lab-checkpoints",
                              key=f"flink/checkpoints/{JOB}/chk-{chk}/file-{n}", operation="REST.PUT.OBJECT",
                              status=status, total_ms=total_ms)


SERIAL = tuple(put(i, 920, n=i) for i in range(9))
"""As the lab's s3-connection-limit run: one upload a second, each 0.9 s in the store."""


def test_back_to_back_uploads_one_at_a_time_are_queued_on_the_client() -> None:
    found = queued_requests(SERIAL, WINDOW, JOB, 3, 0, uploaders=10)
    assert found is not None
    assert (found.in_flight, found.uploaders, found.bucket) == (1, 10, "lab-checkpoints")
    assert found.prefix == f"flink/checkpoints/{JOB}" and found.busy >= QUEUED_BUSY


def test_without_knowing_how_many_subtasks_upload_nothing_is_concluded() -> None:
    """A single subtask uploading its files one by one looks the same in the store's log."""
    assert queued_requests(SERIAL, WINDOW, JOB, 3, 0, uploaders=None) is None
    assert queued_requests(SERIAL, WINDOW, JOB, 3, 0, uploaders=1) is None


def test_uploads_in_parallel_are_not_queued() -> None:
    """Ten uploads received in one second, 0.92 s each: at best two of them one after the other on a connection."""
    parallel = tuple(put(0, 920, n=i) for i in range(10))
    assert (most_in_flight(parallel), fewest_connections(parallel)) == (10, 5)
    assert queued_requests(parallel, WINDOW, JOB, 3, 0, uploaders=10) is None
    short = Window(T0, T0 + 3_000, 3_000)  # five connections would be busy 61 % of it: the stamps allow ten
    assert queued_requests(parallel, short, JOB, 3, 0, uploaders=10) is None
    staggered = tuple(put(i // 2, 920, n=i) for i in range(10))
    assert fewest_connections(staggered) == 2
    assert queued_requests(staggered, WINDOW, JOB, 3, 0, uploaders=10) is None


def test_uploads_with_pauses_between_them_are_not_queued() -> None:
    sparse = tuple(put(3 * i, 920, n=i) for i in range(4))
    assert queued_requests(sparse, WINDOW, JOB, 3, 0, uploaders=10) is None


def test_another_checkpoints_refused_or_slow_uploads_do_not_count() -> None:
    other = tuple(put(i, 920, chk=2, n=i) for i in range(9))
    refused = tuple(put(i, 920, n=i, status=503) for i in range(9))
    slow = tuple(put(i, 1_500, n=i) for i in range(9))
    for requests in (other, refused, slow):
        assert queued_requests(requests, WINDOW, JOB, 3, 0, uploaders=10) is None


def test_touching_requests_do_not_overlap() -> None:
    assert most_in_flight((put(0, 1000, n=0), put(1, 1000, n=1))) == 1
    assert most_in_flight((put(0, 1001, n=0), put(1, 1000, n=1))) == 2
    assert fewest_connections((put(0, 1001, n=0), put(1, 1000, n=1))) == 1  # the second may be received at 1.001 s
    assert fewest_connections((put(0, 2000, n=0), put(1, 1000, n=1))) == 2


def test_back_to_back_uploads_stamped_in_one_second_may_share_a_connection() -> None:
    """As the lab's s3-connection-limit run on Flink 1.20.1 logged it: the store stamps a request by the second it
    received it, so two uploads of 0.92 s, one after the other on one connection, can both carry the same second."""
    seconds = [int(0.05 + 0.93 * i) for i in range(9)]  # received at 0.05 s, 0.98 s, 1.91 s, ...: 0, 0, 1, 2, ...
    assert seconds[0] == seconds[1]
    found = queued_requests(tuple(put(at, 920, n=i) for i, at in enumerate(seconds)), WINDOW, JOB, 3, 0, uploaders=10)
    assert found is not None and found.in_flight == 1


def test_uploads_received_after_the_checkpoint_ended_do_not_count() -> None:
    """As the live lab's run on Flink 1.20.1 logged it: the expired checkpoint's clean-up writes (S3A's directory
    markers) land right after the end, one of them beside the next checkpoint's first upload; they delayed nothing."""
    serial = tuple(put(i, 920, n=i) for i in range(10))
    after = tuple(put(11, 920, n=n) for n in (10, 11, 12))  # within the clock skew allowed, after the end
    found = queued_requests(serial + after, WINDOW, JOB, 3, 2_000, uploaders=10)
    assert found is not None and found.in_flight == 1 and len(found.requests) == 10


def test_directory_markers_are_no_uploads() -> None:
    """S3A's ``chk-N/`` markers (the JobManager's at the trigger, the clean-up's after an expiry, possibly in the
    second the checkpoint ended) are bookkeeping, not a TaskManager's uploads."""
    def marker(at_s: float, n: int) -> ObjectStoreRequest:
        return replace(put(at_s, 920, n=n), key=f"flink/checkpoints/{JOB}/chk-3/")
    markers = (marker(0, 100), marker(9, 101), marker(9, 102), marker(9, 103))
    found = queued_requests(SERIAL + markers, WINDOW, JOB, 3, 0, uploaders=10)
    assert found is not None and found.in_flight == 1 and len(found.requests) == len(SERIAL)
