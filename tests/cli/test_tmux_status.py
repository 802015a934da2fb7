"""`pitcrew tmux-status` reads the watcher's published view, quickly, and `pitcrew status`
carries each terminal's attention from it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from pitcrew.supervisor.api import view_file
from pitcrew.supervisor.api.view import TerminalView, View
from pitcrew.supervisor.cli.tmux_status import segment
from tests.cli.test_cold_start import HEAVY, heavy, loaded


def term(key: str, attention: str) -> TerminalView:
    return TerminalView(key=key, target="w:1.0", provider="fakeagent", agent="Fake Agent",
                        project="/p", state="idle", session_id=None, last_activity=None,
                        timeline=(), attention=attention, since=1.0)


def run(*args: str) -> str:
    out = subprocess.run([sys.executable, "-m", "pitcrew.supervisor", *args],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_the_segment_counts_needs_and_work_and_leaves_zeros_out() -> None:
    rows = [{"attention": a} for a in ("needs_you", "working", "needs_you", "idle", "done")]
    assert segment(rows) == "⚑2 ⟳1"
    assert segment([{"attention": "working"}]) == "⟳1"
    assert segment([{"attention": "idle"}]) == ""


def test_no_watcher_no_output(pitcrew_home: Path) -> None:
    assert run("tmux-status") == ""


def test_the_running_watchers_view_is_counted(pitcrew_home: Path) -> None:
    view = View(terminals=(term("s:%1", "needs_you"), term("s:%2", "needs_you"),
                           term("s:%3", "working")))
    view_file.write(view_file.path_in(pitcrew_home), view)       # this process: running
    assert run("tmux-status") == "⚑2 ⟳1\n"


def test_a_view_left_by_a_watcher_that_is_gone_is_no_view(pitcrew_home: Path) -> None:
    view = View(terminals=(term("s:%1", "needs_you"),))
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    view_file.write(view_file.path_in(pitcrew_home), view, pid=dead.pid)
    assert run("tmux-status") == ""


def test_tmux_status_loads_no_service_api_qt_or_psutil(pitcrew_home: Path) -> None:
    modules, stdout = loaded("tmux-status")
    assert stdout == ""
    assert "pitcrew.supervisor.cli.published" in modules      # the check sees the command
    assert heavy(modules, (*HEAVY, "pitcrew.supervisor.adapters",
                           "pitcrew.supervisor.cli.commands")) == []
