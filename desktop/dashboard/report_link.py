""""Open report": the incident report of one terminal, written by the supervisor's API to the
data folder and opened in the user's browser. No rule here: what goes in the report and
where it is written is `supervisor/api/report.py`'s."""

from __future__ import annotations

import logging

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QToolButton, QWidget

from pitcrew.supervisor.api.report import write_for_terminal

log = logging.getLogger(__name__)


def open_report(terminal: str) -> None:
    try:
        path = write_for_terminal(terminal)
    except Exception:   # a click must never take the tray app down
        log.exception("could not write the incident report for %s", terminal)
        return
    QDesktopServices.openUrl(QUrl.fromLocalFile(str(path)))


def report_button(terminal: str, parent: QWidget | None = None) -> QToolButton:
    """A small "Report" button; `terminal` (the ledger's name for it) may change later
    through the button's `terminal` property."""
    button = QToolButton(parent)
    button.setObjectName("report")
    button.setText("Report")
    button.setToolTip("Open the incident report for this terminal in your browser")
    button.setAutoRaise(True)
    button.setProperty("terminal", terminal)
    button.clicked.connect(lambda: open_report(str(button.property("terminal"))))
    return button
