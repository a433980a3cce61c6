"""The words of a verdict: its title and why this cause and not the others, from the evidence and version facts."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

from correlator.core.correlate.evidence import Interval
from correlator.core.correlate.pipeline import Stopper
from correlator.core.correlate.ranking import Candidate, Window
from correlator.core.events import iso_ms
from correlator.core.explain.causes import Code
from correlator.core.explain.registry import POINT_KINDS, STATED_KINDS, cause
from correlator.core.explain.kinds import EvidenceKind
from correlator.core.explain.knowledge import DatanodeTraits
from correlator.core.explain.timeline import ROLE_NAMES

SYMPTOM_WORDS = {EvidenceKind.SLOW_DISK: "slow disk writes", EvidenceKind.SLOW_PIPELINE: "slow mirror writes and acks",
                 EvidenceKind.DN_STALL: "stalled block write",
                 EvidenceKind.SLOW_COMMANDS: "slow processing of NameNode commands",
                 EvidenceKind.BAD_LINK: "failed pipeline connection", EvidenceKind.SCANNER_LOCK: "scanner's lock hold",
                 EvidenceKind.LOCK_HELD: "dataset lock hold"}
"""Evidence kinds as a reader names them, for the sentence that says which lines a cause explains."""
UNSEEN_LOCK_KINDS = (EvidenceKind.SLOW_COMMANDS, EvidenceKind.BAD_LINK)
"""Evidence after which a dataset lock held on a version that reports none cannot be ruled out."""
WriteLink = Literal["always", "when_known", "never"]
"""What a verdict says of how the write was linked to DataNodes: always (how, or that it was matched by time), only
when an identifier linked it, or never (its cause is not in storage)."""


def _role(role: str, host: str) -> str:
    """A host named with what it runs, so a sentence about it never opens on a bare host name."""
    return f"{ROLE_NAMES.get(role, 'Host')} {host}"


def quoted(text: str) -> str:
    """Log text as logged, in quotation marks: a reader tells it from our words, and a sentence ends after it."""
    return f"“{text}”" + ("" if text.endswith((".", "!", "?")) else ".")


def and_join(words: Iterable[str]) -> str:
    items = list(words)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def seconds(ms: int) -> str:
    return f"{ms / 1000:.1f} s"


def minutes(ms: int) -> str:
    return f"{ms / 60_000:.0f} min" if ms >= 120_000 else f"{ms / 1000:.0f} s"


def title(code: str, hosts: tuple[str, ...], checkpoint_id: int | None, top: Interval | None,
          user: tuple[str, str] | None = None, silent: bool = False) -> str:
    """The cause's registry title, filled in from the leading evidence (its kind may pick a more exact title; a
    verdict that points at a silent DataNode has its own)."""
    entry = cause(code)
    chk = f"checkpoint {checkpoint_id}" if checkpoint_id is not None else "the checkpoint"
    size = seconds(top.magnitude_ms) if top is not None and top.kind not in POINT_KINDS else ""
    key = "user" if user is not None else "silent" if silent else (top.kind if top is not None else "")
    template = entry.titles_by_kind.get(key, entry.title)
    return template.format(
        where=", ".join(hosts) or "the cluster", chk=chk, Chk=chk[0].upper() + chk[1:],
        for_size=f" for {size}" if size else "",
        holder=(getattr(top.source, "holder", None) if top is not None else None) or "A thread",
        count=top.magnitude_ms if top is not None else 0,
        of_limit=f" of {limit}" if (limit := getattr(top.source, "limit", None) if top else None) else "",
        left=f": {value:,} bytes left where a block needs {limit:,}"
        if limit and (value := getattr(top.source, "value", None) if top else None) is not None else "",
        exception=_short(user[0]) if user else "", frame=user[1] if user else "")


def _short(text: str, limit: int = 100) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _scanner_points(top: Interval, window: Window, traits: DatanodeTraits | None) -> str:
    said = (f"While the stuck write of {seconds(window.end_ms - window.start_ms)} ran, "
            f"{_role(top.role, top.host)} logged at {iso_ms(top.end_ms)}: {top.summary}.")
    if traits is None:
        return said + " The DataNode's version is unknown, so whether it reports lock holds cannot be told."
    return said + f" {traits.lock_sentence()}; {traits.totals_sentence()}."


def _stopper_sentence(stopper: Stopper, traits: DatanodeTraits | None) -> str:
    position = stopper.position + 1
    where = f"DataNode {stopper.host} (position {position} of the pipeline {', '.join(stopper.replicas)})"
    if stopper.blocked_ms is not None:
        said = (f"{where} received {stopper.block} at {iso_ms(stopper.receiving_ms)} and spent "
                f"{seconds(stopper.blocked_ms)} outside packet work (blocked in createRbw/finalizeBlock), which the "
                "DataNodes before it, waiting on its acks, did not; no JVM pause and no slow I/O was logged")
    else:
        said = (f"{where} received {stopper.block} at {iso_ms(stopper.receiving_ms)} and neither finished it nor "
                "passed it on, with no JVM pause and no slow I/O logged")
    return said + "." + _invisible_lock(traits, stopper.host)


def _invisible_lock(traits: DatanodeTraits | None, host: str) -> str:
    if traits is None or not traits.lock_manager:
        return ""
    return (f" {traits.lock_sentence()}, so a dataset lock held on {host} cannot be seen in this version "
            "and cannot be ruled out.")


def _top_sentence(top: Interval, window: Window, traits: DatanodeTraits | None, stopper: Stopper | None) -> str:
    """What the leading evidence says: a refusal in HDFS's words, a scanner's moment, a stalled DataNode, a span."""
    if top.kind in STATED_KINDS:
        detail = str(getattr(top.source, "detail", "") or top.summary)[:300].rstrip()
        return (f"{_role(top.role, top.host)} logged why HDFS refused the write at {iso_ms(top.end_ms)}: "
                + quoted(detail))
    if top.kind in POINT_KINDS:
        return _scanner_points(top, window, traits)
    if top.kind == EvidenceKind.DN_STALL and stopper is not None:
        return _stopper_sentence(stopper, traits)
    unseen = _invisible_lock(traits, top.host) if top.kind in UNSEEN_LOCK_KINDS else ""
    return (f"The stuck write of {seconds(window.end_ms - window.start_ms)}"
            + (f" (timeout {seconds(window.timeout_ms)})" if window.timeout_ms else "")
            + f" overlaps what {_role(top.role, top.host)} logged from {iso_ms(top.start_ms)} to "
            f"{iso_ms(top.end_ms)}: {top.summary}." + unseen)


def _cause_sentences(best: Candidate | None, others: Sequence[Candidate], window: Window, code: Code,
                     traits: DatanodeTraits | None, stopper: Stopper | None) -> list[str]:
    """Why the ranked cause: its leading evidence, and the symptoms it explains on its host."""
    if best is None or not best.scored:
        return []
    parts = [_top_sentence(best.scored[0].interval, window, traits, stopper)]
    symptoms = sorted({s.interval.kind for c in others for s in c.scored if s.symptom_of == code})
    if symptoms:
        said = and_join(SYMPTOM_WORDS.get(k, "other slow operations") for k in symptoms)
        parts.append(f"It also explains the {said} logged on the same host.")
    return parts


def _link_sentences(best: Candidate | None, how: str, link: WriteLink) -> list[str]:
    """How the write was linked to DataNodes (the NameNode is one host: nothing to link)."""
    namenode = best is not None and bool(best.scored) and best.scored[0].interval.role == "namenode"
    if link == "never" or namenode:
        return []
    if how:
        return [f"The DataNodes of the write are known from {how}."]
    if link == "always":
        return ["No identifier linked the write to DataNodes, so they were matched by time across the cluster."]
    return []


def explanation(best: Candidate | None, others: Sequence[Candidate], window: Window, how: str, code: Code, *,
                opening: Sequence[str] = (), aside: Sequence[str] = (), link: WriteLink = "always",
                traits: DatanodeTraits | None = None, stopper: Stopper | None = None,
                victims: Sequence[Interval] = (), named_by_client: str | None = None) -> str:
    """Why this cause and not the others. ``opening``: a detected cause's own sentences (else the ranked cause's
    evidence speaks); ``aside``: what a finding adds to another cause's verdict; ``link``: the write-link sentence
    the cause takes."""
    parts = list(opening) or _cause_sentences(best, others, window, code, traits, stopper)
    parts += aside
    parts += [f"On {v.host}, {v.summary}." for v in victims]
    if named_by_client:
        parts.append(named_by_client)
    parts += _link_sentences(best, how, link)
    if others:
        parts.append("Other causes have lower confidence: "
                     + ", ".join(f"{c.code} {c.score:.2f}" for c in others[:4]) + ".")
    return " ".join(parts)
