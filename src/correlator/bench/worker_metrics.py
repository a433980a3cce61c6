"""What the stream bench reads off a running worker: its Prometheus metrics, the decision latency's histogram, and
the latency of a live replay's verdicts."""

from __future__ import annotations

import time
import urllib.request
from pathlib import Path

from correlator.adapters.shipping import merged_lines, ship
from correlator.config import Settings
from correlator.offline.files import discover

LIVE_SPEED = 150
LIVE_FAILURES = 4
"""Failed checkpoints in the 'recurring' scenario at scale 1."""


def scrape(port: int) -> dict[str, float]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        text = response.read().decode()
    out: dict[str, float] = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            out[name] = float(value)
    return out


def metric_sum(metrics: dict[str, float], prefix: str, label: str = "") -> float:
    return sum(v for k, v in metrics.items() if k.startswith(prefix) and label in k)


def quantile(before: dict[str, float], after: dict[str, float], q: float) -> float | None:
    """A quantile of the observations between two scrapes, linearly interpolated inside histogram buckets."""
    prefix = "correlator_decision_latency_seconds_bucket{le="
    buckets = sorted(
        (float(k[len(prefix) + 1 : -2]) if "+Inf" not in k else float("inf"), after[k] - before.get(k, 0.0))
        for k in after
        if k.startswith(prefix)
    )
    total = buckets[-1][1] if buckets else 0
    if not total:
        return None
    rank, lower, below = q * total, 0.0, 0.0
    for upper, cumulative in buckets:
        if cumulative >= rank:
            if upper == float("inf"):
                return lower
            return lower + (upper - lower) * (rank - below) / max(cumulative - below, 1e-9)
        lower, below = upper, cumulative
    return lower


def live_latency(port: int, settings: Settings, live_logs: Path) -> tuple[str, dict[str, tuple[float, float, float]]]:
    """A live replay's verdict latency, and the snapshots' cost and size per stage once it is in."""
    before = scrape(port)
    live = settings.model_copy(update={"cluster": "bench-live"})
    verdicts_before = metric_sum(before, "correlator_verdicts_total")
    # Slow enough that the new cluster's engine warms up (one idle timeout) while failures are still to come.
    ship(merged_lines(discover([str(live_logs)]), live), live, speed=LIVE_SPEED)
    wait_until = time.monotonic() + 90
    after = before
    while time.monotonic() < wait_until:
        after = scrape(port)
        if metric_sum(after, "correlator_verdicts_total") >= verdicts_before + LIVE_FAILURES:
            break
        time.sleep(0.2)
    p50, p99 = quantile(before, after, 0.5), quantile(before, after, 0.99)
    if p50 is None or p99 is None:
        latency = "no verdict was decided by a live record (decided by the idle timer instead)"
    else:
        latency = f"p50 {p50 * 1000:.0f} ms, p99 {p99 * 1000:.0f} ms (from histogram buckets)"
    snapshots = {stage: (metric_sum(after, "correlator_snapshot_seconds_sum", f'stage="{stage}"'),
                         metric_sum(after, "correlator_snapshot_seconds_count", f'stage="{stage}"'),
                         max((v for k, v in after.items() if k.startswith("correlator_state_bytes")
                              and stage in k), default=0.0))
                 for stage in ("ingest", "engine")}
    return latency, snapshots
