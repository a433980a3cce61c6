"""A robust trend of a short series: Theil–Sen's slope with Sen's confidence interval, and Mann–Kendall's test.

Why these and not least squares: checkpoint durations are noisy, carry outliers (one slow checkpoint after a GC
pause) and come in tens of points with noise no one knows the shape of. The median of pairwise slopes ignores
outliers, and Mann–Kendall's statistic asks only whether later points tend to be higher than earlier ones, so its
significance holds whatever the noise's distribution (for independent noise, which is what "flat" means here).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

Z_95 = 1.96
"""Two-sided 95 %: the slope's interval."""


@dataclass(frozen=True, slots=True)
class Trend:
    slope: float
    """Units of y per unit of x: the median of the pairwise slopes."""
    low: float
    high: float
    """Sen's 95 % interval of the slope."""
    intercept: float
    z: float
    """Mann–Kendall's normal score: above 3.09 a rise this steady comes from independent noise once in a thousand."""

    def at(self, x: float) -> float:
        return self.intercept + self.slope * x


def _sign(v: float) -> int:
    return (v > 0) - (v < 0)


def mann_kendall_z(ys: Sequence[float]) -> float:
    """The normal score of Kendall's S of ``ys`` in order, with the correction for tied values."""
    n = len(ys)
    s = sum(_sign(ys[j] - ys[i]) for i in range(n) for j in range(i + 1, n))
    ties = sum(t * (t - 1) * (2 * t + 5) for t in Counter(ys).values())
    variance = (n * (n - 1) * (2 * n + 5) - ties) / 18
    if variance <= 0 or s == 0:
        return 0.0
    return (s - _sign(s)) / math.sqrt(variance)


def theil_sen(xs: Sequence[float], ys: Sequence[float]) -> Trend:
    """The trend of ``ys`` over increasing ``xs`` (at least two distinct xs)."""
    n = len(xs)
    slopes = sorted((ys[j] - ys[i]) / (xs[j] - xs[i]) for i in range(n) for j in range(i + 1, n) if xs[j] != xs[i])
    if not slopes:
        raise ValueError("a trend needs two distinct x values")
    m = len(slopes)
    slope = _median(slopes)
    intercept = _median([y - slope * x for x, y in zip(xs, ys, strict=True)])
    ties = sum(t * (t - 1) * (2 * t + 5) for t in Counter(ys).values())
    half = Z_95 * math.sqrt(max(0.0, (n * (n - 1) * (2 * n + 5) - ties) / 18)) / 2
    low = slopes[max(0, min(m - 1, math.floor(m / 2 - half)))]
    high = slopes[max(0, min(m - 1, math.ceil(m / 2 + half) - 1))]
    return Trend(slope, low, high, intercept, mann_kendall_z(ys))


def _median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2
