"""A record's origin: the source facts every event of it carries, from its envelope, the caller's hint, its file."""

from __future__ import annotations

from correlator.core.ingest.config import SourceHint
from correlator.core.ingest.envelopes import Decoded
from correlator.core.ingest.records import Origin
from correlator.core.ingest.sources import facts_from_path


def origin_of(decoded: Decoded, hint: SourceHint, default_cluster: str, record_key: bytes | None = None) -> Origin:
    """Where a record comes from: what its envelope says, else the caller's hint, else what its file name proves
    (a host read from a file name is marked guessed). A record that does not name both its host and its file keeps
    its Kafka key (``record_key``) as its stream: an unkeyed partition's files stay apart."""
    file = decoded.file or hint.file
    facts = facts_from_path(file) if file else None
    host = decoded.host or hint.host or (facts.host if facts else None)
    stream = record_key.decode("utf-8", errors="replace") if record_key and not (host and file) else None
    return Origin(
        cluster=decoded.cluster or hint.cluster or default_cluster,
        host=host,
        role=decoded.role or hint.role or (facts.role if facts else None),
        family=hint.family or (facts.family if facts else None),
        file=file,
        host_guessed=bool(facts and facts.host_guessed and not decoded.host and host == facts.host),
        shipper_ts_ms=decoded.shipper_ts_ms,
        file_date=facts.date if facts else None,
        stream=stream,
    )
