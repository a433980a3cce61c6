"""The incident store on a real redis-server: dedupe, leases, atomic finish, TTLs and namespacing."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
import redis

from correlator.adapters.redis_incidents import BeginStatus, RedisIncidentStore, StoreUnavailable, Thread
from correlator.core.incidents import IncidentKey, observe, occurrence
from tests.support.services import RedisServer, free_port

pytestmark = pytest.mark.integration

KEY = IncidentKey("default", "1a3bc71ac57f33961637adf340e9c28f", "HDFS_DIRECTORY_SCAN")


def verdict(verdict_id: str, failed_at: str = "2020-01-02T17:18:53.337Z") -> dict:
    return {"verdict_id": verdict_id, "cluster": KEY.cluster, "job_id": KEY.job_id,
            "root_cause": {"code": KEY.cause, "hosts": ["dn-2"]}, "failure": {"failed_at": failed_at}}


@pytest.fixture
def store(redis_url: str, unique: str) -> Iterator[RedisIncidentStore]:
    s = RedisIncidentStore(redis_url, namespace=f"test-{unique}", verdict_ttl_s=3600, incident_ttl_s=7200)
    yield s
    s.close()


class TestClaims:
    def test_new_verdict_goes_with_no_state(self, store: RedisIncidentStore) -> None:
        """The first verdict of a key gets the lease and finds no incident and no thread."""
        begun = store.begin("v1", KEY, "bot-a", 5_000)
        assert begun.status is BeginStatus.GO and begun.incident is None and begun.thread is None

    def test_finished_verdict_is_a_duplicate(self, store: RedisIncidentStore) -> None:
        """After finish, the same verdict id is a duplicate; the next one sees the stored incident and thread."""
        store.begin("v1", KEY, "bot-a", 5_000)
        incident = observe(None, occurrence(verdict("v1")), 3_600_000).incident
        store.finish("v1", "bot-a", incident, Thread("C1", "1.000001"), 1_000, verdict("v1"))
        assert store.begin("v1", KEY, "bot-b", 5_000).status is BeginStatus.DUPLICATE
        assert store.is_done("v1")
        nxt = store.begin("v2", KEY, "bot-b", 5_000)
        assert nxt.status is BeginStatus.GO and nxt.incident == incident
        assert nxt.thread == Thread("C1", "1.000001") and nxt.last_verdict == verdict("v1")

    def test_lease_keeps_other_replicas_out(self, store: RedisIncidentStore) -> None:
        """While one replica holds an incident, another replica is told who is busy with it; release frees it."""
        assert store.begin("v1", KEY, "bot-a", 5_000).status is BeginStatus.GO
        busy = store.begin("v2", KEY, "bot-b", 5_000)
        assert busy.status is BeginStatus.BUSY and busy.holder == "bot-a"
        store.release(KEY, "bot-b")  # not the holder: no effect
        assert store.begin("v2", KEY, "bot-b", 5_000).status is BeginStatus.BUSY
        store.release(KEY, "bot-a")
        assert store.begin("v2", KEY, "bot-b", 5_000).status is BeginStatus.GO

    def test_lease_expires(self, store: RedisIncidentStore) -> None:
        """A replica that died holding a lease blocks the incident only until the lease runs out."""
        store.begin("v1", KEY, "dead-bot", 50)
        threading.Event().wait(0.12)
        assert store.begin("v1", KEY, "bot-b", 5_000).status is BeginStatus.GO

    def test_concurrent_claims_have_one_winner(self, store: RedisIncidentStore) -> None:
        """Eight replicas racing for one verdict: exactly one gets it."""
        results: list[BeginStatus] = []
        barrier = threading.Barrier(8)

        def claim(i: int) -> None:
            barrier.wait()
            results.append(store.begin("v1", KEY, f"bot-{i}", 5_000).status)

        threads = [threading.Thread(target=claim, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert results.count(BeginStatus.GO) == 1 and results.count(BeginStatus.BUSY) == 7


class TestKeys:
    def test_keys_are_namespaced_and_expire(self, store: RedisIncidentStore, redis_url: str, unique: str) -> None:
        """Every key the store writes sits under its namespace and carries a TTL."""
        store.begin("v1", KEY, "bot-a", 5_000)
        incident = observe(None, occurrence(verdict("v1")), 3_600_000).incident
        store.finish("v1", "bot-a", incident, Thread("C1", "1.1"), 1_000, verdict("v1"))
        raw = redis.Redis.from_url(redis_url, decode_responses=True)
        keys = raw.keys(f"test-{unique}:*")
        assert len(keys) == 3  # verdict, incident, open index (lease released)
        for key in keys:
            assert key.startswith(f"test-{unique}:incidents:v1:")
            assert 0 < raw.ttl(key) <= 7200
        assert raw.ttl(f"test-{unique}:incidents:v1:verdict:v1") <= 3600
        raw.close()

    def test_sweep_index_lists_idle_open_incidents(self, store: RedisIncidentStore) -> None:
        """Open incidents are indexed by when they were last touched; a resolved one leaves the index."""
        store.begin("v1", KEY, "bot-a", 5_000)
        incident = observe(None, occurrence(verdict("v1")), 3_600_000).incident
        store.finish("v1", "bot-a", incident, Thread("C1", "1.1"), 1_000)
        assert store.idle_open_incidents(999) == []
        assert store.idle_open_incidents(1_000) == [KEY.id]
        begun = store.begin_sweep(KEY.id, "sweeper", 5_000)
        assert begun.status is BeginStatus.GO and begun.incident == incident
        from correlator.core.incidents import resolve

        store.finish(None, "sweeper", resolve(incident, 2_000), Thread("C1", "1.1"), 2_000)
        assert store.idle_open_incidents(10**15) == []


class TestOutage:
    def test_unreachable_redis_raises_store_unavailable(self) -> None:
        """No server: a prompt StoreUnavailable, not a hang or a raw socket error."""
        store = RedisIncidentStore(f"redis://127.0.0.1:{free_port()}/0", timeout_s=0.5)
        with pytest.raises(StoreUnavailable):
            store.begin("v1", KEY, "bot-a", 5_000)

    def test_state_survives_a_restart_of_a_persistent_redis(self, unique: str) -> None:
        """With persistence on (as in production), a restart keeps dedupe and threads; scripts reload themselves."""
        server = RedisServer()
        server.start()
        try:
            store = RedisIncidentStore(server.url, namespace=unique, timeout_s=0.5)
            store.begin("v1", KEY, "bot-a", 5_000)
            incident = observe(None, occurrence(verdict("v1")), 3_600_000).incident
            store.finish("v1", "bot-a", incident, Thread("C1", "1.1"), 1_000)
            enable_persistence(server.url)
            server.stop()
            with pytest.raises(StoreUnavailable):
                store.begin("v2", KEY, "bot-a", 5_000)
            server.start()
            assert store.begin("v1", KEY, "bot-a", 5_000).status is BeginStatus.DUPLICATE
            assert store.begin("v2", KEY, "bot-a", 5_000).thread == Thread("C1", "1.1")
            store.close()
        finally:
            server.stop()


def enable_persistence(url: str) -> None:
    """The test servers run without persistence; a save point makes SIGTERM write a snapshot a restart loads."""
    raw = redis.Redis.from_url(url)
    raw.config_set("save", "3600 1")
    raw.close()
