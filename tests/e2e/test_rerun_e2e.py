"""`pitcrew rerun`, end to end: the real `pitcrew watch`, a real tmux server, the toy CLI
declared from the README. A rerun starts the same CLI in a FRESH session (never `--resume`)
and sends the task's prompt again, once: at the same shell when the agent there has exited,
in a new window when it still runs (the old one is left running). The ledger's Rerun row
names both sessions."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from tests.e2e.test_autopilot_e2e import rows, watch
from tests.e2e.test_launch_styles_e2e import (
    agents_in,
    configure,
    prompts,
    shell_pane,
    toy_home,
)
from tests.support.tmux_server import TmuxServer
from tests.support.waiting import wait_until

pytestmark = pytest.mark.e2e


@pytest.fixture
def home(pitcrew_home: Path) -> Path:
    return configure(pitcrew_home)


def rerun(tmux: TmuxServer, ref: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pitcrew.supervisor", "rerun", ref],
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PITCREW_TMUX_SOCKET": tmux.name})


def sessions(tmux: TmuxServer) -> dict[str, list[str]]:
    """Each toy session file's id → the prompts it received."""
    return {p.stem: prompts(p) for p in toy_home(tmux).rglob("*.jsonl")}


def ask(tmux: TmuxServer, w, pane: str, prompt: str) -> None:
    """Type a prompt as a person does: the text first (the watcher sees it on the input
    row), then Enter."""
    tmux.type(pane, prompt, enter=False)
    w.wait_for(f"{pane}: unknown (was idle)")   # typed text: no `input` rule names it
    tmux.type(pane, "")


def rerun_row(home: Path, w):
    return wait_until(lambda: next((r for r in rows(home) if r.badge.value == "Rerun"), None),
                      30, message=lambda: f"a Rerun row in {rows(home)}; watcher said:\n"
                      + "\n".join(w.lines))


def test_an_exited_agent_is_rerun_at_its_shell_in_a_fresh_session_with_its_prompt(
        tmux: TmuxServer, home: Path, tmp_path: Path) -> None:
    pane, shell_pid = shell_pane(tmux, "bash", tmp_path)
    w = watch(tmux, scale="6")       # the first resume waits 30 s: the rerun comes first
    try:
        w.wait_for(f"{pane}: idle")
        ask(tmux, w, pane, "slow 30 refactor the parser")
        tmux.wait_for_text(pane, "esc to interrupt")
        [old] = sessions(tmux)
        [agent] = agents_in(tmux, pane)
        os.kill(agent.pid, signal.SIGKILL)             # the agent dies mid-task …
        wait_until(lambda: "Scheduled" in [r.badge.value for r in rows(home)], 15,
                   message=lambda: str(rows(home)))     # … a crash: its resume is set
        done = rerun(tmux, pane)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "fresh session" in done.stdout
        row = rerun_row(home, w)
        tmux.wait_for_text(pane, "working")
    finally:
        w.stop()
    found = sessions(tmux)
    [new] = set(found) - {old}
    assert found[new] == ["slow 30 refactor the parser"]           # sent again, once
    assert (row.readings["old_session"], row.readings["new_session"]) == (old, new)
    assert tmux.pane(pane).pid == shell_pid                          # the same shell
    [again] = agents_in(tmux, pane)
    assert "--resume" not in again.cmdline() and "--last" not in again.cmdline()
    assert "Resumed" not in [r.badge.value for r in rows(home)]     # the old wait is void


def test_a_running_agent_is_left_alone_and_rerun_in_a_new_window(
        tmux: TmuxServer, home: Path, tmp_path: Path) -> None:
    pane, _ = shell_pane(tmux, "bash", tmp_path)
    w = watch(tmux)
    try:
        w.wait_for(f"{pane}: idle")
        ask(tmux, w, pane, "slow 300 write the migration")
        tmux.wait_for_text(pane, "esc to interrupt")
        w.wait_for(f"{pane}: busy")
        [old] = sessions(tmux)
        [running] = agents_in(tmux, pane)
        done = rerun(tmux, tmux.pane(pane).target)                # by session:window.pane
        assert done.returncode == 0, done.stdout + done.stderr
        row = rerun_row(home, w)
    finally:
        w.stop()
    new_pane = row.readings["pane"]
    assert new_pane != pane and row.readings["where"].startswith("a new window")
    assert running.is_running() and running.status() != psutil.STATUS_ZOMBIE   # not killed
    found = sessions(tmux)
    new = row.readings["new_session"]
    assert new != old and found[new] == ["slow 300 write the migration"]
    assert found[old] == ["slow 300 write the migration"]                       # untouched


def test_rerun_of_a_terminal_that_is_not_there_says_so(tmux: TmuxServer, home: Path) -> None:
    tmux.start("sleep 60")
    done = rerun(tmux, "%77")
    assert done.returncode != 0 and "nothing rerun" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (home / "commands.jsonl").exists() or "rerun" not in (
        home / "commands.jsonl").read_text()


def test_rerun_without_a_running_watcher_queues_nothing(tmux: TmuxServer, home: Path,
                                                        tmp_path: Path) -> None:
    pane, _ = shell_pane(tmux, "bash", tmp_path)
    done = rerun(tmux, pane)
    assert done.returncode != 0 and "no Pitcrew watcher is running" in done.stderr
    spool = home / "commands.jsonl"
    assert not spool.exists() or not [json.loads(x) for x in spool.read_text().splitlines()
                                      if "rerun" in x]
