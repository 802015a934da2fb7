"""An incident belongs to one agent (SPEC §7 "Identity"), end to end: a decision made earlier
is checked against what runs now before it is carried out — across a restart of the tmux
server that reuses the pane id, and across a `kill -9` of Pitcrew itself."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from pitcrew.supervisor.core.recovery import CONTINUE_MESSAGE
from tests.e2e.test_autopilot_e2e import badges, rows
from tests.e2e.test_launch_styles_e2e import (
    SCRIPT,
    configure,
    prompts,
    resumed_process,
    session_file,
    shell_pane,
    toy_home,
    watch,
)
from tests.e2e.test_toy_autopilot_e2e import pitcrew
from tests.support.tmux_server import TmuxServer
from tests.support.waiting import wait_until

pytestmark = pytest.mark.e2e


@pytest.fixture
def home(pitcrew_home: Path) -> Path:
    return configure(pitcrew_home)


def crashed_and_waiting(tmux: TmuxServer, home: Path, pane: str) -> None:
    tmux.type(pane, "crash")
    tmux.wait_for_text(pane, "RuntimeError")
    wait_until(lambda: any(r.badge.value == "Scheduled" or r.trigger == "process exited"
                           for r in rows(home)) or _waiting(home), 10)


def killed_during_the_backoff(tmux: TmuxServer, home: Path, pane: str) -> None:
    """The agent crashes mid-task, and Pitcrew is `kill -9`'d during the 5 s wait."""
    w = watch(tmux, scale="1")
    try:
        w.wait_for(f"{pane}: idle")
        crashed_and_waiting(tmux, home, pane)
    finally:
        w.proc.kill()
        w.proc.wait()


def another_agent_after_a_server_restart(tmux: TmuxServer, w, pane: str, tmp_path: Path) -> str:
    """The tmux server is killed (the watcher notices) and a new one starts another agent, in
    another project, in a pane with the same id."""
    tmux.tmux.run("kill-server")
    w.wait_for("the tmux server", timeout=10)
    other = tmp_path / "other-project"
    other.mkdir()
    new_pane = tmux.start(f"env TOYAGENT_HOME={toy_home(tmux) / 'other'} {SCRIPT}",
                          cwd=other, keep_dead=False)
    assert new_pane == pane, "the new server reuses the pane id"
    tmux.wait_for_text(new_pane, "▸")
    return new_pane


def _waiting(home: Path) -> bool:

    state = home / "state.json"
    if not state.exists():
        return False
    data = json.loads(state.read_text())
    return any((t.get("incident") or {}).get("phase") == "waiting"
               for t in data.get("terminals", {}).values())


def test_a_restarted_tmux_server_that_reuses_the_pane_id_gets_nothing_typed(
        tmux: TmuxServer, home: Path, tmp_path: Path) -> None:
    pane, _ = shell_pane(tmux, "bash", tmp_path)
    w = watch(tmux, scale="1")               # the real 5 s before the first restart
    try:
        w.wait_for(f"{pane}: idle")
        crashed_and_waiting(tmux, home, pane)
        # the server goes away while a resume is pending
        new_pane = another_agent_after_a_server_restart(tmux, w, pane, tmp_path)
        w.wait_for("tmux server was restarted", timeout=10)
        time.sleep(6)                        # past the old incident's 5 s wait
    finally:
        assert w.stop() == 0
    screen = tmux.screen(new_pane)
    assert CONTINUE_MESSAGE[:20] not in screen and "--resume" not in screen
    skipped = [r for r in rows(home) if r.badge.value == "Skipped"]
    assert skipped and "tmux server was restarted" in skipped[0].reason
    assert "Resumed" not in badges(home)


def test_an_agent_restarted_by_hand_while_pitcrew_was_down_is_left_alone(
        tmux: TmuxServer, home: Path, tmp_path: Path) -> None:
    pane, shell_pid = shell_pane(tmux, "bash", tmp_path)
    killed_during_the_backoff(tmux, home, pane)
    old = session_file(tmux)
    tmux.type(pane, "toyagent")              # the user starts a new session by hand
    wait_until(lambda: tmux.screen(pane).count("toyagent 0.3.1 ·") == 2, 10)
    w = watch(tmux, scale="1")
    try:
        w.wait_for("started again by hand", timeout=10)
        time.sleep(6)
    finally:
        assert w.stop() == 0
    screen = tmux.screen(pane)
    assert "--resume" not in screen and CONTINUE_MESSAGE[:20] not in screen
    assert tmux.pane(pane).pid == shell_pid
    assert prompts(old) == ["crash"]
    assert "Resumed" not in badges(home)
    [skipped] = [r for r in rows(home) if r.badge.value == "Skipped"]
    assert "started again by hand" in skipped.reason


def test_a_shell_agent_whose_pitcrew_was_killed_during_the_backoff_is_resumed_once(
        tmux: TmuxServer, home: Path, tmp_path: Path) -> None:
    pane, shell_pid = shell_pane(tmux, "bash", tmp_path)
    killed_during_the_backoff(tmux, home, pane)
    sid = session_file(tmux).stem
    w = watch(tmux, scale="1")
    try:
        w.wait_for("picking up the open incident", timeout=10)
        resumed_process(tmux, pane, sid)
        wait_until(lambda: "Resumed" in badges(home), 15)
        time.sleep(3)
    finally:
        assert w.stop() == 0
    assert badges(home).count("Resumed") == 1
    assert tmux.screen(pane).count("--resume") == 1
    assert tmux.pane(pane).pid == shell_pid


def test_a_message_queued_before_a_tmux_restart_is_not_typed_into_the_new_pane(
        tmux: TmuxServer, home: Path, tmp_path: Path) -> None:
    """`pitcrew send` to a busy agent waits for its prompt. If the tmux server restarts
    meanwhile, the new server's pane with the same id is another agent: the message is
    dropped with a Skipped row, never typed there."""
    pane, _ = shell_pane(tmux, "bash", tmp_path)
    w = watch(tmux)
    try:
        w.wait_for(f"{pane}: idle")
        tmux.type(pane, "slow 300 a long job")
        w.wait_for(f"{pane}: busy")
        sent = pitcrew(tmux, "send", pane, "meant for the old agent")
        assert sent.returncode == 0, sent.stdout + sent.stderr
        w.wait_for("queued a message")
        new_pane = another_agent_after_a_server_restart(tmux, w, pane, tmp_path)
        w.wait_for(f"{pane}: idle", timeout=20)
        w.wait_for("not typed", timeout=30)
        time.sleep(2)
    finally:
        assert w.stop() == 0
    assert "meant for the old agent" not in tmux.screen(new_pane)
    skipped = [r for r in rows(home) if r.badge.value == "Skipped"]
    assert any(r.reason.startswith("did not type a queued message") for r in skipped)
    assert "Typed" not in badges(home)
