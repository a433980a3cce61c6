"""The lab's object-store fault proxy: an HTTP proxy on loopback in front of a real S3 server (s3proxy) that can
answer a share of PUTs with S3's `503 SlowDown` (its XML error body) or hold them, and that writes one S3 server
access log record (the documented space-separated format) for every request it answers.

    python deploy/lab/faultproxy.py --listen PORT --upstream PORT --access-log FILE --control FILE
                                    [--max-seconds 900] [--bucket-owner ID] [--seed N]

The control file is JSON, read again whenever it changes: `{"put_503": 0.8, "put_delay_s": 0, "put_error": null,
"prefix": "flink/"}` (a share of PUTs of objects and parts under `prefix` answered 503 SlowDown, a delay before every
such PUT is forwarded, or every such PUT refused with `ExpiredToken` (400) or `AccessDenied` (403)); with
`"prefix_rate": 1.5`, PUTs under `prefix` beyond that many a second per key prefix (the key's first
`prefix_depth` segments, default 1) are answered 503 SlowDown, as S3 throttles one hot prefix while others are fine;
`"ops": ["REST.PUT.PART"]` limits the fault to those operations (a multipart upload's parts); `"burst_on_s": 3,
"burst_off_s": 3` answers `put_503`'s share only in bursts of that many seconds, with quiet seconds between. No file, or `{}`: every request is forwarded as it came. The proxy listens on 127.0.0.1 only and exits
after --max-seconds whatever happens; the lab stops it by pid before that.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import http.client
import json
import os
import random
import sys
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "proxy-connection"}
ERROR_BODY = ("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>{code}</Code>"
              "<Message>{message}</Message><RequestId>{rid}</RequestId><HostId>{hid}</HostId></Error>")
ERRORS = {
    "SlowDown": (503, "Slow Down", "Please reduce your request rate."),
    "ExpiredToken": (400, "Bad Request", "The provided token has expired."),
    "AccessDenied": (403, "Forbidden", "Access Denied"),
}
"""The errors the proxy can answer with: S3's status, reason and message for each code."""


class Control:
    """The fault settings, re-read when the control file's modification time changes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.mtime = -1.0
        self.settings: dict[str, object] = {}
        self.lock = threading.Lock()

    def get(self) -> dict[str, object]:
        with self.lock:
            try:
                mtime = self.path.stat().st_mtime
            except FileNotFoundError:
                self.mtime, self.settings = -1.0, {}
                return self.settings
            if mtime != self.mtime:
                try:
                    self.settings = json.loads(self.path.read_text() or "{}")
                    self.mtime = mtime
                except ValueError:
                    pass  # a write in progress: the next request reads it again
            return self.settings


def operation(method: str, key: str, query: dict[str, list[str]], headers: dict[str, str]) -> str:
    """The access log's operation name (`REST.PUT.OBJECT`, `REST.PUT.PART`, `REST.GET.BUCKET`, ...)."""
    if not key:
        if method == "POST" and "delete" in query:
            return "REST.POST.MULTI_OBJECT_DELETE"
        return f"REST.{method}.BUCKET"
    if method == "PUT" and "partNumber" in query:
        return "REST.PUT.PART"
    if method == "PUT" and "x-amz-copy-source" in headers:
        return "REST.COPY.OBJECT"
    if method == "POST" and "uploads" in query:
        return "REST.POST.UPLOADS"
    if method == "POST" and "uploadId" in query:
        return "REST.POST.UPLOAD"
    return f"REST.{method}.OBJECT"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: ProxyServer

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the stdlib's name
        pass  # the access log is the proxy's only log

    def _serve(self) -> None:
        received = time.time()
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        parts = urlsplit(self.path)
        segments = parts.path.lstrip("/").split("/", 1)
        bucket = unquote(segments[0]) if segments[0] else "-"
        key = unquote(segments[1]) if len(segments) > 1 else ""
        query = parse_qs(parts.query, keep_blank_values=True)
        headers = {k.lower(): v for k, v in self.headers.items()}
        op = operation(self.command, key, query, headers)
        settings = self.server.control.get()
        rid = "".join(self.server.rng.choice("0123456789ABCDEF") for _ in range(16))
        hid = base64.b64encode(hashlib.sha256(rid.encode()).digest() + os.urandom(8)).decode()
        ops = settings.get("ops")
        faulted = (self.command == "PUT" and key.startswith(str(settings.get("prefix", "")))
                   and (not isinstance(ops, list) or op in ops))
        error = "-"
        first_byte = received
        refused = settings.get("put_error") if faulted else None
        if faulted and _in_burst(settings, received) and self.server.rng.random() < _number(settings, "put_503"):
            refused = "SlowDown"
        elif faulted and _number(settings, "prefix_rate") > 0 and not self.server.admit(key, received, settings):
            refused = "SlowDown"
        if isinstance(refused, str) and refused in ERRORS:
            status, reason, message = ERRORS[refused]
            error = refused
            out = ERROR_BODY.format(code=refused, message=message, rid=rid, hid=hid).encode()
            first_byte = time.time()
            self.send_response(status, reason)
            for name, value in (("Content-Type", "application/xml"), ("Content-Length", str(len(out))),
                                ("x-amz-request-id", rid), ("x-amz-id-2", hid), ("Server", "AmazonS3")):
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(out)
        else:
            if faulted and _number(settings, "put_delay_s") > 0:
                time.sleep(_number(settings, "put_delay_s"))
            conn = http.client.HTTPConnection("127.0.0.1", self.server.upstream, timeout=120)
            try:
                fwd = {k: v for k, v in self.headers.items() if k.lower() not in HOP and k.lower() != "expect"}
                conn.request(self.command, self.path, body=body if body or self.command in ("PUT", "POST") else None,
                             headers=fwd)
                resp = conn.getresponse()
                first_byte = time.time()
                out = resp.read()
                status = resp.status
                if status >= 300:
                    error = _error_code(out)
                self.send_response(status, resp.reason)
                for name, value in resp.getheaders():
                    if name.lower() not in HOP and name.lower() != "content-length":
                        self.send_header(name, value)
                sent_len = resp.getheader("Content-Length") if self.command == "HEAD" else str(len(out))
                self.send_header("Content-Length", sent_len or "0")
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(out)
            finally:
                conn.close()
        self.wfile.flush()
        done = time.time()
        sent = len(out) if self.command != "HEAD" and out else 0
        decoded = self.headers.get("x-amz-decoded-content-length")  # an aws-chunked body's object size
        size = (decoded or str(length)) if self.command == "PUT" and length else "-"
        agent = self.headers.get("User-Agent", "-")
        stamp = time.strftime("%d/%b/%Y:%H:%M:%S +0000", time.gmtime(received))
        record = (f"{self.server.owner} {bucket} [{stamp}] {self.client_address[0]} - {rid} {op} "
                  f"{key or '-'} \"{self.command} {self.path} {self.request_version}\" {status} {error} "
                  f"{sent or '-'} {size} {int((done - received) * 1000)} {int((first_byte - received) * 1000)} "
                  f"\"-\" \"{agent}\" - {hid} SigV4 - AuthHeader {self.headers.get('Host', '-')} - - -\n")
        self.server.write(record)

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _serve


