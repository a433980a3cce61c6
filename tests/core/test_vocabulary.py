"""One typed vocabulary: root-cause codes, evidence kinds, periodic kinds, coverage reasons and event wire types are
each named once, in their defining module, and everywhere else by their enum member or event class.

A string that spells one of them anywhere else in ``src/`` fails here, so a producer or reader of a name is always
found by searching for its member, and a misspelt one is a type error, not a silent miss.
"""

from __future__ import annotations

import ast
import dataclasses
import typing
from pathlib import Path

import pytest

from correlator.core import events
from correlator.core.correlate.evidence import REFUSED, interval_of
from correlator.core.event_dicts import EVENT_TYPES, event_from_dict, event_to_dict
from correlator.core.events import Event, HdfsRefusal, JvmPause, RefusalKind, SlowIo, event_classes
from correlator.core.explain.causes import Code
from correlator.core.explain.registry import CAUSES
from correlator.core.explain.kinds import EvidenceKind, Periodic
from correlator.core.explain.verdict import CoverageReason, SourceCoverage
from correlator.core.ingest.parse.refusals import REFUSALS

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "correlator"

VOCABULARY: dict[str, tuple[str, frozenset[str]]] = {
    "root-cause code": ("core/explain/causes.py", frozenset(Code)),
    "evidence kind": ("core/explain/kinds.py", frozenset(EvidenceKind)),
    "periodic kind": ("core/explain/kinds.py", frozenset(Periodic)),
    "coverage reason": ("core/explain/verdict.py", frozenset(CoverageReason)),
    "event type": ("core/events/", frozenset(EVENT_TYPES)),
}
"""Each vocabulary with the one module (or package, ending in ``/``) that spells its words."""

def _spelled(path: Path) -> list[tuple[int, str, str]]:
    """``(line, word, vocabulary)`` for each string constant of ``path`` that is a word of a vocabulary, unless
    ``path`` defines a vocabulary of that word."""
    where = path.relative_to(SRC).as_posix()
    homes: dict[str, set[str]] = {}
    for name, (home, members) in VOCABULARY.items():
        for word in members:
            homes.setdefault(word, set()).add(home)
    names = {word: name for name, (_, members) in VOCABULARY.items() for word in members}
    return [(node.lineno, node.value, names[node.value]) for node in ast.walk(ast.parse(path.read_text("utf-8")))
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in homes
            and not any(where == home or (home.endswith("/") and where.startswith(home)) for home in homes[node.value])]


def _modules() -> list[Path]:
    return sorted(p for p in SRC.rglob("*.py") if "__pycache__" not in p.parts)


def test_no_word_of_the_vocabulary_is_spelled_outside_its_module() -> None:
    found = [f"{p.relative_to(SRC).as_posix()}:{line}: {vocabulary} {word!r}"
             for p in _modules()
             for line, word, vocabulary in _spelled(p)]
    assert not found, "name these by their enum member or event class:\n" + "\n".join(found)


def test_the_vocabularies_share_no_word_but_the_pause() -> None:
    """A word of two vocabularies is spelled once: the outlook's kind of recurring pauses is the pause's event type
    (``Periodic.JVM_PAUSE = JvmPause.type``)."""
    words = [word for _, members in VOCABULARY.values() for word in members]
    assert {w for w in words if words.count(w) > 1} == {JvmPause.type}
    assert Periodic.JVM_PAUSE == JvmPause.type


def test_event_types_are_generated_from_the_classes() -> None:
    """Every event class of ``core/events/`` is registered under its own wire type, and nothing else is."""
    classes = {cls for cls in vars(events).values() if isinstance(cls, type) and issubclass(cls, Event)} - {Event}
    assert set(EVENT_TYPES.values()) == classes
    assert all(EVENT_TYPES[cls.type] is cls for cls in classes)
    assert event_classes() == EVENT_TYPES


def test_a_second_class_cannot_take_a_wire_type() -> None:
    with pytest.raises(TypeError, match="share the wire type"):
        type("Impostor", (Event,), {"type": SlowIo.type, "__module__": __name__})
    assert EVENT_TYPES[SlowIo.type] is SlowIo


def test_a_sub_kind_is_a_string_on_the_wire() -> None:
    """A ``Literal`` sub-kind is checked as a string when read back (a newer producer's value is taken as before)."""
    event = SlowIo(ts_ms=1, cluster="c", host="dn1", role="datanode", kind="disk_write", duration_ms=5)
    data = event_to_dict(event)
    assert event_from_dict(data) == event
    assert getattr(event_from_dict(data | {"kind": "a_kind_of_tomorrow"}), "kind") == "a_kind_of_tomorrow"


def test_every_refusal_is_evidence_of_a_cause() -> None:
    """Every refusal kind HDFS states is the evidence of a cause, and every refusal wording names one of them."""
    kinds = set(typing.get_args(RefusalKind))
    assert set(REFUSED) == kinds
    assert {r.handler.kind for r in REFUSALS} <= kinds
    ranked = {k for c in CAUSES.values() for k in c.evidence}
    assert set(REFUSED.values()) <= ranked
    for kind in sorted(kinds):
        refusal = HdfsRefusal(ts_ms=1, cluster="c", host="nn", role="namenode", kind=kind, detail="refused")
        interval = interval_of(refusal)
        assert interval is not None and interval.kind is REFUSED[kind]


def test_the_literal_sub_kinds_are_declared_on_their_events() -> None:
    """The sub-kinds are ``Literal`` types of ``core/events/``, so their values are checked where they are used."""
    hints = {cls: typing.get_type_hints(cls) for cls in EVENT_TYPES.values()}
    literal_fields = {(cls.__name__, f.name) for cls in EVENT_TYPES.values() for f in dataclasses.fields(cls)
                      if typing.get_origin(hints[cls][f.name]) is typing.Literal}
    assert {("SlowIo", "kind"), ("HdfsRefusal", "kind"), ("HdfsClientError", "kind"), ("DnWriteError", "kind"),
            ("BlockWrite", "phase"), ("NameNodeLockHeld", "kind")} <= literal_fields


@pytest.mark.parametrize("reason", list(CoverageReason))
def test_a_coverage_reason_reads_back_from_its_words(reason: CoverageReason) -> None:
    """The wire says a reason in words (``log not read: <why>``); read back, it is the reason again, detail apart."""
    for detail in (None, "", "gzip stream cut off"):
        said = SourceCoverage("dn1", "datanode", reason, detail=detail)
        assert said.why is not None and said.why.startswith(reason.value)
        assert CoverageReason.read(said.why) == (reason, detail)
    assert CoverageReason.read("a reason of tomorrow") == ("a reason of tomorrow", None)
    assert CoverageReason.read(None) == (None, None)
