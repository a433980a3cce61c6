"""Which verdicts reach on-call, and how loud: decided once at start-up from the settings, applied to every verdict.

A verdict that names no cause (``UNEXPLAINED``, ``INSUFFICIENT_DATA``) pages nobody by default: it asks for logs, not
for action. A verdict about a failure older than the age limit (a file of last year's verdicts, a feed far behind)
is not fired "now". Severity comes from the cause registry, overridable per code.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, get_args

from correlator.core.explain.causes import Code, Severity
from correlator.core.explain.registry import CAUSES
from correlator.core.explain.risk import RISK_SCHEMA
from correlator.core.explain.transactions import LOSS_SCHEMA
from correlator.core.explain.verdict import parse_iso_ms

QUIET_CODES = frozenset({Code.UNEXPLAINED, Code.INSUFFICIENT_DATA})


class RecordKind(StrEnum):
    """What a record on the feed is, by its schema: the alert sinks treat each kind its own way."""

    VERDICT = "correlator.verdict"
    WARNING = RISK_SCHEMA.split("/")[0]
    """An early warning: Slack's quiet note, no alert."""
    LOSS = LOSS_SCHEMA.split("/")[0]
    """Records an exactly-once Kafka sink lost: an alert above every verdict."""


def kind_of(record: Mapping[str, Any]) -> RecordKind:
    """The record's kind from its ``schema`` (``correlator.risk/v1`` …); a record without one is a verdict."""
    family = str(record.get("schema") or RecordKind.VERDICT).split("/")[0]
    try:
        return RecordKind(family)
    except ValueError:
        return RecordKind.VERDICT


class PolicyError(ValueError):
    """A setting of the alert policy that cannot be read: said at start-up, never guessed around."""


@dataclass(frozen=True, slots=True)
class AlertPolicy:
    codes: frozenset[str] = frozenset(c for c in Code if c not in QUIET_CODES)
    """Codes that alert; a code this version does not know (a newer producer's) alerts too."""
    severity: Mapping[str, Severity] = field(default_factory=dict)
    """Per-code overrides of the registry's severity."""
    max_age_ms: int = 3_600_000

    @classmethod
    def parse(cls, codes: str, severity: str, max_age_min: float) -> AlertPolicy:
        """``codes``: comma-separated codes, ``all``, or empty for the default; ``severity``: ``CODE=level,...``."""
        known = {str(c) for c in Code}
        chosen = frozenset(known) if codes.strip() == "all" else frozenset(
            c.strip() for c in codes.split(",") if c.strip()) or cls().codes
        if unknown := sorted(chosen - known):
            raise PolicyError(f"unknown root-cause code(s) in the alert codes: {', '.join(unknown)}")
        levels: dict[str, Severity] = {}
        for item in (i.strip() for i in severity.split(",") if i.strip()):
            code, _, level = item.partition("=")
            if code.strip() not in known or level.strip() not in get_args(Severity):
                raise PolicyError(f"alert severity {item!r}: want CODE=critical|warning|info with a known code")
            levels[code.strip()] = level.strip()  # type: ignore[assignment]
        return cls(chosen, levels, int(max_age_min * 60_000))

    def severity_of(self, code: str) -> Severity:
        if code in self.severity:
            return self.severity[code]
        try:
            return CAUSES[Code(code)].severity
        except ValueError:
            return "warning"

    def suppressed(self, verdict: Mapping[str, Any], now_ms: int) -> str | None:
        """Why this verdict is not sent (``None``: it is)."""
        code = str((verdict.get("root_cause") or {}).get("code") or "")
        if code in {str(c) for c in Code} and code not in self.codes:
            return f"{code} is not among the codes that alert"
        failed = (verdict.get("failure") or {}).get("failed_at") or verdict.get("as_of")  # a loss: when it was seen
        if isinstance(failed, str):
            try:
                age_ms = now_ms - parse_iso_ms(failed)
            except ValueError:
                return None
            if age_ms > self.max_age_ms:
                return f"its failure is {age_ms // 60_000} min old, over the {self.max_age_ms // 60_000} min limit"
        return None
