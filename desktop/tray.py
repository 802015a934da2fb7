"""The tray icon and its menu, drawn from the latest `View`.

The icon shows the worst state at a glance (stuck > waiting on you > Autopilot paused >
nothing needs you), in a light or dark variant to match the panel, with the count of agents
that need you painted on it; the tooltip says it in words. The menu is rebuilt from the latest
view each time it opens, the agents that need you first (the view's order).
"""

from __future__ import annotations

import os
from collections.abc import Callable

from PySide6.QtCore import QObject, QRectF, Qt, Signal, Slot
from PySide6.QtGui import QAction, QActionGroup, QColor, QFont, QIcon, QPainter, QPixmap
from PySide6.QtWidgets import QApplication, QMenu, QSystemTrayIcon

from pitcrew import resources
from pitcrew.desktop.dashboard.style import is_dark
from pitcrew.supervisor import __version__
from pitcrew.supervisor.api.view import TerminalView, View

SUMMARY = {"ok": "nothing needs you", "attention": "waiting on you", "stuck": "an agent is stuck",
           "paused": "Autopilot paused", "idle": "no agents"}


def worst(view: View) -> str:
    """The tray's one-glance status (decided in the view)."""
    return view.tray_status.value


def tooltip(view: View) -> str:
    """The summary line, and which supervisor it comes from when this app only relays."""
    return summary(view) + (f"\n{relay_line(view)}" if view.relay else "")


def relay_line(view: View) -> str:
    return f"Shown from {view.relay}; your changes are relayed to it"


def summary(view: View) -> str:
    if view.relay and not view.at:
        return "Pitcrew — waiting for the running supervisor's view"
    count = len(view.terminals)
    status = worst(view)
    need = len(view.needs_you)
    parts = [f"Pitcrew — {count} agent{'s' if count != 1 else ''}"]
    if need:
        parts.append(f"{need} need{'s' if need == 1 else ''} you")
        if status == "stuck":
            parts.append(SUMMARY[status])
    elif count:
        parts.append(SUMMARY[status])
    autopilot = ("Autopilot off for this launch" if view.off_for_launch else
                 {"on": "Autopilot on", "paused": "Autopilot paused", "off": "Autopilot off"}
                 [view.mode])
    if status != "paused":
        parts.append(autopilot)
    return " · ".join(parts)


def icon_for(status: str, dark_panel: bool, count: int = 0) -> QIcon:
    """The status icon; `count` > 0 paints that number (agents that need you) on it."""
    variant = "dark" if dark_panel else "light"
    name = "ok" if status == "idle" else status
    path = str(resources.icons_dir() / f"tray-{name}-{variant}.png")
    if count <= 0:
        return QIcon(path)
    pixmap = QPixmap(path)
    if pixmap.isNull():
        return QIcon(path)
    size = min(pixmap.width(), pixmap.height())
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    badge = QRectF(size * 0.42, size * 0.42, size * 0.58, size * 0.58)
    painter.setBrush(QColor("#d64545"))
    painter.setPen(Qt.PenStyle.NoPen)
    painter.drawEllipse(badge)
    font = QFont()
    font.setBold(True)
    font.setPixelSize(max(6, int(size * (0.42 if count < 10 else 0.3))))
    painter.setFont(font)
    painter.setPen(QColor("white"))
    painter.drawText(badge, Qt.AlignmentFlag.AlignCenter, str(count) if count < 100 else "99")
    painter.end()
    return QIcon(pixmap)


def terminal_label(t: TerminalView) -> str:
    home = os.path.expanduser("~")
    project = t.project.replace(home, "~", 1) if t.project.startswith(home) else t.project
    state = t.state.replace("_", " ")
    waiting = f" · {t.waiting}" if t.attention == "needs_you" and t.waiting else ""
    return f"{t.agent} · {state} · {project or t.target}{waiting}"


class Tray(QObject):
    """Emits what the user asked for; the app decides how (consent first, and so on)."""

    open_dashboard = Signal(str, str)       # page, terminal key ("" for none)
    autopilot_requested = Signal(str)       # "on" | "pause" | "off"
    palette_requested = Signal()
    autostart_toggled = Signal(bool)
    quit_requested = Signal()

    def __init__(self, app: QApplication, autostart: Callable[[], bool] | None = None) -> None:
        super().__init__()
        self.app = app
        self.view = View()
        self.autostart = autostart
        self.icon = QSystemTrayIcon(self)
        self.menu = QMenu()
        self.menu.aboutToShow.connect(self.rebuild_menu)
        self.icon.setContextMenu(self.menu)
        self.icon.activated.connect(self._activated)
        self.render()
        self.rebuild_menu()

    @Slot(object)
    def show_view(self, view: View) -> None:
        self.view = view
        self.render()

    def render(self) -> None:
        self.icon.setIcon(icon_for(worst(self.view), is_dark(self.app.palette()),
                                   len(self.view.needs_you)))
        self.icon.setToolTip(tooltip(self.view))

    @Slot()
    def rebuild_menu(self) -> None:
        menu, view = self.menu, self.view
        menu.clear()
        header = menu.addAction(f"Pitcrew {__version__} — {summary(view).split(' — ', 1)[1]}")
        header.setEnabled(False)
        if view.relay:
            menu.addAction(relay_line(view)).setEnabled(False)
        menu.addSeparator()
        if not view.terminals:
            menu.addAction("No agent terminals found").setEnabled(False)
        need = len(view.needs_you)
        if need:
            menu.addAction(f"Needs you ({need})").setEnabled(False)
        for i, t in enumerate(view.by_attention):
            if need and i == need:
                menu.addSeparator()
            action = menu.addAction(("⚑ " if i < need else "") + terminal_label(t))
            action.setToolTip(t.why or t.note or t.target)
            action.triggered.connect(lambda _=False, key=t.key:
                                     self.open_dashboard.emit("agents", key))
        menu.addSeparator()
        self._autopilot_items(menu, view)
        menu.addSeparator()
        menu.addAction("Open Orchestration Dashboard").triggered.connect(
            lambda: self.open_dashboard.emit("agents", ""))
        menu.addAction("Command palette…\tCtrl+K").triggered.connect(self.palette_requested.emit)
        if self.autostart is not None:
            start = menu.addAction("Start at login")
            start.setCheckable(True)
            start.setChecked(self.autostart())
            start.toggled.connect(self.autostart_toggled.emit)
        menu.addSeparator()
        quit_action = QAction("Quit Pitcrew", menu)
        quit_action.triggered.connect(self.quit_requested.emit)
        menu.addAction(quit_action)

    def _autopilot_items(self, menu: QMenu, view: View) -> None:
        if view.off_for_launch:
            menu.addAction("Autopilot: Off for this launch").setEnabled(False)
            return
        group = QActionGroup(menu)
        group.setExclusive(True)
        for mode, label in (("on", "Autopilot On"), ("paused", "Autopilot Pause"),
                            ("off", "Autopilot Off")):
            action = menu.addAction(label)
            action.setCheckable(True)
            action.setChecked(view.mode == mode)
            group.addAction(action)
            request = {"on": "on", "paused": "pause", "off": "off"}[mode]
            action.triggered.connect(lambda _=False, r=request: self.autopilot_requested.emit(r))

    @Slot(QSystemTrayIcon.ActivationReason)
    def _activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason in (QSystemTrayIcon.ActivationReason.Trigger,
                      QSystemTrayIcon.ActivationReason.DoubleClick):
            self.open_dashboard.emit("agents", "")
