"""A record's origin: the source facts every event of it carries, from its envelope, the caller's hint, its file."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from correlator.core.ingest.config import SourceHint
from correlator.core.ingest.envelopes import Decoded
from correlator.core.ingest.sources import facts_from_path


def origin_of(decoded: Decoded, hint: SourceHint, default_cluster: str) -> dict[str, Any]:
    """Where a record comes from: what its envelope says, else the caller's hint, else what its file name proves
    (a host read from a file name is marked guessed)."""
    file = decoded.file or hint.file
    facts = facts_from_path(file) if file else None
    host = decoded.host or hint.host or (facts.host if facts else None)
    return {
        "cluster": decoded.cluster or hint.cluster or default_cluster,
        "host": host,
        "host_guessed": bool(facts and facts.host_guessed and not decoded.host and host == facts.host),
        "role": decoded.role or hint.role or (facts.role if facts else None),
        "family": hint.family or (facts.family if facts else None),
        "file": file,
        "shipper_ts_ms": decoded.shipper_ts_ms,
        "file_date": facts.date if facts else None,
    }


KEY_FIELDS = ("cluster", "host", "file", "family", "stream")


def source_key(origin: Mapping[str, Any]) -> str:
    """One source's key: its records are stitched, its writes tracked and its clock kept apart from every other's."""
    get = origin.get  # spelled out over KEY_FIELDS: every record asks
    return (f"{get('cluster') or ''}\x1f{get('host') or ''}\x1f{get('file') or ''}\x1f{get('family') or ''}"
            f"\x1f{get('stream') or ''}")
