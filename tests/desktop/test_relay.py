"""The tray app beside a running `pitcrew watch`: it shows the watcher's own world, live.

Everything is real: a tmux server on a private socket with two fake agents, a `pitcrew watch`
process supervising them (Autopilot on, consent given), and the app's shell with its real
tray, menu and dashboard on Xvfb. The app cannot take the supervisor lock, so it only relays;
what it shows must be what the watcher sees.

Set PITCREW_TEST_SHOTS=<folder> to keep screenshots of the relaying menu and dashboard.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint
from PySide6.QtWidgets import QApplication, QWidget

from pitcrew.desktop.dashboard.diagnosis import HAS_CONSENT, NO_CONSENT
from pitcrew.desktop.shell import Shell
from pitcrew.supervisor.api import view_file
from pitcrew.supervisor.api.view import View
from pitcrew.supervisor.service.app_context import load_context
from tests.cli.test_autopilot_cli import pitcrew
from tests.support.proc import Running
from tests.support.tmux_server import TmuxServer

pytestmark = pytest.mark.usefixtures("tray_host")


@pytest.fixture
def home(pitcrew_home: Path, fake_provider_installed: Path) -> Path:
    (pitcrew_home / "config.toml").write_text(
        "[watch]\npoll_interval = 0.5\n[autopilot]\nenabled = true\n")
    (pitcrew_home / "state.json").write_text(json.dumps({
        "version": 1, "consent": True, "paused": False, "terminals": {},
        "extra": {"consent_asked": True}}))
    return pitcrew_home


def shoot(widget: QWidget, shots: Path, name: str) -> None:
    QApplication.processEvents()
    widget.grab().save(str(shots / f"{name}.png"))


def screen(shots: Path, name: str) -> None:
    """The whole display, as a person would see it (a popup menu is its own window)."""
    QApplication.processEvents()
    subprocess.run(["import", "-window", "root", str(shots / f"{name}.png")], check=False,
                   timeout=30)


def test_the_app_beside_a_running_watcher_shows_the_watchers_agents_autopilot_and_consent(
    qtbot, tmux: TmuxServer, home: Path, tmp_path: Path
) -> None:
    shots = Path(os.environ.get("PITCREW_TEST_SHOTS") or tmp_path / "shots")
    shots.mkdir(parents=True, exist_ok=True)
    panes = [tmux.start("fakeagent", cwd=tmp_path) for _ in range(2)]
    for pane in panes:
        tmux.wait_for_text(pane, "fake>")
    watch = Running(["watch"], env={"PITCREW_TMUX_SOCKET": tmux.name})
    shell: Shell | None = None
    try:
        for pane in panes:
            watch.wait_for(f"{pane}: idle")
        shell = Shell(QApplication.instance(), load_context(tmux.name))
        shell.start()
        host, tray = shell.host, shell.tray
        assert host.holder is not None and "pitcrew watch" in host.holder   # it only relays

        # what the user sees: the watcher's two agents, Autopilot on, consent given
        qtbot.waitUntil(lambda: len(host.latest.terminals) == 2, timeout=20000)
        qtbot.waitUntil(lambda: tray.icon.toolTip().splitlines() == [    # the tray, as seen
            "Pitcrew — 2 agents · nothing needs you · Autopilot on",
            f"Shown from {host.holder}; your changes are relayed to it"], timeout=5000)
        tray.rebuild_menu()
        items = [a.text() for a in tray.menu.actions() if a.text()]
        assert items[0].endswith("— 2 agents · nothing needs you · Autopilot on")
        assert sum(t.startswith("Fake Agent · idle · ") for t in items) == 2, items
        checked = [a.text() for a in tray.menu.actions() if a.isCheckable() and a.isChecked()]
        assert "Autopilot On" in checked
        shell.open_dashboard("agents", "")
        dash = shell.dashboard
        qtbot.waitUntil(lambda: len(dash.agents.rows) == 2, timeout=10000)
        assert dash.agents.summary.text() == "2 terminals · 0 working"
        assert dash.agents.relay.isVisible() and "pitcrew watch" in dash.agents.relay.text()
        dash.resize(1200, 760)
        shoot(dash, shots, "relay-dashboard-agents")
        dash.open_page("diagnosis")
        assert dash.diagnosis.consent_line.text() == HAS_CONSENT != NO_CONSENT
        assert dash.diagnosis.autopilot.isVisible()
        shoot(dash, shots, "relay-dashboard-diagnosis")
        dash.hide()
        tray.menu.popup(QPoint(40, 40))
        qtbot.waitUntil(tray.menu.isVisible, timeout=5000)
        shoot(tray.menu, shots, "relay-tray-menu")
        screen(shots, "relay-screen-with-menu")
        tray.menu.hide()

        # live: the user's own `pitcrew send` reaches the watcher and shows up marked "You"
        out = pitcrew("send", tmux.pane(panes[0]).target, "say hello there",
                      env={"PITCREW_TMUX_SOCKET": tmux.name})
        assert out.returncode == 0, out.stderr
        qtbot.waitUntil(lambda: any(d.badge == "Typed" for d in host.latest.activity),
                        timeout=20000)
        dash.open_page("activity")
        qtbot.waitUntil(lambda: bool(dash.activity.card_widgets()), timeout=5000)
        card = dash.activity.card_widgets()[0]
        assert (card.badge.text(), card.mark.text()) == ("Typed", "You")
        shoot(dash, shots, "relay-dashboard-activity")

        # live both ways: Pause from the relaying tray pauses the watcher, and the app shows it
        qtbot.waitUntil(lambda: "Done: say hello there" in tmux.screen(panes[0]), timeout=20000)
        qtbot.waitUntil(lambda: {t.state for t in host.latest.terminals} == {"idle"},
                        timeout=20000)        # the message was answered, and the app shows it
        shell.set_autopilot("pause")
        qtbot.waitUntil(lambda: host.latest.mode == "paused", timeout=20000)
        qtbot.waitUntil(lambda: tray.icon.toolTip().splitlines()[0]
                        == "Pitcrew — 2 agents · Autopilot paused", timeout=5000)
        assert pitcrew("autopilot", "status", env={"PITCREW_TMUX_SOCKET": tmux.name}
                       ).stdout.startswith("Autopilot: Paused")

        # the watcher stops: no view of a supervisor that is gone is left, and the app
        # supervises the agents itself from then on
        assert watch.stop() == 0
        assert not view_file.path_in(home).exists()
        qtbot.waitUntil(lambda: host.holder is None and not host.latest.relay
                        and len(host.latest.terminals) == 2, timeout=30000)
        assert host.latest.mode == "paused"        # the pause the watcher saved holds
        qtbot.waitUntil(lambda: tray.icon.toolTip() == "Pitcrew — 2 agents · Autopilot paused",
                        timeout=10000)
    finally:
        watch.stop()
        if shell is not None:
            shell.host.stop()
            shell.tray.icon.hide()
            if shell.dashboard is not None:
                shell.dashboard.close()


def test_a_published_view_reads_back_equal(tmp_path: Path) -> None:
    from tests.desktop.test_dashboard import decision, make_view, terminal, with_checkers

    view = with_checkers(make_view(
        terminals=(terminal(1, timeline=((1.0, "busy"), (2.0, "idle"))), terminal(2)),
        decisions=(decision(0),), activity=(decision(0), decision(1, "Diagnosed")),
        mode="on", problems=("config.toml: something",)), "claude", "codex:gpt-5")
    view_file.write(tmp_path / "view.json", view, pid=42)
    published = view_file.read(tmp_path / "view.json")
    assert published is not None and published.pid == 42
    assert published.view == view
    (tmp_path / "view.json").write_text('{"version": 1, "pid": 1, "view": {"terminals": 3}}')
    assert view_file.read(tmp_path / "view.json") is None
    assert view_file.read(tmp_path / "missing.json") is None
    assert View() == view_file.from_json(view_file.to_json(View()))


def test_an_old_view_is_said_to_be_old_and_the_app_takes_over_when_the_holder_goes(
    qtbot, pitcrew_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The holder here is this test (the lock is per open file): it publishes one view, then
    stops refreshing it, then lets the lock go."""
    from pitcrew.desktop import host as host_mod
    from pitcrew.desktop.host import SupervisorHost
    from pitcrew.supervisor.adapters.notifier import Gate
    from pitcrew.supervisor.store.lock import SupervisorLock
    from tests.desktop.test_dashboard import make_view, terminal

    monkeypatch.setattr(host_mod, "STALE_AFTER", 1.5)
    monkeypatch.setattr(host_mod, "TAKE_OVER_EVERY", 0.5)
    watcher = SupervisorLock(pitcrew_home / "supervisor.lock")
    assert watcher.acquire("pitcrew watch") is None
    published = view_file.path_in(pitcrew_home)
    # one left by a supervisor that died (another pid) is never shown as the holder's
    view_file.write(published, make_view(terminals=(terminal(7), terminal(8))), pid=1)
    host = SupervisorHost(load_context("pitcrew-test-no-server"), lambda: Gate([]))
    try:
        assert not host.start()
        qtbot.wait(1000)
        assert host.latest.terminals == () and host.latest.status_line == "Waiting for its view."
        view_file.write(published, make_view(terminals=(terminal(1),), mode="on"))
        qtbot.waitUntil(lambda: len(host.latest.terminals) == 1, timeout=5000)
        assert host.latest.mode == "on" and host.latest.relay.startswith(f"pid {os.getpid()} ")
        qtbot.waitUntil(lambda: any("has not updated its view for 2 s" in p
                                    for p in host.latest.problems), timeout=5000)
        watcher.release()             # the watcher stopped: this app supervises from now on
        qtbot.waitUntil(lambda: host.holder is None and host.latest.relay == ""
                        and host.latest.at > 0, timeout=15000)
        assert host.latest.terminals == ()     # its own view: no tmux server here
    finally:
        host.stop()
        watcher.release()


def test_a_disk_that_refuses_the_view_is_said_once_and_never_stops_the_watcher(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, "pitcrew")
    blocker = tmp_path / "data"
    blocker.write_text("a file where the data folder should be")   # every write fails
    folder = blocker / "pitcrew"
    publish = view_file.Publisher(folder)
    for _ in range(3):
        publish(View(mode="on"))
    said = [r.getMessage() for r in caplog.records if "cannot publish" in r.getMessage()]
    assert said == [f"cannot publish the view for a tray app in {folder}: Not a directory"]
    blocker.unlink()
    publish(View(mode="on"))
    assert "the view for a tray app is published again" in caplog.text
    published = view_file.read(view_file.path_in(folder))
    assert published is not None and published.view.mode == "on"
