"""The tray app end to end, as a user meets it: Xvfb with a real tray host, a real
notification daemon (dunst) on a private session bus, a real tmux server with the fake agent.

The app's shell runs in the test process (so its real widgets can be read); everything
around it is real: the agent crashes and is resumed in its pane, a login screen becomes a
real desktop notification whose buttons dunst shows.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication, QLabel

from pitcrew.desktop.shell import Shell
from pitcrew.supervisor.service.app_context import load_context
from tests.support.tmux_server import TmuxServer
from tests.test_notify import dunst_history, dunstctl, labels, press

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("tray_host")]


@pytest.fixture
def home(pitcrew_home: Path, fake_provider_installed: Path,
         monkeypatch: pytest.MonkeyPatch) -> Path:
    (pitcrew_home / "config.toml").write_text(
        "[watch]\npoll_interval = 0.5\n[autopilot]\nenabled = true\nquiet_after = 10\n")
    (pitcrew_home / "state.json").write_text(json.dumps({
        "version": 1, "consent": True, "paused": False, "terminals": {},
        "extra": {"consent_asked": True}}))
    monkeypatch.setenv("PITCREW_TEST_TIME_SCALE", "0.2")
    return pitcrew_home


def texts(widget) -> list[str]:
    return [label.text() for label in widget.findChildren(QLabel) if label.isVisibleTo(widget)]


def test_the_app_resumes_a_crashed_agent_and_notifies_a_login_screen(
    qtbot, tmux: TmuxServer, home: Path, notifications: dict[str, str]
) -> None:
    pane = tmux.start("fakeagent", cwd=home)
    tmux.wait_for_text(pane, "fake>")
    app = QApplication.instance()
    shell = Shell(app, load_context(tmux.name))
    shell.start()
    try:
        # the tray icon appears in the tray host
        qtbot.waitUntil(lambda: shell.tray.icon.isVisible()
                        and shell.tray.icon.geometry().width() > 0, timeout=20000)
        qtbot.waitUntil(lambda: [t.state for t in shell.host.latest.terminals] == ["idle"],
                        timeout=20000)
        # the agent crashes mid-task; Autopilot resumes it in its own pane
        pid = tmux.pane(pane).pid
        tmux.type(pane, "crash 3 1")
        qtbot.waitUntil(lambda: "Resumed" in [d.badge for d in shell.host.latest.decisions],
                        timeout=40000)
        assert tmux.pane(pane).pid != pid and not tmux.pane(pane).dead
        # asked once, and it went on (wait with Qt's loop running: the app's jobs run on it)
        qtbot.waitUntil(lambda: "Done: Continue from where" in tmux.screen(pane), timeout=15000)
        # Recent decisions on the Autopilot card shows it
        shell.open_dashboard("autopilot", "")
        dashboard = shell.dashboard
        qtbot.waitUntil(lambda: "Resumed" in texts(dashboard), timeout=10000)
        assert shell.host.latest.status_line.startswith("Watching. Acts only when")
        # a login screen: a real notification, with its buttons
        tmux.type(pane, "login")
        qtbot.waitUntil(lambda: dunstctl(notifications, "count", "displayed").strip() != "0",
                        timeout=40000)
        title = '"Fake Agent" is waiting on you'
        menu = press(notifications, "Snooze", title)      # dunst's menu, as a person sees it
        assert labels(menu) == ["", "Open terminal", "Resume now", "Snooze"]
        assert all(f"({title})" in line for line in menu)
        [shown] = [h for h in dunst_history(notifications) if h["summary"] == title]
        assert shown["appname"] == "Pitcrew" and "log in" in shown["body"]
        qtbot.waitUntil(lambda: "Waiting on you" in [d.badge
                                                     for d in shell.host.latest.decisions],
                        timeout=10000)
        assert tmux.screen(pane).count("Not logged in") == 1      # nothing was typed there
    finally:
        shell.host.stop()
        shell.tray.icon.hide()
        if shell.dashboard is not None:
            shell.dashboard.close()
