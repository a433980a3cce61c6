"""A loopback HTTP server answering as a Flink JobManager's REST API from recorded responses (404 for anything else).

A recording directory holds one file per request path, ``/`` written as ``__`` (``deploy/lab/rest.py``)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


@contextmanager
def fake_jobmanager(recorded: Path) -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            file = recorded / (self.path.strip("/").replace("/", "__") + ".json")
            body = file.read_bytes() if file.is_file() else b'{"errors": ["Not found"]}'
            self.send_response(200 if file.is_file() else 404)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - http.server's signature
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