def _in_burst(settings: dict[str, object], at: float) -> bool:
    """Whether ``at`` falls in a burst: ``burst_on_s`` seconds of throttling, then ``burst_off_s`` of none, over and
    over (no ``burst_on_s``: always)."""
    on, off = _number(settings, "burst_on_s"), _number(settings, "burst_off_s")
    return on <= 0 or at % (on + off) < on


def _number(settings: dict[str, object], name: str) -> float:
    value = settings.get(name)
    return float(value) if isinstance(value, int | float) else 0.0


def _error_code(body: bytes) -> str:
    start = body.find(b"<Code>")
    end = body.find(b"</Code>", start)
    return body[start + 6:end].decode("utf-8", "replace") if start >= 0 and end > start else "-"


class ProxyServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, port: int, upstream: int, log: Path, control: Control, owner: str, seed: int) -> None:
        super().__init__(("127.0.0.1", port), Handler)
        self.upstream = upstream
        self.control = control
        self.owner = owner
        self.rng = random.Random(seed)
        self.log_lock = threading.Lock()
        self.log = log.open("a", buffering=1)
        self.rates: dict[str, deque[float]] = {}
        """Per key prefix, when its PUTs of the last second were admitted."""

    def admit(self, key: str, at: float, settings: dict[str, object]) -> bool:
        """Whether a PUT of ``key`` at ``at`` fits its prefix's rate (``prefix_rate`` a second)."""
        depth = max(1, int(_number(settings, "prefix_depth") or 1))
        prefix = "/".join(key.split("/")[:depth])
        with self.log_lock:
            seen = self.rates.setdefault(prefix, deque())
            while seen and seen[0] <= at - 1.0:
                seen.popleft()
            if len(seen) >= _number(settings, "prefix_rate"):
                return False
            seen.append(at)
            return True

    def write(self, record: str) -> None:
        with self.log_lock:
            self.log.write(record)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="faultproxy.py", description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--listen", type=int, required=True)
    ap.add_argument("--upstream", type=int, required=True)
    ap.add_argument("--access-log", type=Path, required=True)
    ap.add_argument("--control", type=Path, required=True)
    ap.add_argument("--max-seconds", type=float, default=900.0)
    ap.add_argument("--bucket-owner", default=hashlib.sha256(b"correlator-lab").hexdigest())
    ap.add_argument("--seed", type=int, default=41)
    args = ap.parse_args(argv)
    server = ProxyServer(args.listen, args.upstream, args.access_log, Control(args.control), args.bucket_owner,
                         args.seed)
    timer = threading.Timer(args.max_seconds, server.shutdown)
    timer.daemon = True
    timer.start()
    print(f"faultproxy: 127.0.0.1:{args.listen} -> 127.0.0.1:{args.upstream}", flush=True)
    server.serve_forever(poll_interval=0.2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
