"""Shared look of the dashboard: colours derived from the palette, pills, switches, formatting.

Everything here is pure presentation. Colours are a small fixed set of hues whose lightness is
picked from the current palette, so the same code reads well in light and dark themes.
"""

from __future__ import annotations

import os
from datetime import datetime

from PySide6.QtCore import QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QPainter, QPaintEvent, QPalette, QResizeEvent
from PySide6.QtWidgets import (
    QAbstractButton,
    QApplication,
    QCheckBox,
    QFrame,
    QLabel,
    QRadioButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from pitcrew.supervisor.api.view import STUCK_STATES, WAITING_STATES

GREEN = "#2e9e5b"
AMBER = "#d08a00"
RED = "#d64545"
GREY = "#8a8f98"
BLUE = "#3b82f6"
PURPLE = "#8b5cf6"


STATE_TEXT = {
    "busy": "Working", "idle": "Idle", "rate_limit": "Usage limit",
    "login_required": "Login needed", "upgrade_prompt": "Upgrade prompt",
    "question": "Question", "picker": "Picker", "draft": "Unsent draft",
    "connection_lost": "Connection lost", "continue_prompt": "Asks to continue",
    "crashed": "Crashed", "unknown": "Unknown", "exited": "Exited", "looping": "Looping",
}

BADGE_COLOR = {
    "Resumed": GREEN, "Continued": GREEN, "Switched to backup": BLUE,
    "Couldn't resume": RED, "Stopped retrying": RED, "Waiting on you": AMBER,
    "Scheduled": BLUE, "Skipped": GREY, "Diagnosed": PURPLE, "Typed": BLUE, "Rerun": BLUE,
    "Timed out": AMBER, "Looping": RED,
}

_HOME = os.path.expanduser("~")


def state_color(state: str) -> str:
    if state == "busy":
        return GREEN
    if state == "idle":
        return "#5fae7e"
    if state in WAITING_STATES:
        return AMBER
    if state in STUCK_STATES:
        return RED
    return GREY


def is_dark(palette: QPalette) -> bool:
    return palette.color(QPalette.ColorRole.Window).lightness() < 128


def ink(hue: str, palette: QPalette) -> QColor:
    """The hue as readable text on the palette's base colour."""
    c = QColor(hue)
    return c.lighter(135) if is_dark(palette) else c.darker(125)


def wash(hue: str, palette: QPalette) -> QColor:
    """The hue as a soft background behind `ink` text."""
    c = QColor(hue)
    c.setAlpha(70 if is_dark(palette) else 38)
    return c


def rgba(c: QColor) -> str:
    return f"rgba({c.red()},{c.green()},{c.blue()},{c.alpha()})"


def muted(palette: QPalette) -> QColor:
    """Secondary text: the text colour halfway to the window colour."""
    t = palette.color(QPalette.ColorRole.WindowText)
    w = palette.color(QPalette.ColorRole.Window)
    return QColor((t.red() + w.red()) // 2 + 8, (t.green() + w.green()) // 2 + 8,
                  (t.blue() + w.blue()) // 2 + 8)


# -- formatting ------------------------------------------------------------------------------

def ago(then: float | None, now: float) -> str:
    if then is None:
        return "—"
    s = max(0.0, now - then)
    if s < 60:
        return f"{int(s)} s ago"
    if s < 3600:
        return f"{int(s // 60)} min ago"
    if s < 86400:
        return f"{int(s // 3600)} h ago"
    return f"{int(s // 86400)} d ago"


def clock(at: float, now: float) -> str:
    """Local HH:MM, with the date in front when it is not today."""
    when = datetime.fromtimestamp(at)
    if when.date() == datetime.fromtimestamp(now).date():
        return when.strftime("%H:%M")
    return f"{when.strftime('%b')} {when.day} {when.strftime('%H:%M')}"


def short_path(path: str) -> str:
    if _HOME and (path == _HOME or path.startswith(_HOME + os.sep)):
        return "~" + path[len(_HOME):]
    return path


def short_id(session: str | None) -> str:
    if not session:
        return "—"
    return session if len(session) <= 10 else session[:8] + "…"


def basename(path: str) -> str:
    return os.path.basename(path.rstrip("/\\")) or path


# -- small widgets ---------------------------------------------------------------------------

class Pill(QLabel):
    """A rounded, coloured label: a state or a badge."""

    def __init__(self, text: str = "", hue: str = GREY, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Fixed)
        self._hue = ""
        self.set(text, hue)

    def set(self, text: str, hue: str) -> None:
        if text != self.text():
            self.setText(text)
        if hue != self._hue:
            self._hue = hue
            # The application's palette: a widget's own may be rewritten by style sheets.
            pal = QApplication.palette()
            self.setStyleSheet(
                f"QLabel {{ background: {rgba(wash(hue, pal))}; color: {ink(hue, pal).name()};"
                " border-radius: 9px; padding: 1px 9px; font-weight: 600; }")

    def hue(self) -> str:
        return self._hue


class ElidedLabel(QLabel):
    """A one-line label that shrinks below its text, eliding it at the right; the full text
    is its tooltip unless one is set."""

    def __init__(self, text: str = "", role: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        if role:
            self.setProperty("role", role)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.setMinimumWidth(40)
        self._full = ""
        self.set_full(text)

    def set_full(self, text: str) -> None:
        if text != self._full:
            self._full = text
            self._elide()

    def full(self) -> str:
        return self._full

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._elide()

    def _elide(self) -> None:
        shown = self.fontMetrics().elidedText(self._full, Qt.TextElideMode.ElideRight,
                                              max(10, self.width()))
        if shown != self.text():
            self.setText(shown)


class Switch(QAbstractButton):
    """An on/off toggle that never flips itself: a click emits `requested(wanted)` and the
    state changes only when the next View says so (`setChecked`)."""

    requested = Signal(bool)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setCheckable(True)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)

    def nextCheckState(self) -> None:
        self.requested.emit(not self.isChecked())

    def sizeHint(self) -> QSize:
        return QSize(42, 24)

    def paintEvent(self, event: QPaintEvent) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        pal = self.palette()
        r = QRectF(1, 2, 40, 20)
        on = self.isChecked()
        track = pal.color(QPalette.ColorRole.Highlight) if on else muted(pal)
        if not self.isEnabled():
            track.setAlpha(90)
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(track)
        p.drawRoundedRect(r, 10, 10)
        p.setBrush(QColor("#ffffff") if self.isEnabled() else QColor("#e6e6e6"))
        x = r.right() - 10 if on else r.left() + 10
        p.drawEllipse(QPointF(x, r.center().y()), 8, 8)
        if self.hasFocus():
            p.setPen(pal.color(QPalette.ColorRole.Highlight))
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.drawRoundedRect(r.adjusted(-1, -1, 1, 1), 11, 11)
        p.end()


class ViewCheckBox(QCheckBox):
    """A checkbox whose state only the View sets; a click emits `requested(wanted)`."""

    requested = Signal(bool)

    def nextCheckState(self) -> None:
        self.requested.emit(not self.isChecked())


class ViewRadio(QRadioButton):
    """A radio button whose state only the View sets; a click emits `requested()`."""

    requested = Signal()

    def nextCheckState(self) -> None:
        if not self.isChecked():
            self.requested.emit()


def card(parent: QWidget | None = None) -> tuple[QFrame, QVBoxLayout]:
    frame = QFrame(parent)
    frame.setObjectName("card")
    box = QVBoxLayout(frame)
    box.setContentsMargins(16, 14, 16, 14)
    box.setSpacing(8)
    return frame, box


def label(text: str, role: str = "", parent: QWidget | None = None,
          wrap: bool = False) -> QLabel:
    """A label with a stylesheet role: "title", "heading", "muted", "small" or ""."""
    lab = QLabel(text, parent)
    if role:
        lab.setProperty("role", role)
    lab.setWordWrap(wrap)
    return lab


def stylesheet(palette: QPalette) -> str:
    base = palette.color(QPalette.ColorRole.Base)
    window = palette.color(QPalette.ColorRole.Window)
    border = window.lighter(160) if is_dark(palette) else window.darker(112)
    hl = palette.color(QPalette.ColorRole.Highlight)
    sel = QColor(hl)
    sel.setAlpha(45)
    mute = muted(palette).name()
    side = window.darker(104) if not is_dark(palette) else window.lighter(115)
    return f"""
QFrame#card {{ background: {base.name()}; border: 1px solid {border.name()};
               border-radius: 10px; }}
QFrame#row {{ background: transparent; border: none; border-bottom: 1px solid {border.name()}; }}
QFrame#row[selected="true"] {{ background: {rgba(sel)}; border-radius: 6px; }}
QFrame#tile {{ background: {window.name()}; border: 1px solid {border.name()};
               border-radius: 8px; }}
QListWidget#sidebar {{ background: {side.name()}; border: none;
                       border-right: 1px solid {border.name()}; padding: 10px 8px; outline: 0; }}
QListWidget#sidebar::item {{ padding: 6px 10px; border-radius: 6px; margin: 1px 0; }}
QListWidget#sidebar::item:selected {{ background: {rgba(sel)};
                                      color: {palette.color(QPalette.ColorRole.WindowText).name()};
                                      font-weight: 600; }}
QLabel[role="title"] {{ font-size: 20px; font-weight: 600; }}
QLabel[role="heading"] {{ font-size: 14px; font-weight: 600; }}
QLabel[role="muted"] {{ color: {mute}; }}
QLabel[role="small"] {{ color: {mute}; font-size: 11px; }}
QLabel[role="colhead"] {{ color: {mute}; font-size: 11px; font-weight: 600; }}
QLabel[role="grouphead"] {{ font-size: 13px; font-weight: 600; }}
QLabel[role="warn"] {{ color: {ink(AMBER, palette).name()}; }}
QScrollArea {{ background: transparent; border: none; }}
QScrollArea > QWidget > QWidget#page {{ background: transparent; }}
"""
