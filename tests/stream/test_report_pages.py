"""The worker's report pages against the real broker: ``/verdicts`` and ``/verdicts/<verdict_id>``."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from html import escape
from pathlib import Path
from typing import Any

import pytest

from correlator.adapters.report_html import page_key
from tests.support.browser import artefact, chromium_page
from tests.support.worker import Stack, WorkerProcess

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TESTS = Path(__file__).resolve().parents[1]
SEED = TESTS / "golden" / "scenarios" / "seed"
INJECTION = TESTS / "data" / "verdicts" / "injection.jsonl"


@pytest.fixture
def worker(kafka_bootstrap: str, unique: str, tmp_path: Path) -> Iterator[WorkerProcess]:
    stack = Stack(kafka_bootstrap, unique, tmp_path)
    stack.apply_topics()
    process = WorkerProcess(stack).start()
    yield process
    process.stop()


def get(port: int, path: str, timeout_s: float = 60) -> tuple[int, Any, bytes]:
    """GET with retries while the page is not there yet (the feed reads the verdict topic asynchronously)."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as response:
                return response.status, response.headers, response.read()
        except urllib.error.HTTPError as exc:
            if exc.code != 404 or time.monotonic() > deadline:
                return exc.code, exc.headers, exc.read()
        time.sleep(0.5)


def test_a_running_worker_serves_each_verdicts_page(worker: WorkerProcess) -> None:
    """The seed replayed into a running worker: its verdict's page (timeline inline, 3 lanes, sources without raw
    lines), the PNG, the index; a hostile verdict put on the topic by anyone is served escaped under a safe path;
    unknown ids are 404."""
    stack = worker.stack
    stack.replay(SEED)
    [verdict] = stack.read("verdicts", until=1)
    hostile = json.loads(next(x for x in INJECTION.read_text(encoding="utf-8").splitlines() if x.startswith("{")))
    hostile["verdict_id"] = "evil/../<b>id</b>"
    hostile["failure"]["operator"] = "<script>alert(1)</script>"
    stack.produce_raw("verdicts", [(b"default", json.dumps(hostile).encode())])

    status, headers, body = get(worker.port, f"/verdicts/{verdict['verdict_id']}")
    assert (status, headers["Content-Type"].split(";")[0]) == (200, "text/html")
    assert "script-src" not in headers["Content-Security-Policy"] and "default-src 'none'" in headers[
        "Content-Security-Policy"]
    page = body.decode()
    assert "HDFS_DIRECTORY_SCAN" in page and "<svg" in page and page.count('id="lane-') == 4
    assert 'href="/verdicts"' in page and f'href="/verdicts/{verdict["verdict_id"]}.png"' in page
    # the worker keeps no log lines: rows name their source (full ref on hover) and one note says where lines are
    assert "<details" not in page and 'id="raw-where"' in page
    assert all(f'title="{escape(e["ref"])}"' in page for e in verdict["evidence"])

    status, headers, png = get(worker.port, f"/verdicts/{verdict['verdict_id']}.png")
    assert (status, headers["Content-Type"]) == (200, "image/png") and png.startswith(b"\x89PNG")

    status, _, body = get(worker.port, f"/verdicts/{page_key(hostile['verdict_id'])}")
    assert status == 200
    evil_page = body.decode()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in evil_page and "<script" not in evil_page
    assert "<b>id</b>" not in evil_page

    status, _, body = get(worker.port, "/verdicts")
    index = body.decode()
    assert status == 200 and f'href="/verdicts/{verdict["verdict_id"]}"' in index
    assert f'href="/verdicts/{page_key(hostile["verdict_id"])}"' in index

    assert get(worker.port, "/verdicts/0123456789abcdef", timeout_s=0)[0] == 404
    assert get(worker.port, f"/verdicts/{verdict['verdict_id']}.exe", timeout_s=0)[0] == 404

    with chromium_page() as p:
        p.page.goto(f"http://127.0.0.1:{worker.port}/verdicts/{verdict['verdict_id']}")
        assert p.page.locator("#timeline svg g[id^='lane-']").count() == 4
        p.page.screenshot(path=artefact("worker-page-seed.png"), full_page=True)
        assert p.errors() == [] and p.dialogs == []
