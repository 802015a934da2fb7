"""Advanced → AI Diagnosis: the switch, how to restore, consent, checkers, Autopilot card."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QButtonGroup,
    QHBoxLayout,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from pitcrew.desktop.dashboard.autopilot_card import AutopilotCard
from pitcrew.desktop.dashboard.checkers import CheckerList
from pitcrew.desktop.dashboard.style import Switch, ViewRadio, card, label
from pitcrew.supervisor.api.commands import Command, ConsentAsked, SetSetting, consent
from pitcrew.supervisor.api.view import View

DIAGNOSE = "Diagnose & restore stuck agents"
WITH_AI = "With AI — recommended"
WITH_AI_TEXT = ("A checker reads the stuck screen; recovery runs only when it confirms a usage "
                "or login limit. A merely busy agent is left alone.")
TIMER = "Manual timer — no AI"
TIMER_TEXT = ("The timeout alone triggers recovery: fast and fully local, but it cannot tell "
              "stuck from busy.")
NO_CONSENT = "Checkers are off until you allow screen reading."
HAS_CONSENT = "Screen reading allowed: checkers may read a stuck terminal's screen."


class DiagnosisPage(QScrollArea):
    def __init__(self, send: Callable[[Command], None], ask: Callable[[View], bool],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._send = send
        self._ask = ask
        self.view = View()
        self.setWidgetResizable(True)
        page = QWidget()
        page.setObjectName("page")
        col = QVBoxLayout(page)
        col.setContentsMargins(24, 20, 24, 24)
        col.setSpacing(14)
        col.addWidget(label("AI Diagnosis", "title"))
        col.addWidget(label("Advanced · how Pitcrew notices a stuck agent and brings it back.",
                            "muted"))

        # The switch.
        sw_card, sw_box = card()
        row = QHBoxLayout()
        texts = QVBoxLayout()
        texts.setSpacing(2)
        texts.addWidget(label(DIAGNOSE, "heading"))
        texts.addWidget(label("When a message to an agent keeps failing for about two minutes, "
                              "find out why and restore it. Healthy terminals are never "
                              "checked.", "muted", wrap=True))
        row.addLayout(texts, 1)
        self.enabled = Switch()
        self.enabled.setObjectName("diagnosis_switch")
        self.enabled.setAccessibleName(DIAGNOSE)
        self.enabled.requested.connect(
            lambda on: self._send(SetSetting("diagnosis", "enabled", on)))
        row.addWidget(self.enabled, 0, Qt.AlignmentFlag.AlignVCenter)
        sw_box.addLayout(row)
        col.addWidget(sw_card)

        # How to restore + consent.
        how_card, how_box = card()
        how_box.addWidget(label("How to restore", "heading"))
        self.modes = QButtonGroup(self)
        self.with_ai = ViewRadio(WITH_AI)
        self.with_ai.setObjectName("mode_ai")
        self.timer = ViewRadio(TIMER)
        self.timer.setObjectName("mode_timer")
        for radio, text in ((self.with_ai, WITH_AI_TEXT), (self.timer, TIMER_TEXT)):
            self.modes.addButton(radio)
            how_box.addWidget(radio, 0, Qt.AlignmentFlag.AlignLeft)
            expl = label(text, "small", wrap=True)
            expl.setContentsMargins(26, 0, 0, 4)
            how_box.addWidget(expl)
        self.with_ai.requested.connect(self._ai_requested)
        self.timer.requested.connect(
            lambda: self._send(SetSetting("diagnosis", "mode", "timer")))
        consent_row = QHBoxLayout()
        self.consent_line = label("", "warn", wrap=True)
        self.consent_line.setObjectName("consent_line")
        consent_row.addWidget(self.consent_line, 1)
        self.consent_button = QPushButton("Allow…")
        self.consent_button.setObjectName("consent_button")
        self.consent_button.clicked.connect(self._consent_clicked)
        consent_row.addWidget(self.consent_button)
        how_box.addSpacing(4)
        how_box.addLayout(consent_row)
        col.addWidget(how_card)

        # Checkers.
        ch_card, ch_box = card()
        ch_box.addWidget(label("Checkers", "heading"))
        ch_box.addWidget(label("AI CLIs that read a stuck screen, tried in order. The stuck "
                               "agent never checks itself.", "muted", wrap=True))
        self.checkers = CheckerList(send)
        ch_box.addWidget(self.checkers)
        col.addWidget(ch_card)

        self.autopilot = AutopilotCard(send, ask)
        col.addWidget(self.autopilot)
        col.addStretch(1)
        self.setWidget(page)

    def show_view(self, view: View) -> None:
        self.view = view
        s = view.settings
        if self.enabled.isChecked() != s.diagnosis:
            self.enabled.setChecked(s.diagnosis)
        radio = self.with_ai if s.diagnosis_mode == "ai" else self.timer
        if not radio.isChecked():
            radio.setChecked(True)
        line = HAS_CONSENT if view.consent else NO_CONSENT
        if self.consent_line.text() != line:
            self.consent_line.setText(line)
            self.consent_line.setProperty("role", "muted" if view.consent else "warn")
            self.consent_line.style().unpolish(self.consent_line)
            self.consent_line.style().polish(self.consent_line)
        self.consent_button.setText("Revoke" if view.consent else "Allow…")
        self.checkers.show_view(view)
        self.autopilot.show_view(view)

    def scroll_to_autopilot(self) -> None:
        """Bring the Autopilot card to the top (again once the layout has settled)."""
        def go() -> None:
            page = self.widget()
            layout = page.layout() if page is not None else None
            if layout is not None:
                layout.activate()
            self.verticalScrollBar().setValue(max(0, self.autopilot.y() - 12))
        go()
        QTimer.singleShot(0, go)

    # -- commands --------------------------------------------------------------------------

    def _ask_and_record(self) -> None:
        if self._ask(self.view):
            self._send(consent(True))
        self._send(ConsentAsked())

    def _ai_requested(self) -> None:
        self._send(SetSetting("diagnosis", "mode", "ai"))
        if not self.view.consent and not self.view.consent_asked:
            self._ask_and_record()

    def _consent_clicked(self) -> None:
        if self.view.consent:
            self._send(consent(False))
        else:
            self._ask_and_record()
