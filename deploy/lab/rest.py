"""Record the JobManager's REST checkpoint statistics while a scenario runs: real responses for `flink-stats` tests.

Every second: `/jobs`, each job's `/jobs/<id>`, `/jobs/<id>/checkpoints/config` and `/jobs/<id>/checkpoints`, each
running vertex's `/jobs/<id>/vertices/<vertex>` once (where its subtasks run), and for each checkpoint in a final state
its `/checkpoints/details/<n>` and every `/subtasks/<vertex>` of it, each response saved once (the first time it is
seen in its final form) as `<dir>/<path with / as __>.json`. Loopback only; the thread stops with the run.
"""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

FINAL = ("COMPLETED", "FAILED")


class RestRecorder(threading.Thread):
    def __init__(self, port: int, out: Path) -> None:
        super().__init__(daemon=True, name="rest-recorder")
        self.base = f"http://127.0.0.1:{port}"
        self.out = out
        self.stop = threading.Event()
        self.saved: set[str] = set()

    def get(self, path: str, save: bool = True) -> Any:
        try:
            with urllib.request.urlopen(self.base + path, timeout=5) as r:
                data = json.loads(r.read())
        except (OSError, ValueError):
            return None
        if save:
            self.out.mkdir(parents=True, exist_ok=True)
            (self.out / (path.strip("/").replace("/", "__") + ".json")).write_text(json.dumps(data, indent=1) + "\n")
        return data

    def run(self) -> None:
        while not self.stop.wait(1.0):
            jobs = self.get("/jobs") or {}
            for job in jobs.get("jobs", []):
                detail = self.get(f"/jobs/{job['id']}") or {}
                for vertex in detail.get("vertices", []):  # each subtask's TaskManager (once, when all run)
                    key = f"{job['id']}/vertex/{vertex.get('id')}"
                    if key not in self.saved and vertex.get("status") == "RUNNING":
                        self.get(f"/jobs/{job['id']}/vertices/{vertex.get('id')}")
                        self.saved.add(key)
                self.get(f"/jobs/{job['id']}/checkpoints/config")
                stats = self.get(f"/jobs/{job['id']}/checkpoints") or {}
                for cp in stats.get("history", []):
                    key = f"{job['id']}/{cp['id']}"
                    if cp.get("status") not in FINAL or key in self.saved:
                        continue
                    details = self.get(f"/jobs/{job['id']}/checkpoints/details/{cp['id']}") or {}
                    for vertex in (details.get("tasks") or {}):
                        self.get(f"/jobs/{job['id']}/checkpoints/details/{cp['id']}/subtasks/{vertex}")
                    self.saved.add(key)
