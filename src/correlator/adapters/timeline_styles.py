"""How each evidence kind looks on a timeline: the colour, marker and hatch of its bar or mark, and its legend label.

Colours are the Okabe–Ito palette plus greys, and no two evidence kinds share a look, as a bar or as a mark, so a
reader with a colour-vision deficiency tells an expiry from a failure by shape as well as hue. A table apart from the
drawing (``timeline_plot``), so a new evidence kind is one row here.
"""

from __future__ import annotations

from dataclasses import dataclass

from correlator.core.events import (
    BlockAllocated, BlockWrite, CheckpointCompleted, CheckpointDeclined, CheckpointExpired, CheckpointFailed,
    CheckpointLateAck, CheckpointSpan, CheckpointTriggered, DatasetLockHeld, DatasetLockWait,
    DirectoryScanReconcile, DirectoryScanStats, DnWriteError, HdfsClientError, HdfsClientSlow, HdfsRefusal,
    JobStatus, JvmPause, NameNodeLockHeld, SlowIo, TaskManagerLost, TaskStatus,
)
from correlator.core.explain.labels import EVENT_LABELS, event_label


@dataclass(frozen=True, slots=True)
class Style:
    """How one evidence kind is drawn: ``color`` fills its bar or mark, ``marker`` shapes a mark, ``hatch`` patterns
    a bar (kinds that share a colour differ in hatch as bars and in marker as marks)."""

    color: str
    label: str
    marker: str = "o"
    hatch: str = ""


BLACK, ORANGE, SKY, GREEN, YELLOW, BLUE, VERMILLION, PURPLE = (
    "#000000", "#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7")
"""The Okabe–Ito palette: eight colours told apart with any of the common colour-vision deficiencies."""
GREY_LIGHT, GREY, GREY_DARK = "#BBBBBB", "#999999", "#5A5A5A"
"""Greys far enough apart in lightness to read as three, also in greyscale."""

STYLES: dict[str, Style] = {
    # bars first: each a colour of its own, so a bar is told apart without its hatch
    "checkpoint": Style(GREY_LIGHT, "checkpoint (trigger → failure)", "s"),
    "write": Style(ORANGE, "checkpoint write", "s"),
    DatasetLockHeld.type: Style(VERMILLION, EVENT_LABELS[DatasetLockHeld.type], "o"),
    DatasetLockWait.type: Style(YELLOW, EVENT_LABELS[DatasetLockWait.type], "o"),
    DirectoryScanReconcile.type: Style(PURPLE, EVENT_LABELS[DirectoryScanReconcile.type], "D"),
    SlowIo.type: Style(SKY, EVENT_LABELS[SlowIo.type], "o"),
    BlockWrite.type: Style(BLUE, EVENT_LABELS[BlockWrite.type], "^"),
    JvmPause.type: Style(GREEN, EVENT_LABELS[JvmPause.type], "o"),
    NameNodeLockHeld.type: Style(BLACK, EVENT_LABELS[NameNodeLockHeld.type], "o"),
    HdfsClientSlow.type: Style(GREY_DARK, EVENT_LABELS[HdfsClientSlow.type], "o"),
    CheckpointSpan.type: Style(GREY_LIGHT, EVENT_LABELS[CheckpointSpan.type], "|", "//"),
    # moments: a shape and a colour each
    CheckpointTriggered.type: Style(BLACK, EVENT_LABELS[CheckpointTriggered.type], ">", "//"),
    CheckpointCompleted.type: Style(GREEN, EVENT_LABELS[CheckpointCompleted.type], "P", "//"),
    CheckpointExpired.type: Style(VERMILLION, EVENT_LABELS[CheckpointExpired.type], "X", "//"),
    CheckpointFailed.type: Style(PURPLE, EVENT_LABELS[CheckpointFailed.type], "s", "//"),
    CheckpointDeclined.type: Style(ORANGE, EVENT_LABELS[CheckpointDeclined.type], "v", "//"),
    CheckpointLateAck.type: Style(SKY, EVENT_LABELS[CheckpointLateAck.type], "<", "//"),
    TaskStatus.type: Style(GREY_DARK, EVENT_LABELS[TaskStatus.type], "v", ".."),
    JobStatus.type: Style(GREY_DARK, EVENT_LABELS[JobStatus.type], "^", "xx"),
    DirectoryScanStats.type: Style(YELLOW, EVENT_LABELS[DirectoryScanStats.type], "D", "//"),
    BlockAllocated.type: Style(GREEN, EVENT_LABELS[BlockAllocated.type], "^", ".."),
    HdfsClientError.type: Style(BLUE, EVENT_LABELS[HdfsClientError.type], "X", "//"),
    DnWriteError.type: Style(VERMILLION, EVENT_LABELS[DnWriteError.type], "P", ".."),
    HdfsRefusal.type: Style(BLACK, EVENT_LABELS[HdfsRefusal.type], "X", ".."),
    TaskManagerLost.type: Style(ORANGE, EVENT_LABELS[TaskManagerLost.type], "X", "xx"),
}
DEFAULT = Style(GREY, "other evidence", "o")
"""Evidence types this table does not know yet are drawn, in a neutral style under their own name."""
CAUSE_EDGE, TIMEOUT = "#000000", VERMILLION


def style(kind: str) -> Style:
    return STYLES.get(kind) or Style(DEFAULT.color, event_label(kind), DEFAULT.marker, DEFAULT.hatch)


def ink(color: str) -> str:
    """Black or white, whichever reads on ``color`` (by its relative luminance)."""
    r, g, b = (int(color[i:i + 2], 16) / 255 for i in (1, 3, 5))
    lum = sum(w * (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4)
              for w, c in zip((0.2126, 0.7152, 0.0722), (r, g, b)))
    return "black" if lum > 0.2 else "white"
