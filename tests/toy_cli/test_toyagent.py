"""The toy agent, described only by its provider file: recognised and resumed in every way a
user starts an agent (issue #10) — at a shell, as the pane's command, behind `env`, a script
that `exec`s it, and `python -m`."""

from __future__ import annotations

import datetime as dt
import os
import shlex
import signal
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from pitcrew import resources
from pitcrew.supervisor.adapters import processes, sessions
from pitcrew.supervisor.adapters.processes import LaunchContext, LaunchStyle
from pitcrew.supervisor.core.classifier import classify
from pitcrew.supervisor.core.screen import ScreenState
from pitcrew.supervisor.providers.loader import load_registry
from pitcrew.supervisor.providers.model import Provider
from tests.support.tmux_server import TmuxServer
from tests.support.waiting import wait_until

TOY_DIR = Path(__file__).resolve().parent
SCRIPT = str(TOY_DIR / "toyagent")


@pytest.fixture
def toy(tmux: TmuxServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[Provider]:
    """The toy provider; toyagent on PATH (tmux gives a new pane its client's PATH)."""
    monkeypatch.setenv("PATH", f"{TOY_DIR}{os.pathsep}{os.environ['PATH']}")
    tmux.env["TOYAGENT_HOME"] = str(tmux.root / "toy-home")
    registry = load_registry(resources.providers_dir(), TOY_DIR)
    assert registry.errors == ()
    provider = registry.get("toyagent")
    assert provider is not None
    yield provider


@dataclass(frozen=True)
class Style:
    """One way to start the agent: a pane command, or lines typed at a shell pane."""

    name: str
    pane: str
    typed: tuple[str, ...]
    style: LaunchStyle
    program: tuple[str, ...]          # after the interpreter
    env: dict[str, str]


PYTHON = ("-m", "toyagent_pkg")
STYLES = [
    Style("shell", "bash --norc --noprofile",
          ("export TOYAGENT_MARK=from-shell", "toyagent"), LaunchStyle.SHELL, (SCRIPT,),
          {"TOYAGENT_MARK": "from-shell"}),
    Style("pane", "toyagent", (), LaunchStyle.PANE, (SCRIPT,), {}),
    Style("env", "env X=1 TOYAGENT_MARK=from-env toyagent", (), LaunchStyle.PANE, (SCRIPT,),
          {"X": "1", "TOYAGENT_MARK": "from-env"}),
    Style("script", "{script}", (), LaunchStyle.PANE, (SCRIPT,),
          {"TOYAGENT_MARK": "from-script"}),
    Style("python-m", f"env PYTHONPATH={TOY_DIR} {shlex.quote(sys.executable)} -m toyagent_pkg",
          (), LaunchStyle.PANE, PYTHON, {"PYTHONPATH": str(TOY_DIR)}),
    Style("script-at-shell", "bash --norc --noprofile", ("{script}",), LaunchStyle.SHELL,
          (SCRIPT,), {"TOYAGENT_MARK": "from-script"}),
]


def _wrapper(root: Path) -> str:
    """A launcher script such as users keep in ~/bin: sets a variable, then `exec`s the CLI."""
    path = root / "run-toy"
    path.write_text('#!/bin/sh\nexport TOYAGENT_MARK=from-script\nexec toyagent "$@"\n')
    path.chmod(0o755)
    return str(path)


def _start(tmux: TmuxServer, style: Style, cwd: Path) -> str:
    script = _wrapper(tmux.root)
    pane = tmux.start(style.pane.format(script=script), cwd=cwd)
    for line in style.typed:
        tmux.type(pane, line.format(script=script))
    tmux.wait_for_text(pane, "│ ready ─")
    return pane


def _context(tmux: TmuxServer, pane: str, toy: Provider) -> LaunchContext:
    pane_pid = tmux.pane(pane).pid
    found = processes.find_agent(processes.process_tree(pane_pid), [toy])
    assert found is not None, f"toyagent not found under pane {pane}"
    provider, proc = found
    assert provider.name == "toyagent"
    ctx = processes.launch_context(proc, pane_pid, toy)
    assert ctx is not None
    return ctx


@pytest.mark.parametrize("style", STYLES, ids=[s.name for s in STYLES])
def test_each_launch_style_is_recognised_with_its_program_and_env(
        tmux: TmuxServer, toy: Provider, style: Style, tmp_path: Path) -> None:
    work = tmp_path / "my project"
    work.mkdir()
    pane = _start(tmux, style, work)
    ctx = _context(tmux, pane, toy)
    assert ctx.style is style.style
    assert ctx.program[1:] == style.program
    assert os.path.isabs(ctx.program[0]) and "python" in os.path.basename(ctx.program[0])
    assert ctx.cwd == str(work)
    for key, value in style.env.items():
        assert ctx.env.get(key) == value, key
    if "TOYAGENT_MARK" not in style.env:
        assert "TOYAGENT_MARK" not in ctx.env
    if style.style is LaunchStyle.SHELL:
        assert ctx.shell_pid == tmux.pane(pane).pid and ctx.shell_name == "bash"
        assert not processes.shell_at_prompt(ctx.shell_pid, ctx.shell_started)
    else:
        assert ctx.shell_pid is None
    assert LaunchContext.from_json(ctx.to_json()) == ctx


def _session_id(toy: Provider, tmux: TmuxServer, cwd: Path) -> str:
    env = {"HOME": str(tmux.home), "TOYAGENT_HOME": tmux.env["TOYAGENT_HOME"]}
    ref = wait_until(lambda: sessions.find_session(toy.sessions, str(cwd), environ=env))
    return ref.session_id


def _resume(toy: Provider, ctx: LaunchContext, session_id: str) -> tuple[str, ...]:
    assert toy.resume.by_id is not None
    return processes.resume_argv(ctx, toy.resume.by_id.render(session_id=session_id))


def test_a_crashed_pane_agent_is_respawned_with_its_own_environment(
        tmux: TmuxServer, toy: Provider, tmp_path: Path) -> None:
    pane = tmux.start("env TOYAGENT_MARK=only-here toyagent", cwd=tmp_path)
    tmux.wait_for_text(pane, "│ ready ─")
    ctx = _context(tmux, pane, toy)
    tmux.type(pane, "quick")
    sid = _session_id(toy, tmux, tmp_path)
    tmux.type(pane, "crash")
    wait_until(lambda: tmux.pane(pane).dead_status == 3)
    assert _state(tmux, pane, toy) is ScreenState.CRASHED
    tmux.tmux.respawn(pane, _resume(toy, ctx, sid), cwd=ctx.cwd, env=ctx.env)
    screen = tmux.wait_for_text(pane, f"Resumed session {sid}")
    assert "mark: only-here" in screen   # the pane's start command is not what set it
    assert _context(tmux, pane, toy).program == ctx.program


def test_a_crashed_shell_agent_is_resumed_at_the_same_shell(
        tmux: TmuxServer, toy: Provider, tmp_path: Path) -> None:
    pane = tmux.start("bash --norc --noprofile", cwd=tmp_path)
    tmux.type(pane, "export TOYAGENT_MARK=typed-in-bash; toyagent")
    tmux.wait_for_text(pane, "│ ready ─")
    ctx = _context(tmux, pane, toy)
    assert ctx.shell_pid is not None
    tmux.type(pane, "slow 30")
    tmux.wait_for_text(pane, "esc to interrupt")
    assert _state(tmux, pane, toy) is ScreenState.BUSY
    sid = _session_id(toy, tmux, tmp_path)
    os.kill(ctx.pid, signal.SIGKILL)
    wait_until(lambda: processes.shell_at_prompt(ctx.shell_pid, ctx.shell_started))
    tmux.type(pane, shlex.join(_resume(toy, ctx, sid)))
    screen = tmux.wait_for_text(pane, f"Resumed session {sid}")
    assert f"mark: typed-in-bash\nResumed session {sid}" in screen   # the resumed one's
    assert tmux.pane(pane).pid == ctx.shell_pid           # the user's shell was kept
    resumed = _context(tmux, pane, toy)
    assert resumed.style is LaunchStyle.SHELL and resumed.shell_pid == ctx.shell_pid
    assert resumed.pid != ctx.pid and resumed.program == ctx.program


def _state(tmux: TmuxServer, pane: str, toy: Provider) -> ScreenState:
    return classify(tmux.screen(pane), toy.screen, dt.datetime.now(dt.UTC), dt.UTC).state
