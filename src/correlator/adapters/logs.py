"""Structured JSON logs for the long-running services, through the standard ``logging`` module Faust also uses."""

from __future__ import annotations

import logging
import logging.config
import re
from typing import Any

import structlog

_SHARED = [
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



class RateLimit(logging.Filter):
    """librdkafka repeats one complaint per broker and retry (hundreds of ``FAIL`` lines while a broker is down):
    a message like one already logged within ``window_s`` (digits aside) is dropped and counted, and at most
    ``burst`` messages pass per window. The next message that passes says how many were held back."""

    def __init__(self, window_s: float = 60.0, burst: int = 20) -> None:
        super().__init__()
        self.window_s = window_s
        self.burst = burst
        self._seen: dict[str, float] = {}
        self._window_start = 0.0
        self._passed = 0
        self.suppressed = 0

    def filter(self, record: logging.LogRecord) -> bool:
        now = record.created
        if now - self._window_start >= self.window_s:
            self._window_start, self._passed = now, 0
            self._seen = {k: t for k, t in self._seen.items() if now - t < self.window_s}
        key = _DIGITS.sub("#", record.getMessage())
        last = self._seen.get(key)
        if (last is not None and now - last < self.window_s) or self._passed >= self.burst:
            self.suppressed += 1
            return False
        self._seen[key] = now
        self._passed += 1
        if self.suppressed:
            record.msg = f"{record.getMessage()} ({self.suppressed} similar messages suppressed)"
            record.args = ()
            self.suppressed = 0
        return True


_DIGITS = re.compile(r"\d+")

LIBRDKAFKA = logging.getLogger("librdkafka")
"""Where confluent-kafka clients log (their ``logger`` setting): through the JSON handler, de-duplicated."""
LIBRDKAFKA.addFilter(RateLimit())
