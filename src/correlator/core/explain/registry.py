"""The cause registry: every row of ``storage_causes.py`` and ``causes.py`` by its code, and what ranking, the
verdict and the outlook read from all of them at once."""

from __future__ import annotations

from collections.abc import Mapping

from correlator.core.explain.causes import FLINK_CAUSES, Cause, Code, HostsAre
from correlator.core.explain.kinds import EvidenceKind, Periodic
from correlator.core.explain.storage_causes import STORAGE_CAUSES

CAUSES: Mapping[Code, Cause] = {c.code: c for c in (*STORAGE_CAUSES, *FLINK_CAUSES)}
"""Every code's row, storage first: the order of the README's table and the schema's enum."""
CODE_OF_KIND: Mapping[EvidenceKind, Code] = {kind: c.code for c in CAUSES.values() for kind in c.evidence}
"""Which cause an evidence interval kind speaks for."""
BASE: Mapping[EvidenceKind, float] = {kind: w for c in CAUSES.values() for kind, w in c.evidence.items()}
ROOT_CODES: frozenset[Code] = frozenset(c.code for c in CAUSES.values() if c.root)
POINT_KINDS: frozenset[EvidenceKind] = frozenset(k for c in CAUSES.values() for k in c.points)
STATED_KINDS: frozenset[EvidenceKind] = frozenset(k for c in CAUSES.values() if c.stated for k in c.evidence)


def hosts_are(code: str) -> HostsAre:
    """How a verdict of ``code`` introduces its hosts ("cause on", "looked at", "missing logs of"); a code this
    version does not know (a newer producer's) is taken as a cause."""
    try:
        return CAUSES[Code(code)].hosts_are
    except ValueError:
        return "cause on"


def cause(code: str) -> Cause:
    """The registry entry of ``code``; a code outside the registry is a programming error, said as such."""
    try:
        return CAUSES[Code(code)]
    except ValueError as e:
        raise KeyError(f"{code!r} is not a root-cause code") from e


def periodic_codes(kind: Periodic) -> frozenset[Code]:
    return frozenset(c.code for c in CAUSES.values() if c.periodic == kind)
