"""The tray app's wiring: supervisor host, tray, dashboard, consent, notifications.

Everything here runs on the UI thread and only ever hands work to others: commands go to the
supervisor's queue, opening a terminal runs on a short-lived thread, notification button
presses arrive from the notifier's thread through a queued signal.
"""

from __future__ import annotations

import logging
import os
import shutil
import sys
import threading
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal, Slot
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QApplication

from pitcrew.desktop import autostart
from pitcrew.desktop.host import SupervisorHost
from pitcrew.desktop.tray import Tray
from pitcrew.supervisor.adapters.notifier import Message, default_gate
from pitcrew.supervisor.api import commands
from pitcrew.supervisor.api.commands import Command
from pitcrew.supervisor.api.view import View
from pitcrew.supervisor.service.app_context import AppContext

log = logging.getLogger("pitcrew")


class Shell(QObject):
    notification_action = Signal(str, object)    # action, Message (from the notifier thread)

    def __init__(self, app: QApplication, ctx: AppContext) -> None:
        super().__init__()
        self.app = app
        self.ctx = ctx
        self.dashboard: Any = None
        self.host = SupervisorHost(ctx, lambda: default_gate(on_action=self._from_notifier))
        self.tray = Tray(app, autostart=self._autostart_enabled)
        self.host.view_changed.connect(self.tray.show_view)
        self.host.view_changed.connect(self._view_changed)
        self.host.problem.connect(self._problem)
        self.tray.open_dashboard.connect(self.open_dashboard)
        self.tray.autopilot_requested.connect(self.set_autopilot)
        self.tray.palette_requested.connect(self.open_palette)
        self.tray.autostart_toggled.connect(self._set_autostart)
        self.tray.quit_requested.connect(self.quit)
        self.notification_action.connect(self._on_notification_action)
        self._consent_offered = False

    def start(self) -> None:
        self.tray.icon.show()
        for line in self.ctx.problems:
            self._problem(line)
        self.host.start()

    # -- the dashboard -----------------------------------------------------------------------

    def ensure_dashboard(self) -> Any:
        if self.dashboard is None:
            from pitcrew.desktop.dashboard import Dashboard

            self.dashboard = Dashboard(self.send)
            self.dashboard.show_view(self.host.latest)
            self.host.view_changed.connect(self.dashboard.show_view)
            shortcut = QShortcut(QKeySequence("Ctrl+K"), self.dashboard)
            shortcut.activated.connect(self.open_palette)
        return self.dashboard

    @Slot(str, str)
    def open_dashboard(self, page: str = "agents", terminal: str = "") -> None:
        self.ensure_dashboard().open_page(page or "agents", terminal or None)

    @Slot()
    def open_palette(self) -> None:
        dashboard = self.ensure_dashboard()
        dashboard.open_page("agents")
        opener = getattr(dashboard, "open_palette", None)
        if callable(opener):
            opener()

    def activated(self, message: list[str]) -> None:
        """A second launch asked us to come forward."""
        page = message[1] if len(message) > 1 else "agents"
        self.open_dashboard(page, "")

    # -- commands ----------------------------------------------------------------------------

    def send(self, command: Command) -> None:
        self.host.command(command)

    @Slot(str)
    def set_autopilot(self, action: str) -> None:
        """From the tray menu: turning Autopilot on shows the consent dialog first."""
        view = self.host.latest
        if action == "on" and view.autopilot_needs_consent:
            from pitcrew.desktop.consent import ask_consent

            accepted = ask_consent(None, view)
            for command in commands.turn_autopilot_on(accepted):
                self.send(command)
            if not accepted:
                self.tray.rebuild_menu()
            return
        self.send(commands.SetAutopilot(action))

    @Slot(object)
    def _view_changed(self, view: View) -> None:
        if not self._consent_offered and view.offer_consent:
            self._consent_offered = True
            QTimer.singleShot(0, self._offer_consent)

    @Slot()
    def _offer_consent(self) -> None:
        from pitcrew.desktop.consent import ask_consent

        view = self.host.latest
        accepted = ask_consent(None, view)
        self.send(commands.ConsentAsked())
        if accepted:
            self.send(commands.consent(True))

    # -- notifications -------------------------------------------------------------------------

    def _from_notifier(self, action: str, msg: Message) -> None:
        self.notification_action.emit(action, msg)     # any thread → the UI thread

    @Slot(str, object)
    def _on_notification_action(self, action: str, msg: Message) -> None:
        """(Snooze needs nothing here: the notifier already snoozed the supervisor's gate.)"""
        terminal = msg.terminal or ""
        if action == "clicked":
            self.open_dashboard("agents", terminal)
        elif action == "resume" and terminal:
            self.send(commands.ResumeNow(terminal))
        elif action == "open" and terminal:
            threading.Thread(target=self._open_terminal, args=(terminal,), daemon=True).start()

    def _open_terminal(self, terminal: str) -> None:
        from pitcrew.supervisor.adapters.terminal_app import open_terminal
        from pitcrew.supervisor.core.errors import PitcrewError

        try:
            log.info("%s", open_terminal(self.ctx.tmux, terminal.rsplit(":", 1)[-1]))
        except PitcrewError as exc:
            log.warning("cannot open the terminal: %s", exc)

    # -- start at login ------------------------------------------------------------------------

    def _autostart_enabled(self) -> bool:
        try:
            return bool(autostart.is_enabled())
        except OSError:
            return False

    @Slot(bool)
    def _set_autostart(self, on: bool) -> None:
        try:
            if on:
                autostart.enable(launch_command())
            else:
                autostart.disable()
        except OSError as exc:
            self._problem(f"cannot change start at login: {exc}")

    # -- the end -------------------------------------------------------------------------------

    @Slot(str)
    def _problem(self, line: str) -> None:
        print(f"pitcrew: {line}", file=sys.stderr)
        self.tray.icon.setToolTip(f"{self.tray.icon.toolTip()}\n{line}")

    @Slot()
    def quit(self) -> None:
        self.host.stop()
        self.tray.icon.hide()
        if self.dashboard is not None:
            self.dashboard.close()
        self.app.quit()


def launch_command() -> list[str]:
    """How login should start Pitcrew: the bundle's own program, or the installed `pitcrew`
    next to this Python."""
    if getattr(sys, "frozen", False):
        if sys.platform == "win32":   # the windowed one: no console at login
            return [os.path.join(os.path.dirname(sys.executable), "pitcrew-tray.exe")]
        return [sys.executable]
    here = os.path.join(os.path.dirname(sys.executable), "pitcrew")
    found = here if os.access(here, os.X_OK) else shutil.which("pitcrew")
    return [found] if found else [sys.executable, "-m", "pitcrew.supervisor"]
