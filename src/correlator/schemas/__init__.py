"""JSON Schemas this package publishes for consumers of its topics, shipped as files beside this module."""

from __future__ import annotations

import json
from importlib.resources import files
from typing import Any

VERDICT_SCHEMA_FILE = "verdict-v1.schema.json"
RISK_SCHEMA_FILE = "risk-v1.schema.json"
FEEDBACK_SCHEMA_FILE = "feedback-v1.schema.json"
LOSS_SCHEMA_FILE = "loss-v1.schema.json"


def verdict_schema_text() -> str:
    """The ``correlator.verdict/v1`` schema (JSON Schema draft 2020-12) exactly as shipped."""
    return files(__package__).joinpath(VERDICT_SCHEMA_FILE).read_text(encoding="utf-8")


def verdict_schema() -> dict[str, Any]:
    schema: dict[str, Any] = json.loads(verdict_schema_text())
    return schema


def risk_schema_text() -> str:
    """The ``correlator.risk/v1`` schema (JSON Schema draft 2020-12) exactly as shipped."""
    return files(__package__).joinpath(RISK_SCHEMA_FILE).read_text(encoding="utf-8")


def risk_schema() -> dict[str, Any]:
    schema: dict[str, Any] = json.loads(risk_schema_text())
    return schema


def feedback_schema_text() -> str:
    """The ``correlator.feedback/v1`` schema (JSON Schema draft 2020-12) exactly as shipped."""
    return files(__package__).joinpath(FEEDBACK_SCHEMA_FILE).read_text(encoding="utf-8")


def loss_schema_text() -> str:
    """The ``correlator.loss/v1`` schema (JSON Schema draft 2020-12) exactly as shipped."""
    return files(__package__).joinpath(LOSS_SCHEMA_FILE).read_text(encoding="utf-8")


def loss_schema() -> dict[str, Any]:
    schema: dict[str, Any] = json.loads(loss_schema_text())
    return schema
