"""The tray app as a user meets it: a real process on a real X display with a real tray host."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication, QSystemTrayIcon

from desktop.app import Tray, worst
from tests.support.tmux_server import TmuxServer
from tests.support.waiting import wait_until

pytestmark = pytest.mark.usefixtures("tray_host")


def _xdotool(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["xdotool", *args], capture_output=True, text=True)


def _icon_window() -> tuple[str, int, int] | None:
    """The embedded tray icon: a small `pitcrew` window the tray host has moved to x > 0."""
    for wid in _xdotool("search", "--class", "pitcrew").stdout.split():
        geo = dict(
            line.split("=", 1)
            for line in _xdotool("getwindowgeometry", "--shell", wid).stdout.split()
            if "=" in line
        )
        if geo and int(geo["WIDTH"]) <= 64 and int(geo["X"]) > 0:
            return wid, int(geo["X"]), int(geo["Y"])
    return None


def test_tray_icon_appears_menu_opens_and_quit_exits(tmp_path: Path) -> None:
    env = {**os.environ, "PITCREW_TMUX_SOCKET": "pitcrew-test-none"}
    proc = subprocess.Popen([sys.executable, "-m", "supervisor", "tray"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        _, x, y = wait_until(_icon_window, timeout=20, message="tray icon embedded")
        _xdotool("mousemove", str(x + 5), str(y + 5), "click", "3")
        wait_until(lambda: len(_xdotool("search", "--onlyvisible", "--class", "pitcrew")
                               .stdout.split()) >= 2, message="context menu shown")
        shot = tmp_path / "tray-menu.png"
        subprocess.run(["import", "-window", "root", str(shot)], check=True)
        assert shot.stat().st_size > 0
        _xdotool("key", "Up", "Return")   # the last item: Quit Pitcrew
        assert proc.wait(timeout=15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_menu_lists_each_agent_terminal_with_its_state(
    qtbot, tmux: TmuxServer, fake_provider_installed: Path
) -> None:
    pane = tmux.start("fakeagent")
    tmux.wait_for_text(pane, "fake>")
    app = QApplication.instance()
    assert QSystemTrayIcon.isSystemTrayAvailable()
    tray = Tray(app, tmux.name)
    try:
        qtbot.waitUntil(lambda: len(tray.terminals) == 1, timeout=15000)
        tray.rebuild_menu()
        texts = [a.text() for a in tray.menu.actions() if a.text()]
        assert any(t.startswith("Fake Agent · idle · ") for t in texts), texts
        assert texts[-1] == "Quit Pitcrew"
        assert tray.tray.toolTip() == "Pitcrew — 1 agent · all working"
        tmux.type(pane, "login")
        qtbot.waitUntil(lambda: tray.terminals and tray.terminals[0].state == "login_required",
                        timeout=15000)
        assert worst(tray.terminals) == "attention"
        assert "waiting on you" in tray.tray.toolTip()
    finally:
        tray.scanner.stop()
        tray.worker.quit()
        tray.worker.wait(5000)
        tray.tray.hide()
