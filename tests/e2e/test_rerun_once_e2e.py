"""`pitcrew rerun` is one rerun at a time, and never a silent half (issue 21 item 8), end to
end: the real `pitcrew watch`, a real tmux server, the toy CLI declared from the README,
started from bash. What a user sees: how many new agents run, what each was sent, and the
ledger's rows.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.e2e.test_autopilot_e2e import rows, watch
from tests.e2e.test_launch_styles_e2e import agents_in, configure, shell_pane
from tests.e2e.test_rerun_e2e import ask, rerun, sessions
from tests.support.tmux_server import TmuxServer
from tests.support.waiting import wait_until

pytestmark = pytest.mark.e2e


@pytest.fixture
def home(pitcrew_home: Path) -> Path:
    configure(pitcrew_home)
    (pitcrew_home / "config.toml").write_text("[autopilot]\nenabled = true\nquiet_after = 600\n")
    return pitcrew_home


def new_windows(tmux: TmuxServer, pane: str) -> list[str]:
    return [p.pane_id for p in tmux.tmux.list_panes()
            if p.window_name.startswith("rerun-") and p.pane_id != pane]


def test_two_reruns_of_a_busy_agent_start_one_new_agent(
        tmux: TmuxServer, home: Path, tmp_path: Path) -> None:
    pane, _ = shell_pane(tmux, "bash", tmp_path)
    w = watch(tmux)
    try:
        w.wait_for(f"{pane}: idle")
        ask(tmux, w, pane, "slow 300 task-A")
        w.wait_for(f"{pane}: busy")
        first, second = rerun(tmux, pane), rerun(tmux, pane)     # a double click
        assert first.returncode == 0 and second.returncode == 0
        wait_until(lambda: [r.badge.value for r in rows(home)].count("Skipped") == 1, 30,
                   message=lambda: str(rows(home)))
        wait_until(lambda: len(sessions(tmux)) == 2, 30, message=lambda: str(sessions(tmux)))
        # the Rerun row names the new session: written once the watcher has attributed it
        wait_until(lambda: [r.badge.value for r in rows(home)].count("Rerun") >= 1, 30,
                   message=lambda: str(rows(home)))
        time.sleep(2)                    # a second agent or row would show by now
    finally:
        w.stop()
    assert len(new_windows(tmux, pane)) == 1, "one new agent, not two"
    assert sorted(len(p) for p in sessions(tmux).values()) == [1, 1]
    assert all(p == ["slow 300 task-A"] for p in sessions(tmux).values())
    [skipped] = [r for r in rows(home) if r.badge.value == "Skipped"]
    assert "a rerun of this terminal is under way" in skipped.reason
    assert [r.badge.value for r in rows(home)].count("Rerun") == 1


def test_a_rerun_after_the_task_finished_sends_that_task_again_and_says_so(
        tmux: TmuxServer, home: Path, tmp_path: Path) -> None:
    pane, _ = shell_pane(tmux, "bash", tmp_path)
    w = watch(tmux)
    try:
        w.wait_for(f"{pane}: idle")
        ask(tmux, w, pane, "slow 3 task-B")
        w.wait_for(f"{pane}: busy")
        tmux.wait_for_text(pane, "◇ done: slow 3 task-B")
        w.wait_for(f"{pane}: idle (was busy)")
        [old] = sessions(tmux)
        done = rerun(tmux, pane)
        assert done.returncode == 0, done.stderr
        row = wait_until(lambda: next((r for r in rows(home) if r.badge.value == "Rerun"),
                                      None), 30, message=lambda: str(rows(home)))
        wait_until(lambda: len(sessions(tmux)) == 2, 30, message=lambda: str(sessions(tmux)))
    finally:
        w.stop()
    [new] = set(sessions(tmux)) - {old}
    assert sessions(tmux)[new] == ["slow 3 task-B"]      # the task, as the user typed it
    assert row.prompt == "slow 3 task-B" and "the prompt is sent again" in row.reason
    assert len(agents_in(tmux, pane)) == 1               # the idle agent was left alone
