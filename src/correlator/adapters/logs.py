"""Structured JSON logs for the long-running services, through the standard ``logging`` module Faust also uses."""

from __future__ import annotations

import logging
import logging.config
from typing import Any

import structlog

_SHARED: list[structlog.typing.Processor] = [
    structlog.stdlib.add_log_level,
    structlog.stdlib.add_logger_name,
    structlog.processors.TimeStamper(fmt="iso", utc=True),
]


def logging_config(level: str) -> dict[str, Any]:
    """A ``dictConfig`` that renders every record, ours and the libraries', as one JSON object per line."""
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {
            "json": {
                "()": structlog.stdlib.ProcessorFormatter,
                "processors": [
                    structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                    structlog.processors.format_exc_info,
                    structlog.processors.JSONRenderer(),
                ],
                "foreign_pre_chain": _SHARED,
            }
        },
        "handlers": {"stderr": {"class": "logging.StreamHandler", "formatter": "json"}},
        "root": {"handlers": ["stderr"], "level": level.upper()},
    }


def configure(level: str) -> None:
    logging.config.dictConfig(logging_config(level))
    structlog.configure(
        processors=[*_SHARED, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        cache_logger_on_first_use=True,
    )
