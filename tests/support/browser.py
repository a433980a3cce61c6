"""Debian's chromium, driven headless through Playwright (never a browser Playwright downloads itself).

Every flag keeps the browser off the network except for what a page loads: no sync, no component updates, no QUIC,
a fresh profile per launch.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ARTEFACTS = os.path.join(os.path.dirname(__file__), "..", "..", ".run", "test-artefacts")
"""Screenshots for people to look at (``.run/`` is ignored by git)."""


def chromium_path() -> str:
    found = os.environ.get("CORRELATOR_TEST_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        raise RuntimeError("Debian's chromium is required for the browser tests (apt-get install chromium; "
                           ".ci/run installs it)")
    return found


@dataclass
class Page:
    page: Any
    console: list[tuple[str, str]] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)

    def errors(self) -> list[tuple[str, str]]:
        return [(kind, text) for kind, text in self.console if kind in ("error", "pageerror")]


@contextmanager
def chromium_page(width: int = 1280, height: int = 900) -> Iterator[Page]:
    from playwright.sync_api import sync_playwright

    profile = tempfile.mkdtemp(prefix="correlator-chromium-")
    try:
        with sync_playwright() as pw:
            context = pw.chromium.launch_persistent_context(
                profile, executable_path=chromium_path(), headless=True, args=FLAGS,
                viewport={"width": width, "height": height}, java_script_enabled=True)
            try:
                raw = context.new_page()
                page = Page(raw)
                raw.on("console", lambda m: page.console.append((m.type, m.text)))
                raw.on("pageerror", lambda e: page.console.append(("pageerror", str(e))))
                raw.on("dialog", lambda d: (page.dialogs.append(d.message), d.dismiss()))
                yield page
            finally:
                context.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)


def artefact(name: str) -> str:
    os.makedirs(ARTEFACTS, exist_ok=True)
    return os.path.abspath(os.path.join(ARTEFACTS, name))


@dataclass(frozen=True)
class ScreenDiff:
    """How far a screenshot is from its baseline: the share of pixels that differ by more than the threshold."""

    changed: float
    size: tuple[int, int]
    baseline_size: tuple[int, int]

    @property
    def same_size(self) -> bool:
        return self.size == self.baseline_size


PIXEL_THRESHOLD = 40
"""A channel difference (0-255) below this is anti-aliasing noise, not a change."""
MAX_CHANGED = 0.005
"""A screenshot fails when more than this share of its pixels changed."""


def baseline_png(png: bytes) -> bytes:
    """A screenshot as it is checked in: 256 colours, about a third of the bytes, far below the comparison's
    threshold from the original."""
    import io

    from PIL import Image

    out = io.BytesIO()
    Image.open(io.BytesIO(png)).convert("RGB").quantize(256, method=Image.Quantize.MEDIANCUT).save(
        out, format="PNG", optimize=True)
    return out.getvalue()


def screen_diff(png: bytes, baseline: str, diff_path: str) -> ScreenDiff:
    """Compare ``png`` with the baseline file; the changed pixels are written to ``diff_path`` (changes in red over a
    faded copy of the new screenshot) whenever there is any."""
    import io

    from PIL import Image, ImageChops

    now = Image.open(io.BytesIO(png)).convert("RGB")
    with Image.open(baseline) as opened:
        before = opened.convert("RGB")
    if now.size != before.size:
        now.save(diff_path)
        return ScreenDiff(1.0, now.size, before.size)
    delta = ImageChops.difference(now, before).convert("L").point(lambda v: 255 if v >= PIXEL_THRESHOLD else 0)
    changed = delta.histogram()[255] / (now.size[0] * now.size[1])
    if changed:
        faded = Image.blend(now, Image.new("RGB", now.size, "white"), 0.7)
        faded.paste(Image.new("RGB", now.size, (220, 0, 0)), mask=delta)
        faded.save(diff_path)
    return ScreenDiff(changed, now.size, before.size)
