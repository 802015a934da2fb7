"""The agent row's Rerun button: asks first, then sends one `Rerun` for that row's terminal."""

from __future__ import annotations

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from pitcrew.desktop.dashboard import Dashboard
from pitcrew.supervisor.api.commands import Command, Rerun
from tests.desktop.test_dashboard import make_view, terminal


def test_rerun_asks_then_sends_a_rerun_for_that_row(qtbot: QtBot) -> None:
    sent: list[Command] = []
    asked: list[str] = []
    answers = iter([False, True])
    window = Dashboard(sent.append)
    window.confirm = lambda parent, title, text: asked.append(text) or next(answers)
    qtbot.addWidget(window)
    window.show()
    window.show_view(make_view(terminals=(terminal(1), terminal(2, "rate_limit"))))
    button = window.agents.rows["default:%2"].rerun
    assert button.isVisible() and button.text() == "Rerun"
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)     # the user says Cancel
    assert sent == []
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)     # … then Yes
    assert sent == [Rerun("default:%2")]
    assert "Claude Code in work:2.0" in asked[0] and "new session" in asked[0]


def test_the_real_confirmation_defaults_to_cancel(qtbot: QtBot) -> None:
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication, QMessageBox

    from pitcrew.desktop.dashboard.window import confirm_dialog

    def press_enter() -> None:
        box = QApplication.activeModalWidget()
        assert isinstance(box, QMessageBox)
        qtbot.keyClick(box, Qt.Key.Key_Return)

    QTimer.singleShot(200, press_enter)
    assert confirm_dialog(None, "Rerun in a fresh session?", "text") is False
