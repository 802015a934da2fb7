"""`pitcrew` with a display: the tray app.

One instance per user: a second launch brings the first one's dashboard forward and exits.
The supervisor runs on its own thread inside (see desktop/host.py); this module only sets up
Qt, claims the instance and starts the shell.
"""

from __future__ import annotations

import signal
import sys
import time

from PySide6.QtCore import QTimer
from PySide6.QtGui import QGuiApplication, QIcon
from PySide6.QtWidgets import QApplication, QSystemTrayIcon

from pitcrew import resources
from pitcrew.supervisor.adapters.display import missing_display
from pitcrew.supervisor.service.app_context import load_context


def run_tray(tmux_socket: str | None = None, page: str | None = None) -> int:
    started = time.monotonic()
    if (missing := missing_display()) is not None:   # before Qt, which would abort
        print(f"pitcrew: {missing}", file=sys.stderr)
        return 2
    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    app.setApplicationName("Pitcrew")
    app.setDesktopFileName("pitcrew")
    app.setQuitOnLastWindowClosed(False)
    app.setWindowIcon(QIcon(str(resources.icons_dir() / "pitcrew-256.png")))

    from pitcrew.desktop.single_instance import SingleInstance

    instance = SingleInstance()
    if not instance.claim(["show", page or "agents"]):
        print("pitcrew: already running; its dashboard was brought forward")
        return 0
    if not QSystemTrayIcon.isSystemTrayAvailable():
        print("pitcrew: no system tray found yet; the icon appears when one starts",
              file=sys.stderr)

    from pitcrew.desktop.shell import Shell

    shell = Shell(app, load_context(tmux_socket))
    instance.activated.connect(shell.activated)
    shell.start()
    print(f"pitcrew: tray icon up in {time.monotonic() - started:.2f}s", flush=True)
    if page:
        shell.open_dashboard(page, "")
    # Let Python see SIGINT/SIGTERM while Qt's loop runs, and quit cleanly on them.
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: QTimer.singleShot(0, shell.quit))
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
