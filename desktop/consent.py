"""The one-time consent dialog: before any screen text leaves the machine, say exactly what,
to whom, under which limits, and how to take it back."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from pitcrew.supervisor.api.view import CheckerView, View

TITLE = "Allow screen reading?"
WHAT = ("The stuck terminal's screen text — its last ~200 lines — after secrets are removed: "
        "API keys, bearer tokens, passwords, private-key blocks and .env-style assignments.")
HOW = ("Each checker runs read-only, in an empty temporary folder, never in your project, and "
       "answers one line that Pitcrew checks. It is asked only when a terminal looks stuck; "
       "healthy terminals are never read.")
REVOKE = ("Run <code>pitcrew consent revoke</code>, or use Revoke on the "
          "<b>Advanced → AI Diagnosis</b> page. Until you allow it, only Pitcrew's local "
          "classifier reads screens and nothing is sent.")


def checker_names(view: View) -> list[str]:
    """Who would receive the text: the chosen checkers, else the first installed candidate."""
    def name(c: CheckerView) -> str:
        return c.display_name or c.provider.capitalize()

    chosen = view.settings.checkers
    if chosen:
        return [name(c) + ("" if c.installed else " (not installed)") for c in chosen]
    first = next((c for c in view.candidates if c.installed), None)
    return [name(first)] if first else []


class ConsentDialog(QDialog):
    def __init__(self, parent: QWidget | None, view: View) -> None:
        super().__init__(parent)
        self.setWindowTitle("Pitcrew — " + TITLE)
        self.setModal(True)
        self.setMinimumWidth(520)
        box = QVBoxLayout(self)
        box.setContentsMargins(24, 20, 24, 18)
        box.setSpacing(10)
        title = QLabel(TITLE)
        title.setStyleSheet("font-size: 18px; font-weight: 600;")
        box.addWidget(title)
        box.addWidget(self._para("When an agent looks stuck, an AI checker can read its screen "
                                 "to tell a usage limit or a login prompt from a busy agent."))
        names = checker_names(view)
        to = (html.escape(", ".join(names)) if names
              else "the first checker CLI you install (none is installed yet)")
        if not view.settings.checkers and names:
            to += " (the first installed; choose others on the AI Diagnosis page)"
        self.to = self._section(box, "Sent to", to)
        self.what = self._section(box, "What is sent", WHAT)
        self._section(box, "How", HOW)
        self._section(box, "Change your mind", REVOKE)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        self.not_now = QPushButton("Not now")
        self.not_now.setObjectName("consent_not_now")
        self.not_now.clicked.connect(self.reject)
        self.allow = QPushButton("Allow")
        self.allow.setObjectName("consent_allow")
        self.allow.setDefault(True)
        self.allow.clicked.connect(self.accept)
        buttons.addWidget(self.not_now)
        buttons.addWidget(self.allow)
        box.addStretch(1)
        box.addSpacing(6)
        box.addLayout(buttons)
        self.resize(560, self.heightForWidth(560) if self.hasHeightForWidth() else 0)

    @staticmethod
    def _para(text: str) -> QLabel:
        lab = QLabel(text)
        lab.setWordWrap(True)
        lab.setTextFormat(Qt.TextFormat.RichText)
        return lab

    def _section(self, box: QVBoxLayout, head: str, text: str) -> QLabel:
        section = QVBoxLayout()
        section.setSpacing(2)
        h = QLabel(head)
        h.setStyleSheet("font-weight: 600;")
        section.addWidget(h)
        body = self._para(text)
        section.addWidget(body)
        box.addLayout(section)
        return body


def ask_consent(parent: QWidget | None, view: View) -> bool:
    """Show the dialog modally; True when the user chose Allow."""
    dialog = ConsentDialog(parent, view)
    try:
        return dialog.exec() == QDialog.DialogCode.Accepted
    finally:
        dialog.deleteLater()
