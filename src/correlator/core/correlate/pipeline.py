"""Which DataNodes a failed checkpoint's write went through, in which order, and which one stopped the write.

The NameNode's ``BLOCK* allocate`` of the checkpoint's files names each block's pipeline exactly (the path carries
the job id and ``chk-N``), so it comes first; the HDFS client's slow-ack pipeline and the DataNodes' own block lines
fill in when there is no NameNode log. DataNodes are told apart by ``ip:port`` (a lab or a container host runs
several on one IP); an address maps to a host through the DataNode's own lines (``dest:`` of ``Receiving``).

A DataNode "stopped the write" when it received a block of the checkpoint at the write's start and then neither
finished it nor passed it on: the next DataNode of that block's pipeline never received it, or it was the last one
and never finished. A timeout's ``remote=`` in the client names only the *first* DataNode of the pipeline, so it is
not used to blame one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from correlator.core.correlate.cases import path_ids
from correlator.core.correlate.ranking import Window
from correlator.core.events import BlockAllocated, BlockWrite, DnWriteError, Event, HdfsClientError, HdfsClientSlow

BLOCK_ID = re.compile(r"blk_(-?\d+)")


def block_id(block: str | None) -> str | None:
    m = BLOCK_ID.search(block or "")
    return m.group(1) if m else None


def ip_of(address: str) -> str:
    return address.lstrip("/").rsplit(":", 1)[0]


def address_hosts(known: dict[str, str]) -> dict[str, str]:
    """``ip:port`` → host as the DataNodes told it, plus ``ip`` → host where only one host has that IP."""
    out = dict(known)
    by_ip: dict[str, set[str]] = {}
    for address, host in known.items():
        by_ip.setdefault(ip_of(address), set()).add(host)
    for ip, hosts in by_ip.items():
        if len(hosts) == 1 and ip not in out:
            out[ip] = next(iter(hosts))
    return out


def resolve(address: str, hosts: dict[str, str]) -> str:
    """The host of a DataNode address; the address itself when no DataNode log told it."""
    address = address.lstrip("/")
    return hosts.get(address) or hosts.get(ip_of(address)) or address


@dataclass(frozen=True, slots=True)
class Stall:
    """A block write a DataNode received at the start of the stuck write and finished late (or not at all)."""

    receiving: BlockWrite
    finished_ms: int | None


@dataclass(frozen=True, slots=True)
class Stopper:
    """The DataNode that received a checkpoint block and neither finished it nor passed it downstream."""

    host: str
    block: str
    receiving: BlockWrite
    position: int
    replicas: tuple[str, ...]
    blocked_ms: int | None = None
    """Time it spent outside packet work (blocked in ``createRbw`` / ``finalizeBlock``), when that is the sign."""

    @property
    def receiving_ms(self) -> int:
        return self.receiving.ts_ms


@dataclass(frozen=True, slots=True)
class Pipeline:
    hosts: frozenset[str]
    how: str
    stalls: tuple[Stall, ...]
    allocations: tuple[BlockAllocated, ...]
    stopper: Stopper | None
    client_errors: tuple[HdfsClientError, ...]
    dn_errors: tuple[DnWriteError, ...]


def linked_client_slow(evidence: tuple[Event, ...], window: Window, job_id: str | None, checkpoint_id: int | None,
                       tm_hosts: tuple[str, ...], skew_ms: int) -> list[HdfsClientSlow]:
    """Client slow-ack lines of this write: by checkpoint path, else by TaskManager host and time."""
    out = []
    for e in evidence:
        if not isinstance(e, HdfsClientSlow):
            continue
        ids = path_ids(e.path)
        if ids is not None:
            if ids[1] == checkpoint_id and (job_id is None or ids[0] == job_id):
                out.append(e)
        elif (not tm_hosts or e.host in tm_hosts) and _touches(e.ts_ms - e.duration_ms, e.ts_ms, window, skew_ms):
            out.append(e)
    return out


def _touches(start: int, end: int, window: Window, skew_ms: int) -> bool:
    return start <= window.end_ms + skew_ms and window.start_ms - skew_ms <= end


def _allocations(evidence: tuple[Event, ...], window: Window, job_id: str | None, checkpoint_id: int | None,
                 skew_ms: int) -> list[BlockAllocated]:
    out = []
    for e in evidence:
        if isinstance(e, BlockAllocated) and e.ts_ms <= window.end_ms + skew_ms:
            ids = path_ids(e.path)
            if ids is not None and ids[1] == checkpoint_id and (job_id is None or ids[0] == job_id):
                out.append(e)
    return out


def pipeline_of(evidence: tuple[Event, ...], window: Window, *, job_id: str | None, checkpoint_id: int | None,
                tm_hosts: tuple[str, ...], hosts: dict[str, str], skew_ms: int,
                client: list[HdfsClientSlow], logged: frozenset[str]) -> Pipeline:
    """DataNodes of the write and how we know: NameNode allocation, client pipeline, block ids, stalled writes.

    ``logged``: the DataNode hosts whose own log is in the input; one without a log cannot be seen receiving a block,
    so its silence blames no one upstream of it.
    """
    found: set[str] = set()
    how: list[str] = []
    allocations = _allocations(evidence, window, job_id, checkpoint_id, skew_ms)
    for a in allocations:
        found.update(resolve(r, hosts) for r in a.replicas)
    if found:
        how.append("the NameNode's block allocation for the checkpoint's files")
    blocks = {block_id(c.block) for c in client} | {block_id(a.block) for a in allocations}
    blocks.discard(None)
    from_client = {resolve(dn, hosts) for c in client for dn in c.datanodes}
    if from_client - found:
        how.append("the HDFS client's write pipeline")
    found |= from_client
    writes = [e for e in evidence if isinstance(e, BlockWrite) and e.role == "datanode"]
    by_block = {e.host for e in writes if block_id(e.block) in blocks}
    if by_block - found:
        how.append("DataNode lines for the same block")
    found |= by_block
    stalls = _stalls(writes, window, skew_ms)
    stalled = {st.receiving.host for st in stalls}
    if stalled - found:
        how.append("block writes that stalled on the DataNode")
    found |= stalled
    client_errors = tuple(e for e in evidence if isinstance(e, HdfsClientError)
                          and _touches(e.ts_ms, e.ts_ms, window, skew_ms + 60_000)
                          and (not tm_hosts or e.host in tm_hosts or e.role != "taskmanager"))
    dn_errors = tuple(e for e in evidence if isinstance(e, DnWriteError) and e.host in found
                      and _touches(e.ts_ms - (e.duration_ms or 0), e.ts_ms, window, skew_ms))
    return Pipeline(frozenset(found), " and ".join(how), tuple(stalls), tuple(allocations),
                    _stopper(allocations, writes, window, hosts, skew_ms, logged), client_errors,
                    dn_errors)


def _stalls(writes: list[BlockWrite], window: Window, skew_ms: int) -> list[Stall]:
    stall_ms = min(window.timeout_ms or window.duration_ms, window.duration_ms) // 2
    finished: dict[tuple[str, str | None], int] = {}
    for e in writes:
        if e.duration_ms is not None:
            key = (e.host, block_id(e.block))
            finished[key] = min(finished.get(key, e.ts_ms), e.ts_ms)
    stalls: list[Stall] = []
    for e in writes:
        if e.duration_ms is None and window.start_ms - skew_ms <= e.ts_ms <= window.start_ms + stall_ms:
            done = finished.get((e.host, block_id(e.block)))
            if done is None or done - e.ts_ms >= max(stall_ms, 1000):
                stalls.append(Stall(e, done))
    return stalls


def _stopper(allocations: list[BlockAllocated], writes: list[BlockWrite], window: Window, hosts: dict[str, str],
             skew_ms: int, logged: frozenset[str]) -> Stopper | None:
    """The DataNode of a checkpoint block's pipeline that held the write up, when its own block lines show it.

    Either it received the block and the next DataNode did not receive it for a long time (it never passed it on),
    or it alone spent long outside packet work: clienttrace's duration runs from the PacketResponder's start to just
    before ``finalizeBlock``, so (finish - ``Receiving``) - duration is time spent blocked in ``createRbw`` /
    ``finalizeBlock`` (the dataset lock), which DataNodes upstream, waiting on its acks, do not show.

    "Never passed it on" needs the next DataNode's own log: when it has none, the write is known to have waited at or
    behind this one, and ``core/correlate/silent.py`` names the silent DataNode instead.
    """
    stall_ms = max(1000, min(window.timeout_ms or window.duration_ms, window.duration_ms) // 2)
    received: dict[tuple[str, str], BlockWrite] = {}
    finished: dict[tuple[str, str], BlockWrite] = {}
    for e in writes:
        bid = block_id(e.block)
        if bid is None:
            continue
        if e.phase == "finished" and e.duration_ms is not None:
            finished.setdefault((e.host, bid), e)
        elif e.duration_ms is None:
            received.setdefault((e.host, bid), e)
    for a in sorted(allocations, key=lambda x: (x.ts_ms, x.block)):
        bid = block_id(a.block)
        order = [resolve(r, hosts) for r in a.replicas]
        got = [received.get((h, bid or "")) for h in order]
        first = got[0] if got else None
        if bid is None or first is None or not window.start_ms - skew_ms <= first.ts_ms <= window.end_ms + skew_ms:
            continue
        waits: dict[int, int] = {}
        for k, r in enumerate(got):
            done = finished.get((order[k], bid))
            if r is not None and done is not None and done.duration_ms is not None:
                waits[k] = (done.ts_ms - r.ts_ms) - done.duration_ms
        blocked = [k for k, w in waits.items() if w >= stall_ms]
        if len(blocked) == 1 and all(w < stall_ms // 2 for k, w in waits.items() if k != blocked[0]):
            k = blocked[0]
            receiving = got[k]
            assert receiving is not None  # a wait is only computed for a DataNode that received the block
            return Stopper(order[k], a.block, receiving, k, tuple(order), waits[k])
        for k, r in enumerate(got):
            if r is None:
                break
            if k + 1 < len(got) and order[k + 1] not in logged:
                break
            nxt = got[k + 1] if k + 1 < len(got) else None
            done = finished.get((order[k], bid))
            late = nxt is None or nxt.ts_ms - r.ts_ms >= stall_ms
            if k + 1 < len(got) and late and (done is None or done.ts_ms - r.ts_ms >= stall_ms):
                return Stopper(order[k], a.block, r, k, tuple(order))
            if late:
                break
    return None
