"""The tray app as a user meets it: a real process on a real X display with a real tray host."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication, QSystemTrayIcon

from pitcrew.desktop.host import SupervisorHost
from pitcrew.desktop.tray import Tray, worst
from pitcrew.supervisor.adapters.notifier import Gate
from pitcrew.supervisor.api.view import TerminalView, View
from pitcrew.supervisor.service.app_context import load_context
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


def test_tray_icon_appears_menu_opens_and_quit_exits(tmp_path: Path, pitcrew_home: Path) -> None:
    env = {**os.environ, "PITCREW_TMUX_SOCKET": "pitcrew-test-none"}
    proc = subprocess.Popen([sys.executable, "-m", "pitcrew.supervisor", "tray"], env=env,
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
    """The tray renders the hosted supervisor's views: a fake agent in a real pane."""
    pane = tmux.start("fakeagent")
    tmux.wait_for_text(pane, "fake>")
    app = QApplication.instance()
    assert QSystemTrayIcon.isSystemTrayAvailable()
    host = SupervisorHost(load_context(tmux.name), lambda: Gate([]))
    tray = Tray(app)
    host.view_changed.connect(tray.show_view)
    assert host.start()
    try:
        qtbot.waitUntil(lambda: len(tray.view.terminals) == 1
                        and tray.view.terminals[0].state == "idle", timeout=15000)
        tray.rebuild_menu()
        texts = [a.text() for a in tray.menu.actions() if a.text()]
        assert any(t.startswith("Fake Agent · idle · ") for t in texts), texts
        assert "Autopilot Off" in texts and texts[-1] == "Quit Pitcrew"
        assert tray.icon.toolTip() == "Pitcrew — 1 agent · nothing needs you · Autopilot off"
        tmux.type(pane, "login")
        qtbot.waitUntil(lambda: tray.view.terminals[0].state == "login_required",
                        timeout=15000)
        assert worst(tray.view) == "attention"
        # the needs-you count follows within the watcher's next attention pass (about 1 s)
        qtbot.waitUntil(lambda: "· 1 needs you ·" in tray.icon.toolTip(), timeout=15000)
    finally:
        host.stop()
        tray.icon.hide()


def test_the_worst_state_wins_and_pause_shows() -> None:
    def term(state: str) -> TerminalView:
        return TerminalView("s:%1", "w:1.0", "claude", "Claude Code", "/p", state, None, None,
                            ())

    assert worst(View(terminals=(term("busy"), term("idle")))) == "ok"
    assert worst(View(terminals=(term("busy"), term("question")))) == "attention"
    assert worst(View(terminals=(term("question"), term("crashed")))) == "stuck"
    assert worst(View(mode="paused", terminals=(term("busy"),))) == "paused"
    assert worst(View(mode="paused", terminals=(term("picker"),))) == "attention"
