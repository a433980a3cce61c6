"""Where confluent-kafka clients log: one named logger, de-duplicated before it reaches the JSON handler.

Beside the settings rather than in the adapters: :meth:`correlator.config.Settings.kafka_client` hands this logger to
every client it configures, and the adapters themselves read the settings.
"""

from __future__ import annotations

import logging
import re


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
