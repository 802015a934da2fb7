"""Task timeouts and stuck loops end to end: `pitcrew watch` against the fake agent in a real
tmux pane, at a tenth of real time. What a user sees: the ledger rows, the notification lines
`pitcrew watch` prints, and that the agent itself keeps running."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.e2e.test_autopilot_e2e import (
    SCALE,
    badges,
    rows,
    session_records,
    start_agent,
    wait_badges,
)
from tests.support.proc import Running
from tests.support.tmux_server import TmuxServer
from tests.support.waiting import wait_until

pytestmark = pytest.mark.e2e


@pytest.fixture
def home(pitcrew_home: Path, fake_provider_installed: Path) -> Path:
    return pitcrew_home


def configure(home: Path, timeouts: str) -> None:
    (home / "config.toml").write_text(
        "[watch]\npoll_interval = 0.5\n[autopilot]\nenabled = true\n"
        f"[timeouts]\n{timeouts}\n")


def tool_calls(tmux: TmuxServer) -> list[dict]:
    return [r for r in session_records(tmux) if r.get("type") == "tool"]


def watch(tmux: TmuxServer) -> Running:
    w = Running(["watch"], env={"PITCREW_TMUX_SOCKET": tmux.name,
                                "PITCREW_TEST_TIME_SCALE": SCALE})
    w.wait_for("Autopilot: Watching.")
    tmux.wait_watched()
    return w


def test_a_long_task_gets_a_soft_timeout_notification_and_keeps_running(
    tmux: TmuxServer, home: Path, tmp_path: Path
) -> None:
    configure(home, "soft = 20\nhard = false")          # 20 s, scaled: 2 s
    pane = start_agent(tmux, tmp_path)
    w = watch(tmux)
    try:
        w.wait_for(f"{pane}: idle")
        tmux.type(pane, "work 5")
        [row] = wait_badges(home, "Timed out")
        w.wait_for('needs you: "Fake Agent" has been running for')
        tmux.wait_for_text(pane, "● Done: work 5", timeout=15)   # nothing stopped it
        time.sleep(1)
    finally:
        w.stop()
    assert row.trigger == "soft timeout" and row.reason.startswith("running for ")
    assert row.readings["timeout"] == "soft" and row.prompt == "work 5"
    assert badges(home) == ["Timed out"]                # once, and nothing typed into it
    assert "Finish the current step" not in tmux.screen(pane)


def test_a_task_past_its_hard_timeout_is_held_and_its_crash_is_not_resumed(
    tmux: TmuxServer, home: Path, tmp_path: Path
) -> None:
    configure(home, "soft = false\nhard = 30")          # 30 s, scaled: 3 s
    pane = start_agent(tmux, tmp_path)
    pid = tmux.pane(pane).pid
    w = watch(tmux)
    try:
        w.wait_for(f"{pane}: idle")
        tmux.type(pane, "crash 1 5")                    # works 5 s, then crashes
        [row] = wait_badges(home, "Timed out")
        w.wait_for('needs you: "Fake Agent" is waiting on you')
        assert tmux.pane(pane).pid == pid               # the agent was not killed
        tmux.wait_for_text(pane, "fatal: simulated crash", timeout=15)
        time.sleep(2)                                   # a resume would come within 0.5 s
        status = subprocess.run([sys.executable, "-m", "pitcrew.supervisor", "autopilot",
                                 "status"], env={**os.environ, "PITCREW_TMUX_SOCKET": tmux.name},
                                capture_output=True, text=True, timeout=60, check=True).stdout
    finally:
        w.stop()
    assert row.trigger == "hard timeout" and "past the hard limit" in row.reason
    assert row.readings["timeout"] == "hard" and row.readings["notified"] is True
    assert badges(home) == ["Timed out"]                # no Scheduled, no Resumed
    assert "Waiting on you: it ran past the hard time limit" in status


def test_a_dead_stream_behind_a_live_spinner_is_noticed(
    tmux: TmuxServer, home: Path, tmp_path: Path
) -> None:
    """`stall` keeps the spinner and timer moving but the token count frozen: that is no
    progress, so the idle timeout has the screen diagnosed; `work` (tokens growing) is not."""
    configure(home, "idle = 10\nsoft = false\nhard = false")   # 10 s, scaled: 1 s
    pane = start_agent(tmux, tmp_path)
    w = watch(tmux)
    try:
        w.wait_for(f"{pane}: idle")
        tmux.type(pane, "work 4")
        tmux.wait_for_text(pane, "● Done: work 4", timeout=15)
        assert not w.saw("diagnosed")
        tmux.type(pane, "stall")
        diagnosed = wait_badges(home, "Diagnosed")[0]
    finally:
        w.stop()
    assert diagnosed.trigger == "task went quiet" and diagnosed.prompt == "stall"


def test_a_tool_loop_is_diagnosed_once_then_held_with_what_it_repeated(
    tmux: TmuxServer, home: Path, tmp_path: Path
) -> None:
    configure(home, "soft = false\nhard = false")
    pane = start_agent(tmux, tmp_path)
    w = watch(tmux)
    try:
        w.wait_for(f"{pane}: idle")
        tmux.type(pane, "toolfix")                      # a legitimate edit–test–fix: no loop
        tmux.wait_for_text(pane, "● Done: toolfix", timeout=15)
        time.sleep(2.5)                                 # one more look at its transcript
        assert badges(home) == []
        tmux.type(pane, "toolloop 60")                  # 60 × 0.4 s: it outlasts the test
        diagnosed, first, held = wait_badges(home, "Diagnosed", "Looping", "Looping",
                                             timeout=60)
        w.wait_for('needs you: "Fake Agent" is waiting on you')
        calls = len(tool_calls(tmux))
        wait_until(lambda: len(tool_calls(tmux)) > calls, 10,
                   message="the held agent to go on (it is not killed)")
        tmux.tmux.send_keys(pane, "Escape")             # stop it, as a person would
        time.sleep(1)
    finally:
        w.stop()
    assert diagnosed.trigger == "stuck in a loop"
    assert str(diagnosed.readings["loop"]).startswith("Bash: pytest -q (error) ×")
    assert first.reason.startswith("repeats Bash: pytest -q (error) ×")
    assert held.readings["persists"] is True and "kept repeating Bash: pytest -q" in held.reason
    assert [r.badge.value for r in rows(home)].count("Diagnosed") == 1
    assert w.saw("kept repeating Bash: pytest -q (error)")
