"""A row of a parser's wording table: the fixed phrase a record of that wording holds, and the handler that reads it.

The prefilter's trigger phrases are generated from these tables, so a wording a parser reads can never be filtered
out before it is read; ``tests/core/ingest/parse`` feeds each row a record of its wording and checks that the row is
the one that takes it and that it becomes an event.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from correlator.core.ingest.parse.emit import Emit

Where = Literal["start", "message", "record"]
"""Where the phrase must be: at the message's start, anywhere in the message, anywhere in the record (a cause chain's
line)."""
Handler = Callable[[str, Sequence[str], str, Emit], None]
"""(message, the record's lines, the record's text, emit)."""


@dataclass(frozen=True, slots=True)
class Rule:
    phrase: str
    handler: Handler
    where: Where = "start"
    prefix: str = ""
    """For a phrase inside the message: the message must also start with this."""

    def takes(self, message: str, text: str) -> bool:
        if self.where == "start":
            return message.startswith(self.phrase)
        if self.where == "message":
            return self.phrase in message and message.startswith(self.prefix)
        return self.phrase in text


def first_rule(rules: Sequence[Rule], message: str, text: str) -> Rule | None:
    """The row that takes a record: the first whose phrase is where it must be."""
    return next((rule for rule in rules if rule.takes(message, text)), None)


def phrases(rules: Sequence[Rule]) -> tuple[str, ...]:
    """The table's phrases, each once, in table order: the prefilter's triggers for it."""
    return tuple(dict.fromkeys(rule.phrase for rule in rules))
