"""The "How it works" animation: Autopilot's steps, lit one after another.

Driven by a QTimer that runs only while the widget is visible, so a closed window costs
no CPU.
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, QSize, Qt, QTimer
from PySide6.QtGui import (
    QColor,
    QFontMetrics,
    QHideEvent,
    QPainter,
    QPaintEvent,
    QPalette,
    QPen,
    QShowEvent,
)
from PySide6.QtWidgets import QSizePolicy, QWidget

from pitcrew.desktop.dashboard.style import AMBER, BLUE, GREEN, RED, muted

STEPS: tuple[tuple[str, str, str], ...] = (
    ("A task stops", "Quiet, exited, or a message stalls", RED),
    ("Pitcrew checks the screen", "Stuck, or just busy?", BLUE),
    ("Resume the session", "Same pane, same session id", GREEN),
    ("Ask to continue", "Pick up where it stopped", GREEN),
    ("Switch to backup", "If the resume fails", BLUE),
    ("Wait for you", "Anything unclear: type nothing", AMBER),
)
STEP_MS = 1400


class HowItWorks(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.step = 0
        self.timer = QTimer(self)
        self.timer.setInterval(STEP_MS)
        self.timer.timeout.connect(self.advance)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setMinimumHeight(96)
        self.setToolTip("How Autopilot handles a failed task, step by step")

    def sizeHint(self) -> QSize:
        return QSize(640, 96)

    def running(self) -> bool:
        return self.timer.isActive()

    def advance(self) -> None:
        self.step = (self.step + 1) % len(STEPS)
        self.update()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.timer.start()

    def hideEvent(self, event: QHideEvent) -> None:
        super().hideEvent(event)
        self.timer.stop()

    def paintEvent(self, event: QPaintEvent) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        pal = self.palette()
        n = len(STEPS)
        w = self.width()
        slot = w / n
        cy = 22.0
        line = muted(pal)
        line.setAlpha(110)
        p.setPen(QPen(line, 2))
        p.drawLine(QPointF(slot / 2, cy), QPointF(w - slot / 2, cy))
        done = QColor(pal.color(QPalette.ColorRole.Highlight))
        p.setPen(QPen(done, 2))
        p.drawLine(QPointF(slot / 2, cy), QPointF(slot / 2 + slot * self.step, cy))
        title_font = p.font()
        title_font.setPointSizeF(max(7.0, title_font.pointSizeF() * 0.92))
        title_font.setBold(True)
        sub_font = p.font()
        sub_font.setPointSizeF(max(6.5, sub_font.pointSizeF() * 0.82))
        text = pal.color(QPalette.ColorRole.WindowText)
        for i, (title, sub, hue) in enumerate(STEPS):
            cx = slot * i + slot / 2
            active = i == self.step
            color = QColor(hue)
            if i > self.step:
                color = muted(pal)
            radius = 11.0 if active else 7.0
            if active:
                halo = QColor(hue)
                halo.setAlpha(60)
                p.setPen(Qt.PenStyle.NoPen)
                p.setBrush(halo)
                p.drawEllipse(QPointF(cx, cy), radius + 5, radius + 5)
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(color)
            p.drawEllipse(QPointF(cx, cy), radius, radius)
            p.setPen(QColor("#ffffff"))
            p.setFont(sub_font)
            p.drawText(QRectF(cx - radius, cy - radius, 2 * radius, 2 * radius),
                       Qt.AlignmentFlag.AlignCenter, str(i + 1) if active else "")
            p.setFont(title_font)
            p.setPen(text if i <= self.step else muted(pal))
            box = QRectF(cx - slot / 2 + 2, cy + 18, slot - 4, 34)
            fm = QFontMetrics(title_font)
            p.drawText(box, int(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop
                                | Qt.TextFlag.TextWordWrap), title)
            if active:
                p.setFont(sub_font)
                p.setPen(muted(pal))
                lines = 2 if fm.horizontalAdvance(title) > slot - 4 else 1
                left = min(max(0.0, cx - slot / 2 - 20), w - slot - 40)
                sub_box = QRectF(left, cy + 20 + fm.height() * lines, slot + 40, 30)
                p.drawText(sub_box, int(Qt.AlignmentFlag.AlignHCenter
                                        | Qt.AlignmentFlag.AlignTop
                                        | Qt.TextFlag.TextWordWrap), sub)
        p.end()
