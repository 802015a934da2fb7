"""A terminal's states over the last hours, painted as one coloured bar."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPainterPath, QPaintEvent
from PySide6.QtWidgets import QSizePolicy, QWidget

from pitcrew.desktop.dashboard.style import STATE_TEXT, is_dark, muted, state_color
from pitcrew.supervisor.api.view import TIMELINE_SECONDS


def segments(timeline: Sequence[tuple[float, str]], now: float,
             span: float = TIMELINE_SECONDS) -> list[tuple[float, float, str]]:
    """`(start, end, state)` as fractions of the window `[now - span, now]`, clipped to it."""
    start = now - span
    out: list[tuple[float, float, str]] = []
    for i, (since, state) in enumerate(timeline):
        until = timeline[i + 1][0] if i + 1 < len(timeline) else now
        a, b = max(since, start), min(until, now)
        if b <= a or span <= 0:
            continue
        out.append(((a - start) / span, (b - start) / span, state))
    return out


class Timeline(QWidget):
    """Paints `(since, state)` segments over the last `span` seconds; grey where unknown."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._timeline: tuple[tuple[float, str], ...] = ()
        self._now = 0.0
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setMinimumWidth(120)

    def sizeHint(self) -> QSize:
        return QSize(180, 14)

    def set_timeline(self, timeline: tuple[tuple[float, str], ...], now: float) -> None:
        # Repaint only when a pixel could move: the bar is ~200 px for 6 h, ~100 s a pixel.
        if timeline == self._timeline and abs(now - self._now) < 60:
            return
        self._timeline, self._now = timeline, now
        parts = segments(timeline, now)
        tip = ", ".join(f"{STATE_TEXT.get(s, s)}" for _a, _b, s in parts[-4:])
        self.setToolTip(f"Last 6 hours{': … ' + tip if tip else ': no activity'}")
        self.update()

    def paintEvent(self, event: QPaintEvent) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        r = QRectF(0.5, (self.height() - 10) / 2, self.width() - 1.0, 10)
        clip = QPainterPath()
        clip.addRoundedRect(r, 4, 4)
        p.setClipPath(clip)
        groove = muted(self.palette())
        groove.setAlpha(50)
        p.fillRect(r, groove)
        dark = is_dark(self.palette())
        for a, b, state in segments(self._timeline, self._now):
            color = QColor(state_color(state))
            if dark:
                color = color.lighter(115)
            x0 = r.left() + a * r.width()
            x1 = max(r.left() + b * r.width(), x0 + 1.5)
            if b >= 1.0 and x1 - x0 < 6:     # the current state, just begun: keep it visible
                x0 = r.right() - 6
                x1 = r.right()
            p.fillRect(QRectF(x0, r.top(), x1 - x0, r.height()), color)
        p.setClipping(False)
        p.setPen(Qt.PenStyle.NoPen)
        p.end()
