"""The Autopilot (failed tasks) card: On/Off, Pause, status, tiles, setting, decisions."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetrics, QResizeEvent
from PySide6.QtWidgets import QFrame, QGridLayout, QHBoxLayout, QPushButton, QVBoxLayout, QWidget

from pitcrew.desktop.dashboard.how_it_works import HowItWorks
from pitcrew.desktop.dashboard.style import (
    BADGE_COLOR,
    GREY,
    Pill,
    Switch,
    ViewCheckBox,
    basename,
    card,
    clock,
    label,
)
from pitcrew.supervisor.api.commands import (
    Command,
    SetAutopilot,
    SetSetting,
    turn_autopilot_on,
)
from pitcrew.supervisor.api.view import RECENT, DecisionView, View

OFF_FOR_LAUNCH = "Off for this launch."
TILES = (
    ("Resume the session",
     "Relaunch the CLI in the same pane with its own session, and confirm it runs."),
    ("Switch to backup",
     "If the pane can't be resumed, hand the task and a brief to the seat's backup agent."),
    ("Wait for you",
     "A question, picker, draft, login or unclear screen: type nothing, tell you."),
)
ASK_TO_CONTINUE = "After a resume, ask the agent to continue"


class DecisionRow(QFrame):
    def __init__(self, d: DecisionView, now: float, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("row")
        grid = QGridLayout(self)
        grid.setContentsMargins(4, 6, 4, 6)
        grid.setHorizontalSpacing(12)
        grid.setVerticalSpacing(1)
        self.time = label(clock(d.at, now), "muted")
        self.time.setFixedWidth(86)
        grid.addWidget(self.time, 0, 0, Qt.AlignmentFlag.AlignTop)
        self._prompt = f"“{d.prompt}”" if d.prompt else "(no prompt)"
        self.prompt = label(self._prompt)
        self.prompt.setToolTip(d.prompt)
        self.prompt.setMinimumWidth(60)
        grid.addWidget(self.prompt, 0, 1)
        self.project = label(basename(d.project), "muted")
        self.project.setToolTip(d.project)
        grid.addWidget(self.project, 0, 2)
        self.badge = Pill(d.badge, BADGE_COLOR.get(d.badge, GREY))
        grid.addWidget(self.badge, 0, 3, Qt.AlignmentFlag.AlignRight)
        self.reason = label(d.reason, "small", wrap=True)
        grid.addWidget(self.reason, 1, 1, 1, 3)
        grid.setColumnStretch(1, 1)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        width = max(40, self.prompt.width())
        self.prompt.setText(QFontMetrics(self.prompt.font()).elidedText(
            self._prompt, Qt.TextElideMode.ElideRight, width))


class AutopilotCard(QFrame):
    def __init__(self, send: Callable[[Command], None], ask: Callable[[View], bool],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._send = send
        self._ask = ask
        self.view = View()
        self.setObjectName("card")
        box = QVBoxLayout(self)
        box.setContentsMargins(18, 16, 18, 16)
        box.setSpacing(10)

        head = QHBoxLayout()
        titles = QVBoxLayout()
        titles.setSpacing(2)
        titles.addWidget(label("Autopilot (failed tasks)", "heading"))
        titles.addWidget(label("Brings a failed task back on its own. Off by default.", "muted"))
        head.addLayout(titles, 1)
        self.pause = QPushButton("Pause")
        self.pause.setObjectName("autopilot_pause")
        self.pause.clicked.connect(self._pause_clicked)
        head.addWidget(self.pause, 0, Qt.AlignmentFlag.AlignVCenter)
        self.switch = Switch()
        self.switch.setObjectName("autopilot_switch")
        self.switch.setAccessibleName("Autopilot")
        self.switch.requested.connect(self._switch_requested)
        head.addWidget(self.switch, 0, Qt.AlignmentFlag.AlignVCenter)
        box.addLayout(head)

        self.status = label("", wrap=True)
        self.status.setObjectName("autopilot_status")
        box.addWidget(self.status)

        tiles = QHBoxLayout()
        tiles.setSpacing(10)
        self.tiles: list[QFrame] = []
        for title, text in TILES:
            tile, tbox = card()
            tile.setObjectName("tile")
            tbox.setContentsMargins(12, 10, 12, 10)
            tbox.setSpacing(3)
            tbox.addWidget(label(title, "heading"))
            tbox.addWidget(label(text, "small", wrap=True))
            tbox.addStretch(1)
            tiles.addWidget(tile, 1)
            self.tiles.append(tile)
        box.addLayout(tiles)

        self.ask_to_continue = ViewCheckBox(ASK_TO_CONTINUE)
        self.ask_to_continue.setObjectName("ask_to_continue")
        self.ask_to_continue.setToolTip("Sends: continue from where you stopped, do not redo "
                                        "finished steps, check an interrupted step first.")
        self.ask_to_continue.requested.connect(
            lambda on: self._send(SetSetting("autopilot", "ask_to_continue", on)))
        box.addWidget(self.ask_to_continue, 0, Qt.AlignmentFlag.AlignLeft)

        box.addSpacing(4)
        box.addWidget(label("How it works", "heading"))
        self.how = HowItWorks()
        box.addWidget(self.how)

        box.addSpacing(4)
        box.addWidget(label("Recent decisions", "heading"))
        self.decisions_box = QVBoxLayout()
        self.decisions_box.setSpacing(0)
        box.addLayout(self.decisions_box)
        self.no_decisions = label("No decisions yet.", "muted")
        box.addWidget(self.no_decisions)
        self.decision_rows: list[DecisionRow] = []
        self._decisions: tuple[DecisionView, ...] | None = None

    # -- rendering -------------------------------------------------------------------------

    def show_view(self, view: View) -> None:
        self.view = view
        s = view.settings
        on = view.mode in ("on", "paused") and not view.off_for_launch
        if self.switch.isChecked() != on:
            self.switch.setChecked(on)
        self.switch.setEnabled(not view.off_for_launch)
        self.switch.setToolTip(OFF_FOR_LAUNCH + " (PITCREW_AUTOPILOT=off)"
                               if view.off_for_launch else "Turn Autopilot on or off")
        self.pause.setText("Resume" if view.mode == "paused" else "Pause")
        self.pause.setEnabled(on)
        text = OFF_FOR_LAUNCH if view.off_for_launch else view.status_line
        if self.status.text() != text:
            self.status.setText(text)
        if self.ask_to_continue.isChecked() != s.ask_to_continue:
            self.ask_to_continue.setChecked(s.ask_to_continue)
        rows = view.decisions[:RECENT]
        if rows != self._decisions:
            self._decisions = rows
            for r in self.decision_rows:
                self.decisions_box.removeWidget(r)
                r.deleteLater()
            self.decision_rows = [DecisionRow(d, view.at or d.at) for d in rows]
            for r in self.decision_rows:
                self.decisions_box.addWidget(r)
                r.show()
            self.no_decisions.setVisible(not rows)

    # -- commands --------------------------------------------------------------------------

    def request_on(self) -> None:
        """Turn Autopilot on; without consent, the consent dialog decides first."""
        view = self.view
        if view.off_for_launch:
            return
        if not view.autopilot_needs_consent:
            self._send(SetAutopilot("on"))
            return
        for command in turn_autopilot_on(self._ask(view)):
            self._send(command)

    def request_off(self) -> None:
        if not self.view.off_for_launch:
            self._send(SetAutopilot("off"))

    def request_pause(self) -> None:
        if not self.view.off_for_launch and self.view.mode == "on":
            self._send(SetAutopilot("pause"))

    def _switch_requested(self, wanted: bool) -> None:
        if wanted:
            self.request_on()
        else:
            self.request_off()

    def _pause_clicked(self) -> None:
        if self.view.off_for_launch:
            return
        if self.view.mode == "paused":
            self._send(SetAutopilot("resume"))
        elif self.view.mode == "on":
            self._send(SetAutopilot("pause"))
