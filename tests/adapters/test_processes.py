"""Which agent runs in a pane, from the real process tree of a real pane."""

from __future__ import annotations

import os
import signal
from pathlib import Path

from pitcrew import resources
from pitcrew.supervisor.adapters import processes
from pitcrew.supervisor.providers.loader import load_registry
from tests.support.tmux_server import FAKE_AGENT_DIR, TmuxServer
from tests.support.waiting import wait_until


def registry():
    return load_registry(resources.providers_dir(), FAKE_AGENT_DIR)


def test_finds_the_wrapped_agent_below_a_shell(tmux: TmuxServer, tmp_path: Path) -> None:
    pane = tmux.start("bash --norc --noprofile", cwd=tmp_path)
    tmux.type(pane, "fakeagent --model tiny")
    tmux.wait_for_text(pane, "fake>")
    tree = processes.process_tree(tmux.pane(pane).pid)
    found = processes.find_agent(tree, registry())
    assert found is not None
    provider, proc = found
    assert provider.name == "fakeagent"
    assert proc.depth == 1                   # bash is the pane; the agent is its child
    assert proc.name.startswith("python")    # shebang-wrapped: recognised by argv
    assert proc.cmdline[-2:] == ("--model", "tiny")
    assert proc.cwd == str(tmp_path)
    assert proc.alive


def test_a_plain_shell_is_not_an_agent(tmux: TmuxServer) -> None:
    pane = tmux.start("exec sleep 300")
    tree = processes.process_tree(tmux.pane(pane).pid)
    assert processes.find_agent(tree, registry()) is None


def test_the_agents_own_environment_is_readable(tmux: TmuxServer) -> None:
    pane = tmux.start("fakeagent", env={"CLAUDE_CONFIG_DIR": "/somewhere/else"})
    tmux.wait_for_text(pane, "fake>")
    _, proc = processes.find_agent(processes.process_tree(tmux.pane(pane).pid), registry())
    env = processes.environ(proc.pid)
    assert env["FAKEAGENT_HOME"] == str(tmux.fake_home)
    assert env["CLAUDE_CONFIG_DIR"] == "/somewhere/else"


def test_liveness_tells_a_reused_pid_from_the_original(tmux: TmuxServer) -> None:
    pane = tmux.start("fakeagent")
    tmux.wait_for_text(pane, "fake>")
    _, proc = processes.find_agent(processes.process_tree(tmux.pane(pane).pid), registry())
    assert processes.is_alive(proc.pid, proc.create_time)
    assert not processes.is_alive(proc.pid, proc.create_time - 100)
    os.kill(proc.pid, signal.SIGKILL)
    wait_until(lambda: not processes.is_alive(proc.pid))


def test_a_dead_panes_start_command_names_its_provider() -> None:
    reg = list(registry())
    assert processes.provider_for_command('fakeagent --start "crash 3"', reg).name == "fakeagent"
    assert processes.provider_for_command("claude --resume abc", reg).name == "claude"
    assert processes.provider_for_command("vim notes.txt", reg) is None
    assert processes.provider_for_command("", reg) is None
