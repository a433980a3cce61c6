"""One row type for every wording a parser reads. As in Drain3's templates, a row is data: the fixed phrase a record
of the wording holds and what else decides that a record is of it (:meth:`Wording.takes`), the handler that reads it,
and the events it emits.

Every parser's table is a tuple of these rows: ``hdfs.RULES`` (DataNode, NameNode), ``flink.RULES`` (with
``flink_spans.RULES``), ``hdfs_client.RULES``, ``kafka.BROKER_RULES`` and ``CLIENT_RULES``, ``refusals.REFUSALS``,
``gc.RULES``. The prefilter's trigger phrases are generated from the tables (:func:`triggers`) and each parser's
dispatch from its table (:class:`Dispatch`, which asks the rows), so a wording a parser reads can never be filtered out
before it is read, and only the row says which records it takes: ``tests/core/ingest/parse`` feeds each row a record of
its wording, asks the row whether it takes it and the dispatch whether it is the first that does, and checks that the
record becomes the events the row names.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

from correlator.core.events import Event
from correlator.core.ingest.parse.emit import Emit

Where = Literal["start", "message", "record"]
"""Where the phrase must be: at the message's start, anywhere in the message, anywhere in the record (a cause chain's
line)."""
Handler = Callable[[str, Sequence[str], str, Emit], None]
"""The Flink, HDFS client and Kafka handlers: (message, the record's lines, the record's text, emit)."""
H = TypeVar("H")


@dataclass(frozen=True, slots=True)
class Wording(Generic[H]):
    """One wording: its trigger phrase and where it must be, what else the record must show, the handler that reads
    it and the events it emits."""

    phrase: str
    """The fixed text every record of the wording holds: a prefilter trigger (a block-write row's aside)."""
    handler: H
    """What reads a record of the wording, called as its parser calls it (``Handler`` for Flink, the HDFS client and
    Kafka; ``hdfs.Handler``; ``refusals.Refused``); ``None`` for a GC wording, whose record ``gc.parse_gc`` reads
    whole."""
    where: Where = "start"
    prefix: str = ""
    """For a phrase inside the message: the message must also start with this."""
    loggers: frozenset[str] = frozenset()
    """The logger class names (the header's ``segment``) it is logged by; empty: any."""
    needs: tuple[str, ...] = ()
    """Words of which the record must hold one as well (the phrase alone is also said for other reasons)."""
    emits: tuple[type[Event], ...] = ()
    """The events a record of it becomes (some of them, as the record says)."""
    burst: str | None = None
    """A burst kind: a line of this wording can extend a held burst from its bytes alone (ingest's fast path)."""
    write: bool = False
    """A block-write line: the write-line reader finds it, it is no trigger."""

    def takes(self, message: str, text: str | None = None, logger: str = "") -> bool:
        """Whether a record is of this wording: ``message`` its message (a GC record's: its line), ``text`` the
        whole record (its lines joined; by default the message alone), ``logger`` its logger's class name."""
        if self.loggers and logger not in self.loggers:
            return False
        where = self.where
        if where == "start":
            if not message.startswith(self.phrase):
                return False
        elif where == "message":
            if self.phrase not in message or not message.startswith(self.prefix):
                return False
        elif self.phrase not in (message if text is None else text):
            return False
        return not self.needs or any(word in (message if text is None else text) for word in self.needs)


class Dispatch(Generic[H]):
    """A table's dispatch: the first of its rows that takes a record, as asking the rows in order finds it, with
    fewer rows asked: a row whose phrase must open the message is asked only about messages that open with the
    phrase's first ``key`` characters (``key`` the length of the table's shortest such phrase)."""

    __slots__ = ("_elsewhere", "_key", "_opening", "rows")

    def __init__(self, rows: Sequence[Wording[H]]) -> None:
        self.rows: tuple[Wording[H], ...] = tuple(rows)
        starts = {row.phrase for row in self.rows if row.where == "start"}
        key = min((len(phrase) for phrase in starts), default=0)
        self._key = key
        self._elsewhere = tuple(row for row in self.rows if row.where != "start")
        """The rows to ask about a message that opens with no start row's key."""
        self._opening = {opening: tuple(row for row in self.rows
                                        if row.where != "start" or row.phrase[:key] == opening)
                         for opening in {phrase[:key] for phrase in starts}}
        """Per opening of ``key`` characters: the rows to ask, in table order."""

    def first(self, message: str, text: str | None = None, logger: str = "") -> Wording[H] | None:
        """The first row that takes the record (see :meth:`Wording.takes`), or None."""
        for row in self._opening.get(message[:self._key], self._elsewhere):
            if row.takes(message, text, logger):
                return row
        return None


def triggers(rows: Iterable[Wording[Any]]) -> tuple[str, ...]:
    """The rows' phrases, each once, in table order, block-write rows aside: the prefilter's triggers for them."""
    return tuple(dict.fromkeys(row.phrase for row in rows if not row.write))
