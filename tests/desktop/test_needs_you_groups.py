"""The dashboard's Agents page and the tray render the View's attention: groups Needs you /
Working / Done / Idle / Stopped (the oldest need first, with the waiting time), the tray's
count and its menu with the agents that need you first. Screenshots go to PITCREW_TEST_SHOTS
(or the test's folder)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint
from PySide6.QtWidgets import QApplication, QLabel
from pytestqt.qtbot import QtBot

from pitcrew.desktop.dashboard import Dashboard
from pitcrew.desktop.dashboard.agents import AgentRow
from pitcrew.desktop.tray import Tray
from pitcrew.supervisor.api.view import TerminalView, View

NOW = 1_750_000_000.0


def term(n: int, state: str, attention: str, since: float, why: str = "") -> TerminalView:
    minutes = (NOW - since) / 60
    return TerminalView(key=f"default:%{n}", target=f"work:{n}.0", provider="claude",
                        agent=("Claude Code", "Codex", "Gemini CLI")[n % 3],
                        project=f"/home/dev/proj{n}", state=state,
                        session_id=f"{n:08d}-aaaa-bbbb-cccc-dddddddddddd",
                        last_activity=NOW - 12 * n, timeline=((since, state),),
                        attention=attention, since=since, why=why or f"screen: {state}",
                        waiting=f"{minutes:.0f} min")


VIEW = View(mode="on", consent=True, consent_asked=True, at=NOW, terminals=(
    term(1, "busy", "working", NOW - 300),
    term(2, "question", "needs_you", NOW - 240,
         "screen: asks a question — Allow this command? 1. Yes 2. No"),
    term(3, "idle", "done", NOW - 120),
    term(4, "picker", "needs_you", NOW - 720, "screen: waits for a choice — Pick a model"),
    term(5, "idle", "idle", NOW - 3600),
    term(6, "exited", "stopped", NOW - 60, "process: the agent exited"),
    term(7, "busy", "working", NOW - 30),
))


def shots(tmp_path: Path) -> Path:
    out = Path(os.environ.get("PITCREW_TEST_SHOTS") or tmp_path / "shots")
    out.mkdir(parents=True, exist_ok=True)
    return out


def layout_order(dash: Dashboard) -> list[str]:
    """What the Agents page shows, top to bottom: headings and rows (by pane)."""
    box = dash.agents.rows_box
    out = []
    for i in range(box.count()):
        w = box.itemAt(i).widget()
        if isinstance(w, AgentRow) and w.isVisibleTo(dash):
            out.append(w.key.split(":")[1])
        elif isinstance(w, QLabel) and w.isVisibleTo(dash):
            out.append(w.text())
    return out


def test_the_agents_page_groups_rows_oldest_need_first(qtbot: QtBot, tmp_path: Path) -> None:
    dash = Dashboard(lambda c: None)
    qtbot.addWidget(dash)
    dash.resize(1180, 760)
    dash.show()
    qtbot.waitExposed(dash)
    dash.show_view(VIEW)
    dash.open_page("agents")
    assert layout_order(dash) == ["Needs you · 2", "%4", "%2", "Working · 2", "%1", "%7",
                                  "Done · 1", "%3", "Idle · 1", "%5", "Stopped · 1", "%6"]
    row = dash.agents.rows["default:%4"]
    assert row.waiting.text() == "waiting 12 min" and row.waiting.isVisibleTo(dash)
    assert "Pick a model" in row.state.toolTip()
    assert not dash.agents.rows["default:%1"].waiting.isVisibleTo(dash)
    assert dash.agents.summary.text() == "7 terminals · 2 working · 2 need you"
    QApplication.processEvents()
    dash.grab().save(str(shots(tmp_path) / "agents-grouped.png"))
    # a need answered: the group shrinks and the row moves, nothing else is rebuilt
    answered = View(**{**{f: getattr(VIEW, f) for f in ("mode", "consent", "at")},
                       "terminals": tuple(t if t.key != "default:%4" else
                                          term(4, "busy", "working", NOW)
                                          for t in VIEW.terminals)})
    dash.show_view(answered)
    assert layout_order(dash)[:4] == ["Needs you · 1", "%2", "Working · 3", "%1"]


@pytest.mark.usefixtures("tray_host")
def test_the_tray_counts_and_lists_the_agents_that_need_you_first(
        qtbot: QtBot, tmp_path: Path) -> None:
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    tray = Tray(app)
    tray.icon.show()
    tray.show_view(VIEW)
    assert tray.icon.toolTip().startswith("Pitcrew — 7 agents · 2 need you")
    assert not tray.icon.icon().isNull()
    tray.rebuild_menu()
    texts = [a.text() for a in tray.menu.actions() if a.text()]
    assert texts[1] == "Needs you (2)"
    assert texts[2].startswith("⚑ Codex · picker · /home/dev/proj4 · 12 min")
    assert texts[3].startswith("⚑ Gemini CLI · question · /home/dev/proj2 · 4 min")
    assert [t.split(" · ")[2] for t in texts[4:9]] == [
        "/home/dev/proj1", "/home/dev/proj7", "/home/dev/proj3", "/home/dev/proj5",
        "/home/dev/proj6"]
    tray.menu.popup(QPoint(200, 40))
    qtbot.waitUntil(tray.menu.isVisible, timeout=10000)
    qtbot.wait(300)
    subprocess.run(["import", "-window", "root", str(shots(tmp_path) / "tray-menu.png")],
                   check=False, timeout=30)
    tray.menu.hide()
    tray.icon.hide()
