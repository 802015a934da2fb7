"""Activity: one card per ledger row, newest first, each marked with who acted."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetrics, QResizeEvent
from PySide6.QtWidgets import QFrame, QHBoxLayout, QScrollArea, QVBoxLayout, QWidget

from pitcrew.desktop.dashboard.report_link import report_button
from pitcrew.desktop.dashboard.style import (
    BADGE_COLOR,
    BLUE,
    GREY,
    PURPLE,
    Pill,
    basename,
    card,
    clock,
    label,
)
from pitcrew.supervisor.api.view import BY_DIAGNOSIS, BY_YOU, DecisionView, View

MAX_CARDS = 200
EMPTY = ("Nothing has happened yet. When Autopilot or AI Diagnosis acts on a terminal, "
         "it is listed here.")


MARK_COLOR = {BY_DIAGNOSIS: PURPLE, BY_YOU: GREY}
MARK_TIP = {BY_YOU: "You asked for this"}


def _keys(rows: tuple[DecisionView, ...]) -> list[tuple[float, str, str, int]]:
    """A stable identity per row; equal rows are told apart by their occurrence."""
    seen: dict[tuple[float, str, str], int] = {}
    out = []
    for d in rows:
        k = (d.at, d.terminal, d.badge)
        seen[k] = seen.get(k, 0) + 1
        out.append((*k, seen[k]))
    return out


class ActivityCard(QFrame):
    def __init__(self, d: DecisionView, now: float, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("card")
        box = QVBoxLayout(self)
        box.setContentsMargins(14, 10, 14, 10)
        box.setSpacing(4)
        top = QHBoxLayout()
        top.setSpacing(8)
        self.badge = Pill(d.badge, BADGE_COLOR.get(d.badge, GREY))
        top.addWidget(self.badge)
        who = d.by     # decided in the view (api/view.py: decided_by)
        self.mark = Pill(who, MARK_COLOR.get(who, BLUE))
        self.mark.setToolTip(MARK_TIP.get(who, f"Decided by {who}"))
        top.addWidget(self.mark)
        self.agent = label(d.agent or d.terminal)
        self.agent.setStyleSheet("font-weight: 600;")
        top.addWidget(self.agent)
        top.addWidget(label(f"· {basename(d.project)}", "muted") if d.project else QWidget())
        top.addStretch(1)
        self.time = label(clock(d.at, now), "small")
        top.addWidget(self.time)
        self.report = report_button(d.terminal)
        top.addWidget(self.report)
        box.addLayout(top)
        self.prompt = label("", wrap=False)
        self.prompt.setToolTip(d.prompt)
        self._prompt = f"“{d.prompt}”" if d.prompt else ""
        self.prompt.setVisible(bool(d.prompt))
        box.addWidget(self.prompt)
        self.reason = label(d.reason, "muted", wrap=True)
        self.reason.setVisible(bool(d.reason))
        box.addWidget(self.reason)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        width = max(80, self.width() - 40)
        self.prompt.setText(QFontMetrics(self.prompt.font()).elidedText(
            self._prompt, Qt.TextElideMode.ElideRight, width))


class ActivityPage(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(24, 20, 24, 20)
        outer.setSpacing(12)
        outer.addWidget(label("Activity", "title"))
        outer.addWidget(label("What Autopilot, AI Diagnosis and your own messages did, "
                              "newest first.", "muted"))
        self.area = QScrollArea()
        self.area.setWidgetResizable(True)
        inner = QWidget()
        inner.setObjectName("page")
        self.box = QVBoxLayout(inner)
        self.box.setContentsMargins(0, 0, 4, 0)
        self.box.setSpacing(8)
        self.empty, empty_box = card()
        empty_box.addWidget(label(EMPTY, "muted", wrap=True))
        self.box.addWidget(self.empty)
        self.box.addStretch(1)
        self.area.setWidget(inner)
        outer.addWidget(self.area, 1)
        self.cards: dict[tuple[float, str, str, int], ActivityCard] = {}
        self._rows: tuple[DecisionView, ...] = ()

    def show_view(self, view: View) -> None:
        rows = view.activity[:MAX_CARDS]
        if rows == self._rows:
            return
        self._rows = rows
        keys = _keys(rows)
        for gone in set(self.cards) - set(keys):
            c = self.cards.pop(gone)
            self.box.removeWidget(c)
            c.deleteLater()
        for i, d in enumerate(rows):
            k = keys[i]
            if k not in self.cards:
                self.cards[k] = ActivityCard(d, view.at)
            self.box.insertWidget(i + 1, self.cards[k])
            self.cards[k].show()
        self.empty.setVisible(not rows)

    def card_widgets(self) -> list[ActivityCard]:
        """The cards in the order shown."""
        out: list[ActivityCard] = []
        for i in range(self.box.count()):
            item = self.box.itemAt(i)
            w = item.widget() if item is not None else None
            if isinstance(w, ActivityCard):
                out.append(w)
        return out
