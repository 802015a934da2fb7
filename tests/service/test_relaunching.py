"""Relaunching in the launch style the agent was started in, over fakes (SPEC §7)."""

from __future__ import annotations

import dataclasses
import datetime as dt

from pitcrew.supervisor.adapters.processes import LaunchContext, LaunchStyle
from pitcrew.supervisor.core.screen import ScreenState
from pitcrew.supervisor.service.relaunching import Outcome
from pitcrew.supervisor.service.watched import since
from tests.service.fakes import AGENT_PID, Rig, make_pane, relaunch

NOW = dt.datetime(2026, 12, 3, 12, 0, tzinfo=dt.UTC)

RESUME = ("fakeagent", "--resume", "s1")


def pane_launch(env: dict[str, str] | None = None) -> LaunchContext:
    return LaunchContext(LaunchStyle.PANE, AGENT_PID, 1.0, AGENT_PID,
                         ("node", "/lib/fake/cli.js", "--model", "big"),
                         ("/usr/bin/node", "/lib/fake/cli.js"), "/work/api",
                         env or {"PATH": "/opt/bin", "FAKE_HOME": "/cfg"})


def shell_launch(shell: int = 777) -> LaunchContext:
    return LaunchContext(LaunchStyle.SHELL, AGENT_PID, 1.0, shell, ("fakeagent",),
                         ("/opt/bin/fakeagent",), "/work/api", {"PATH": "/opt/bin"},
                         shell_pid=shell, shell_started=0.5, shell_name="zsh")


def test_a_pane_agent_is_respawned_with_its_own_program_cwd_and_environment() -> None:
    rig = Rig()
    w = rig.terminal()
    w.launch = pane_launch()
    rig.tmux.panes["%1"] = make_pane("%1", dead=True, pid=4321)
    result = rig.relauncher.relaunch(w, relaunch(RESUME))
    assert result.outcome is Outcome.STARTED
    [(pane, argv, cwd)] = rig.tmux.respawned
    assert argv == ("/usr/bin/node", "/lib/fake/cli.js", "--resume", "s1")
    assert (pane, cwd) == ("%1", "/work/api")
    assert rig.tmux.respawn_env[-1] == {"PATH": "/opt/bin", "FAKE_HOME": "/cfg"}
    assert rig.tmux.respawn_kill[-1] is False       # a dead pane: nothing to kill


def test_a_hung_pane_agent_is_stopped_then_its_pane_respawned() -> None:
    rig = Rig()
    w = rig.terminal()
    w.launch = pane_launch()
    result = rig.relauncher.relaunch(w, relaunch(RESUME, kill_first=True))
    assert result.outcome is Outcome.STARTED and rig.procs.stopped == [AGENT_PID]
    assert rig.tmux.respawn_kill[-1] is True        # whatever still holds the pane goes


def test_a_hung_shell_agent_is_stopped_and_the_command_typed_at_the_same_shell() -> None:
    rig = Rig()
    w = rig.terminal()
    w.launch = shell_launch()
    rig.procs.alive.add(777)
    result = rig.relauncher.relaunch(w, relaunch(RESUME, kill_first=True))
    assert result.outcome is Outcome.STARTED
    assert rig.procs.stopped == [AGENT_PID]           # the agent only: never the shell
    assert 777 in rig.procs.alive
    assert rig.tmux.typed_into("%1") == ["/opt/bin/fakeagent --resume s1"]
    assert rig.tmux.respawned == [] and w.relaunched_pid == 777


def test_a_shell_that_is_gone_or_busy_is_never_typed_into() -> None:
    rig = Rig()
    w = rig.terminal()
    w.launch = shell_launch()
    assert rig.relauncher.relaunch(w, relaunch(RESUME)).outcome is Outcome.SHELL_GONE
    rig.procs.alive.add(777)
    rig.procs.busy_shells.add(777)
    assert rig.relauncher.relaunch(w, relaunch(RESUME)).outcome is Outcome.SHELL_BUSY
    assert rig.tmux.typed == [] and rig.tmux.respawned == []


def test_a_dead_clis_leftovers_under_the_shells_prompt_are_not_the_resumed_agent() -> None:
    """Claude Code 2.1.197 killed at a bash prompt (tests/e2e/real/): bash's prompt lands on
    its input box's lower rule, and its status line (`esc to interrupt`) stays under it. The
    resume command is typed there (the rule is no typed text), and until the resumed agent
    draws over that status line it is not read as the new agent being busy."""
    rig = Rig()
    w = rig.terminal()
    w.launch = shell_launch()
    rig.procs.alive.add(777)
    rule = "─" * 60
    rig.tmux.screens["%1"] = (f"❯ refactor the parser\n✶ Kneading… (3s)\n{rule}\n❯ Killed\n"
                              f"$ {rule}\n  esc to interrupt · ← for agents")
    pane = rig.tmux.pane
    rig.tmux.pane = lambda pane_id: dataclasses.replace(   # type: ignore[method-assign]
        pane(pane_id), cursor_x=2, cursor_y=pane(pane_id).height - 2)   # on the `$ ` row
    result = rig.relauncher.relaunch(w, relaunch(RESUME))
    assert result.outcome is Outcome.STARTED
    assert rig.tmux.typed_into("%1") == ["/opt/bin/fakeagent --resume s1"]
    assert w.left_below == ("  esc to interrupt · ← for agents",)
    typed = rig.tmux.screens["%1"].replace(f"$ {rule}", "$ /opt/bin/fakeagent --resume s1")
    assert w.read(typed, NOW, dt.UTC).state is not ScreenState.BUSY
    drawn = typed.replace("  esc to interrupt", "  ? for shortcuts")   # the new agent drew
    assert "? for shortcuts" in since(drawn, w.screen_from, w.left_below)


def test_quoting_keeps_the_session_id_one_word() -> None:
    rig = Rig()
    w = rig.terminal()
    w.launch = shell_launch()
    rig.procs.alive.add(777)
    rig.relauncher.relaunch(w, relaunch(("fakeagent", "--resume", "a b;rm -rf ~")))
    assert rig.tmux.typed_into("%1") == ["/opt/bin/fakeagent --resume 'a b;rm -rf ~'"]


def test_a_gone_pane_is_reported() -> None:
    rig = Rig()
    w = rig.terminal()
    rig.tmux.close("%1")
    assert rig.relauncher.relaunch(w, relaunch(RESUME)).outcome is Outcome.GONE
