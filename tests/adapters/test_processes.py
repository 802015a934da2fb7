"""Which agent runs in a pane, from the real process tree of a real pane."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import psutil
import pytest

from pitcrew import resources
from pitcrew.supervisor.adapters import processes
from pitcrew.supervisor.providers.loader import load_registry
from pitcrew.supervisor.providers.model import Provider
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


# -- launch context and the shell's prompt ------------------------------------------------


def _agent(tmux: TmuxServer, pane: str) -> processes.ProcInfo:
    found = wait_until(lambda: processes.find_agent(
        processes.process_tree(tmux.pane(pane).pid), registry()))
    return found[1]


def _fake() -> Provider:
    return next(p for p in registry() if p.name == "fakeagent")


def test_an_agent_typed_at_a_shell_is_shell_style(tmux: TmuxServer, tmp_path: Path) -> None:
    pane = tmux.start("bash --norc --noprofile", cwd=tmp_path)
    tmux.type(pane, "export FAKE_MARK=from-shell; cd / && cd - >/dev/null && fakeagent")
    tmux.wait_for_text(pane, "fake>")
    proc = _agent(tmux, pane)
    ctx = processes.launch_context(proc, tmux.pane(pane).pid, _fake())
    assert ctx is not None
    assert ctx.style is processes.LaunchStyle.SHELL
    assert ctx.shell_pid == tmux.pane(pane).pid and ctx.shell_name == "bash"
    assert ctx.shell_started == psutil.Process(ctx.shell_pid).create_time()
    assert (ctx.pid, ctx.started) == (proc.pid, proc.create_time)
    script = str(FAKE_AGENT_DIR / "fakeagent")
    assert ctx.program[1:] == (script,)              # `#!/usr/bin/env python3` + the script
    assert os.path.isabs(ctx.program[0]) and "python" in os.path.basename(ctx.program[0])
    assert ctx.cwd == str(tmp_path)
    assert ctx.env["FAKE_MARK"] == "from-shell"      # set only in the pane's shell
    assert not processes.NOT_REPLAYED & ctx.env.keys()   # no TMUX, OLDPWD, SHLVL, …
    assert processes.resume_argv(ctx, ["fakeagent", "--resume", "abc"]) == (
        *ctx.program, "--resume", "abc")
    assert processes.LaunchContext.from_json(ctx.to_json()) == ctx
    # launch_context also takes a bare pid
    assert processes.launch_context(proc.pid, tmux.pane(pane).pid, _fake()) == ctx


def test_the_panes_own_agent_is_pane_style(tmux: TmuxServer, tmp_path: Path) -> None:
    pane = tmux.start(["fakeagent", "--model", "tiny"], cwd=tmp_path, env={"FAKE_MARK": "m"})
    tmux.wait_for_text(pane, "fake>")
    proc = _agent(tmux, pane)
    ctx = processes.launch_context(proc, tmux.pane(pane).pid, _fake())
    assert ctx is not None and ctx.style is processes.LaunchStyle.PANE
    assert ctx.pid == ctx.pane_pid and ctx.shell_pid is None
    assert ctx.argv[-2:] == ("--model", "tiny") and ctx.env["FAKE_MARK"] == "m"


def test_no_context_for_a_process_outside_the_pane(tmux: TmuxServer) -> None:
    pane = tmux.start("fakeagent")
    other = tmux.start("exec sleep 300")
    tmux.wait_for_text(pane, "fake>")
    proc = _agent(tmux, pane)
    assert processes.launch_context(proc, tmux.pane(other).pid, _fake()) is None
    claude = next(p for p in registry() if p.name == "claude")
    assert processes.launch_context(proc, tmux.pane(pane).pid, claude) is None


@pytest.mark.parametrize(("cmdline", "interactive"), [
    (["bash"], True), (["-bash"], True), (["bash", "-l"], True), (["/bin/zsh"], True),
    (["sh"], True), (["fish"], True), (["dash", "-i"], True),
    (["bash", "--rcfile", "x.rc"], True), (["bash", "--norc", "--noprofile"], True),
    (["bash", "run.sh"], False), (["sh", "-c", "claude"], False), (["bash", "-lc", "x"], False),
    (["env", "FOO=1", "claude"], False), (["python3", "-m", "agent"], False), ([], False),
])
def test_interactive_shells_are_shells_without_a_script(
        cmdline: list[str], interactive: bool) -> None:
    assert processes.is_interactive_shell(cmdline) is interactive


def test_context_round_trips_and_rejects_garbage() -> None:
    ctx = processes.LaunchContext(
        processes.LaunchStyle.SHELL, 10, 1.5, 9, ("claude", "-c"), ("/bin/claude",), "/w",
        {"A": "1"}, 9, "bash", 1.0)
    assert processes.LaunchContext.from_json(json.loads(json.dumps(ctx.to_json()))) == ctx
    for bad in ({}, {**ctx.to_json(), "style": "nope"}, {**ctx.to_json(), "program": []},
                {**ctx.to_json(), "env": {"A": 1}}, {**ctx.to_json(), "shell_pid": None}):
        with pytest.raises(ValueError):
            processes.LaunchContext.from_json(bad)


def test_a_shell_is_at_its_prompt_only_when_nothing_runs_in_it(tmux: TmuxServer) -> None:
    pane = tmux.start("bash --norc --noprofile")
    shell = tmux.pane(pane).pid
    started = psutil.Process(shell).create_time()
    wait_until(lambda: processes.shell_at_prompt(shell, started))
    assert not processes.shell_at_prompt(shell, started - 100)   # not the same process
    tmux.type(pane, "sleep 300")                                  # a foreground job
    wait_until(lambda: not processes.shell_at_prompt(shell))
    tmux.tmux.send_keys(pane, "C-c")
    wait_until(lambda: processes.shell_at_prompt(shell))
    tmux.type(pane, "sleep 300 &")                                # a background job
    wait_until(lambda: psutil.Process(shell).children())
    assert not processes.shell_at_prompt(shell)
    tmux.type(pane, "kill %1")
    wait_until(lambda: processes.shell_at_prompt(shell))
    tmux.type(pane, "exit")
    wait_until(lambda: not processes.shell_at_prompt(shell))
