"""The app's wiring with a real supervisor behind it: a click in the dashboard reaches the
supervisor, which writes config.toml and obeys; a notification click opens the dashboard."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication

from pitcrew.desktop.shell import Shell
from pitcrew.supervisor.adapters.notifier import Message
from pitcrew.supervisor.service.app_context import load_context
from tests.desktop.test_dashboard import click, click_when_modal
from tests.support.tmux_server import TmuxServer


@pytest.fixture
def shell(qtbot, tmux: TmuxServer, pitcrew_home: Path):
    app = QApplication.instance()
    s = Shell(app, load_context(tmux.name))
    s.start()
    qtbot.waitUntil(lambda: s.host.latest.server == tmux.name, timeout=15000)
    yield s
    s.host.stop()
    s.tray.icon.hide()
    if s.dashboard is not None:
        s.dashboard.close()


def config(home: Path) -> dict:
    path = home / "config.toml"
    return tomllib.loads(path.read_text()) if path.exists() else {}


def test_turning_autopilot_on_in_the_dashboard_writes_the_setting_and_the_supervisor_obeys(
    qtbot, shell: Shell, pitcrew_home: Path
) -> None:
    shell.open_dashboard("autopilot", "")
    card = shell.dashboard.diagnosis.autopilot
    assert card.status.text() == "Off."
    seen = click_when_modal(qtbot, "consent_allow")       # the first time: consent
    click(qtbot, card.switch)
    qtbot.waitUntil(lambda: bool(seen), timeout=10000)
    qtbot.waitUntil(lambda: shell.host.latest.mode == "on" and shell.host.latest.consent_asked,
                    timeout=10000)
    assert config(pitcrew_home)["autopilot"]["enabled"] is True
    assert card.switch.isChecked()
    assert card.status.text().startswith("Watching. Acts only when a running task goes quiet")
    state = json.loads((pitcrew_home / "state.json").read_text())
    assert state["consent"] is True and state["extra"]["consent_asked"] is True
    click(qtbot, card.pause)
    qtbot.waitUntil(lambda: shell.host.latest.mode == "paused", timeout=10000)
    assert card.status.text() == "Paused"
    assert json.loads((pitcrew_home / "state.json").read_text())["paused"] is True


def test_declining_consent_leaves_autopilot_off(qtbot, shell: Shell, pitcrew_home: Path) -> None:
    shell.open_dashboard("autopilot", "")
    seen = click_when_modal(qtbot, "consent_not_now")
    click(qtbot, shell.dashboard.diagnosis.autopilot.switch)
    qtbot.waitUntil(lambda: bool(seen), timeout=10000)
    qtbot.waitUntil(lambda: shell.host.latest.consent_asked, timeout=10000)
    assert shell.host.latest.mode == "off" and not shell.host.latest.consent
    assert config(pitcrew_home).get("autopilot", {}).get("enabled") is not True


def test_off_for_this_launch_changes_no_setting(
    qtbot, tmux: TmuxServer, pitcrew_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (pitcrew_home / "config.toml").write_text("[autopilot]\nenabled = true\n")
    before = (pitcrew_home / "config.toml").read_text()
    monkeypatch.setenv("PITCREW_AUTOPILOT", "off")
    s = Shell(QApplication.instance(), load_context(tmux.name))
    s.start()
    try:
        qtbot.waitUntil(lambda: s.host.latest.off_for_launch, timeout=15000)
        s.open_dashboard("autopilot", "")
        card = s.dashboard.diagnosis.autopilot
        assert card.status.text() == "Off for this launch."
        assert not card.switch.isEnabled() and not card.pause.isEnabled()
        assert s.host.latest.mode == "off"
    finally:
        s.host.stop()
        s.tray.icon.hide()
        s.dashboard.close()
    assert (pitcrew_home / "config.toml").read_text() == before


def test_clicking_a_notification_opens_the_dashboard_on_its_terminal(
    qtbot, shell: Shell
) -> None:
    shell._from_notifier("clicked", Message("t", "b", "k", terminal="x:%7"))
    qtbot.waitUntil(lambda: shell.dashboard is not None and shell.dashboard.isVisible(),
                    timeout=10000)
