"""The Orchestration Dashboard window: a sidebar, three pages and the command palette.

The window renders only `View`s handed to `show_view` and changes things only by calling
`send` with the command records of `supervisor.view`. Each page compares the new View with
what it shows and touches only what changed, so a View a few times a second never flickers,
scrolls, steals focus or closes an open combo box.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QFont, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QHBoxLayout,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QMessageBox,
    QStackedWidget,
    QWidget,
)

from pitcrew.desktop import consent as consent_dialog
from pitcrew.desktop.dashboard.activity import ActivityPage
from pitcrew.desktop.dashboard.agents import AgentsPage
from pitcrew.desktop.dashboard.diagnosis import DiagnosisPage
from pitcrew.desktop.dashboard.palette import CommandPalette
from pitcrew.desktop.dashboard.style import muted, stylesheet
from pitcrew.supervisor.api.commands import Command
from pitcrew.supervisor.api.view import View

TITLE = "Pitcrew — Orchestration Dashboard"
PAGES = ("agents", "activity", "diagnosis", "autopilot")
PAGE_ROLE = Qt.ItemDataRole.UserRole
# (section header or None, entry text, page); a None page is a non-clickable header.
SIDEBAR: tuple[tuple[str, str | None], ...] = (
    ("Dashboard", None),
    ("Agents", "agents"),
    ("Activity", "activity"),
    ("Advanced", None),
    ("AI Diagnosis", "diagnosis"),
    ("Tutorials", None),
    ("How-to → Autopilot", "autopilot"),
)


def confirm_dialog(parent: QWidget | None, title: str, text: str) -> bool:
    answer = QMessageBox.question(parent, title, text, QMessageBox.StandardButton.Yes
                                  | QMessageBox.StandardButton.Cancel,
                                  QMessageBox.StandardButton.Cancel)
    return answer == QMessageBox.StandardButton.Yes


class Dashboard(QMainWindow):
    def __init__(self, send: Callable[[Command], None],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._send = send
        self.view = View()
        self._last: View | None = None
        # Who asks for consent; tests may replace it with a stub.
        self.ask_consent: Callable[[QWidget | None, View], bool] = consent_dialog.ask_consent
        # Who confirms an action (a rerun); tests may replace it with a stub.
        self.confirm: Callable[[QWidget | None, str, str], bool] = confirm_dialog
        self.setWindowTitle(TITLE)
        self.resize(1200, 760)
        self.setMinimumSize(860, 520)

        body = QWidget()
        row = QHBoxLayout(body)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(0)
        self.sidebar = QListWidget()
        self.sidebar.setObjectName("sidebar")
        self.sidebar.setFixedWidth(210)
        self.sidebar.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        for text, page in SIDEBAR:
            item = QListWidgetItem(text.upper() if page is None else text, self.sidebar)
            item.setData(PAGE_ROLE, page)
            if page is None:
                item.setFlags(Qt.ItemFlag.NoItemFlags)
                f = QFont(self.font())
                f.setPointSizeF(max(7.0, f.pointSizeF() * 0.8))
                f.setBold(True)
                f.setLetterSpacing(QFont.SpacingType.PercentageSpacing, 108)
                item.setFont(f)
                item.setForeground(muted(self.palette()))
        self.sidebar.currentItemChanged.connect(self._sidebar_changed)
        row.addWidget(self.sidebar)

        self.stack = QStackedWidget()
        self.agents = AgentsPage(send, lambda title, text: self.confirm(self, title, text))
        self.activity = ActivityPage()
        self.diagnosis = DiagnosisPage(send, self._ask)
        for widget in (self.agents, self.activity, self.diagnosis):
            self.stack.addWidget(widget)
        row.addWidget(self.stack, 1)
        self.setCentralWidget(body)
        self.setStyleSheet(stylesheet(self.palette()))

        self._palette: CommandPalette | None = None
        self.palette_shortcut = QShortcut(QKeySequence("Ctrl+K"), self)
        self.palette_shortcut.setContext(Qt.ShortcutContext.WindowShortcut)
        self.palette_shortcut.activated.connect(self.open_palette)
        self.page = ""
        self._go("agents")

    # -- public interface ------------------------------------------------------------------

    def show_view(self, view: View) -> None:
        """Render the latest snapshot; cheap and in place."""
        if view == self._last and self.page:
            return
        self._last = view
        if not view.at:   # a View without its clock: render "ago" against the wall clock
            view = dataclasses.replace(view, at=time.time())
        self.view = view
        self.agents.show_view(view)
        self.activity.show_view(view)
        self.diagnosis.show_view(view)

    def open_page(self, page: str, terminal: str | None = None) -> None:
        """Show `page` ("agents", "activity", "diagnosis" or "autopilot"), select `terminal`'s
        row in the overview if given, and bring the window forward."""
        if page not in PAGES:
            page = "agents"
        if terminal is not None:
            self.agents.select(terminal)
        self._go(page)
        if self.isMinimized():
            self.showNormal()
        self.show()
        self.raise_()
        self.activateWindow()

    def palette_dialog(self) -> CommandPalette:
        if self._palette is None:
            self._palette = CommandPalette(self._palette_actions(), self)
        return self._palette

    def open_palette(self) -> None:
        self.palette_dialog().present()

    # -- internals -------------------------------------------------------------------------

    def _ask(self, view: View) -> bool:
        return self.ask_consent(self, view)

    def _palette_actions(self) -> list[tuple[str, Callable[[], None]]]:
        card = self.diagnosis.autopilot
        return [
            ("Open Orchestration Dashboard", lambda: self.open_page("agents")),
            ("Go to Agents", lambda: self.open_page("agents")),
            ("Go to Activity", lambda: self.open_page("activity")),
            ("Go to AI Diagnosis", lambda: self.open_page("diagnosis")),
            ("Go to Autopilot", lambda: self.open_page("autopilot")),
            ("Autopilot: On", card.request_on),
            ("Autopilot: Pause", card.request_pause),
            ("Autopilot: Off", card.request_off),
            ("Tutorials: How-to → Autopilot", lambda: self.open_page("autopilot")),
        ]

    def _go(self, page: str) -> None:
        self.page = page
        widget = {"agents": self.agents, "activity": self.activity}.get(page, self.diagnosis)
        self.stack.setCurrentWidget(widget)
        for i in range(self.sidebar.count()):
            item = self.sidebar.item(i)
            if item.data(PAGE_ROLE) == page:
                self.sidebar.blockSignals(True)
                self.sidebar.setCurrentItem(item)
                self.sidebar.blockSignals(False)
                break
        if page == "autopilot":
            self.diagnosis.scroll_to_autopilot()
        elif page == "diagnosis":
            self.diagnosis.verticalScrollBar().setValue(0)

    def _sidebar_changed(self, item: QListWidgetItem | None, _prev: object) -> None:
        if item is not None and item.data(PAGE_ROLE):
            self._go(str(item.data(PAGE_ROLE)))

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self.setStyleSheet(stylesheet(self.palette()))


__all__ = ["TITLE", "Dashboard"]
