"""One JSON-over-HTTP call to a service on-call relies on (Alertmanager, PagerDuty, Opsgenie, a webhook), sorted into
the two failures a sender must tell apart: try again later, or give up on this request."""

from __future__ import annotations

import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping


class ServiceUnavailable(Exception):
    """The service did not answer, or answered 5xx or 429: worth trying again."""


class ServiceRejected(Exception):
    """The service refused the request (another 4xx): trying again cannot help."""


def send(url: str, body: bytes | None, headers: Mapping[str, str], timeout_s: float, method: str = "POST") -> bytes:
    """The response body; the error names the URL without its query (where a key could be)."""
    request = urllib.request.Request(url, data=body, method=method, headers=dict(headers))
    where = urllib.parse.urlsplit(url)._replace(query="").geturl()
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            return bytes(response.read())
    except urllib.error.HTTPError as exc:
        detail = exc.read()[:300].decode("utf-8", "replace")
        if exc.code >= 500 or exc.code == 429:
            raise ServiceUnavailable(f"{method} {where}: HTTP {exc.code} {detail}") from None
        raise ServiceRejected(f"{method} {where}: HTTP {exc.code} {detail}") from None
    except (urllib.error.URLError, OSError) as exc:
        raise ServiceUnavailable(f"{method} {where}: {exc}") from None
