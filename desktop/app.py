"""The tray app: a Qt shell around the same supervisor code `pitcrew watch` runs.

The UI thread never touches tmux, psutil or files: a `Scanner` on its own thread publishes
immutable snapshots (tuples of frozen `Terminal` records) through a queued signal, and the
tray renders from the latest one. The menu is rebuilt each time it opens.
"""

from __future__ import annotations

import signal
import sys
import threading

from PySide6.QtCore import QObject, QThread, QTimer, Signal, Slot
from PySide6.QtGui import QAction, QGuiApplication, QIcon, QPalette
from PySide6.QtWidgets import QApplication, QMenu, QSystemTrayIcon

import resources
from supervisor import __version__
from supervisor.context import load_context, local_zone, now_utc
from supervisor.terminals import Terminal, scan

ATTENTION = {"rate_limit", "login_required", "upgrade_prompt", "question", "picker",
             "continue_prompt"}
STUCK = {"connection_lost", "crashed"}


def worst(terminals: tuple[Terminal, ...]) -> str:
    """The tray's one-glance status: stuck > attention > ok."""
    states = {("crashed" if t.dead else t.state) for t in terminals}
    if states & STUCK:
        return "stuck"
    if states & ATTENTION:
        return "attention"
    return "ok"


def icon_for(status: str, dark_panel: bool) -> QIcon:
    variant = "dark" if dark_panel else "light"
    return QIcon(str(resources.icons_dir() / f"tray-{status}-{variant}.png"))


class Scanner(QObject):
    """Scans the tmux server on a worker thread and publishes snapshots."""

    snapshot = Signal(object)  # tuple[Terminal, ...]
    problem = Signal(str)

    def __init__(self, tmux_socket: str | None) -> None:
        super().__init__()
        self.tmux_socket = tmux_socket
        self._stop = threading.Event()

    @Slot()
    def run(self) -> None:
        ctx = load_context(self.tmux_socket)
        for line in ctx.problems:
            self.problem.emit(line)
        while not self._stop.is_set():
            try:
                found = tuple(scan(ctx.tmux, ctx.active_providers, now_utc(), local_zone()))
            except Exception as exc:
                self.problem.emit(f"scan failed: {exc}")
                found = ()
            self.snapshot.emit(found)
            self._stop.wait(ctx.config.poll_interval)

    def stop(self) -> None:
        self._stop.set()


class Tray(QObject):
    def __init__(self, app: QApplication, tmux_socket: str | None) -> None:
        super().__init__()
        self.app = app
        self.terminals: tuple[Terminal, ...] = ()
        self.tray = QSystemTrayIcon(self)
        self.menu = QMenu()
        self.menu.aboutToShow.connect(self.rebuild_menu)
        self.tray.setContextMenu(self.menu)
        self.render()
        self.worker = QThread()
        self.scanner = Scanner(tmux_socket)
        self.scanner.moveToThread(self.worker)
        self.worker.started.connect(self.scanner.run)
        self.scanner.snapshot.connect(self.on_snapshot)
        self.scanner.problem.connect(lambda line: print(f"pitcrew: {line}", file=sys.stderr))
        self.worker.start()
        self.rebuild_menu()

    @Slot(object)
    def on_snapshot(self, terminals: tuple[Terminal, ...]) -> None:
        self.terminals = terminals
        self.render()

    def render(self) -> None:
        dark = self.app.palette().color(QPalette.ColorRole.Window).lightness() < 128
        status = worst(self.terminals)
        self.tray.setIcon(icon_for(status, dark))
        count = len(self.terminals)
        summary = {"ok": "all working", "attention": "waiting on you", "stuck": "an agent is stuck"}
        self.tray.setToolTip(
            f"Pitcrew — {count} agent{'s' if count != 1 else ''}"
            + (f" · {summary[status]}" if count else "")
        )

    @Slot()
    def rebuild_menu(self) -> None:
        self.menu.clear()
        header = self.menu.addAction(f"Pitcrew {__version__}")
        header.setEnabled(False)
        self.menu.addSeparator()
        if not self.terminals:
            empty = self.menu.addAction("No agent terminals found")
            empty.setEnabled(False)
        for t in self.terminals:
            state = "exited" if t.dead else t.state.replace("_", " ")
            action = self.menu.addAction(f"{t.display_name} · {state} · {t.cwd or t.target}")
            action.setEnabled(False)
        self.menu.addSeparator()
        quit_action = QAction("Quit Pitcrew", self.menu)
        quit_action.triggered.connect(self.quit)
        self.menu.addAction(quit_action)

    @Slot()
    def quit(self) -> None:
        self.scanner.stop()
        self.worker.quit()
        self.worker.wait(5000)
        self.tray.hide()
        self.app.quit()


def run_tray(tmux_socket: str | None = None) -> int:
    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    app.setApplicationName("Pitcrew")
    app.setDesktopFileName("pitcrew")
    app.setQuitOnLastWindowClosed(False)
    app.setWindowIcon(QIcon(str(resources.icons_dir() / "pitcrew-256.png")))
    if not QSystemTrayIcon.isSystemTrayAvailable():
        print("pitcrew: no system tray found yet; the icon appears when one starts",
              file=sys.stderr)
    tray = Tray(app, tmux_socket)
    tray.tray.show()
    # Let Python see SIGINT/SIGTERM while Qt's loop runs, and quit cleanly on them.
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: QTimer.singleShot(0, tray.quit))
    pulse = QTimer()
    pulse.start(250)
    pulse.timeout.connect(lambda: None)
    code = app.exec()
    QGuiApplication.processEvents()
    return int(code)


def main() -> int:
    return run_tray()


if __name__ == "__main__":
    raise SystemExit(main())
