"""Starting an agent again in its own pane, the way it was started (SPEC §7 "Launch styles").

* Started from an interactive shell (`LaunchStyle.SHELL`): the resume command is typed at that
  same shell once it is back at its prompt, so the shell's environment, aliases, virtualenv
  and history stay. The shell is never killed, respawned or replaced; a hung agent is
  stopped first (its process tree only). If the shell is busy with something else, or is not
  the shell the agent ran in, nothing is typed: the user is told.
* The pane's own command (`LaunchStyle.PANE`, also behind `env`/a script/`python -m`): the pane
  was kept on exit (`remain-on-exit`), and is respawned with the agent's own program, cwd and
  environment as captured while it ran — never tmux's global environment.
* No launch context (the agent was never seen running, e.g. a dead pane found after a restart
  of Pitcrew): a dead pane is respawned with what its start command had; a shell is typed at.

The resume command is built from the provider file and the pinned session id only (the core
checks the id is plausible); nothing read from a screen is ever typed.
"""

from __future__ import annotations

import enum
import logging
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from pitcrew.supervisor.adapters.processes import SHELLS, LaunchContext, LaunchStyle, resume_argv
from pitcrew.supervisor.core.errors import NotTyped
from pitcrew.supervisor.core.plain_text import empty_command_line
from pitcrew.supervisor.core.records import Relaunch
from pitcrew.supervisor.service.ports import TmuxPort
from pitcrew.supervisor.service.reading import cursor_line
from pitcrew.supervisor.service.watched import Watched

log = logging.getLogger("pitcrew")

TypeLine = Callable[[Watched, str, str], None]
StopTree = Callable[[int], None]
Environ = Callable[[int], Mapping[str, str]]
AtPrompt = Callable[[int, float | None], bool]
IsAlive = Callable[[int, float | None], bool]
MARKER_CHARS = 40       # of the typed command, to find it on screen again
KEEP_ENV = ("PATH",)     # without a launch context: at least the agent's own PATH


class Outcome(enum.StrEnum):
    STARTED = "started"          # respawned, or the command typed at the shell
    GONE = "gone"                # the pane is gone
    SHELL_BUSY = "shell_busy"    # the shell runs something else: never typed into
    SHELL_GONE = "shell_gone"    # the shell the agent ran in is not there any more


@dataclass(frozen=True, slots=True)
class Result:
    outcome: Outcome
    detail: str = ""


class Relauncher:
    def __init__(self, tmux: TmuxPort, stop_tree: StopTree, environ: Environ,
                 at_prompt: AtPrompt, is_alive: IsAlive) -> None:
        self.tmux = tmux
        self.stop_tree = stop_tree
        self.environ = environ
        self.at_prompt = at_prompt
        self.is_alive = is_alive
        self.type_line: TypeLine = lambda w, text, what: None   # set by the effects executor

    def relaunch(self, w: Watched, action: Relaunch) -> Result:
        pane = self.tmux.pane(w.pane_id)
        if pane is None:
            log.warning("%s: the pane is gone; cannot relaunch", w.key)
            return Result(Outcome.GONE, "the pane is gone")
        ctx = w.launch
        argv = resume_argv(ctx, action.argv) if ctx is not None else tuple(action.argv)
        env = dict(ctx.env) if ctx is not None else {
            k: v for k, v in (self.environ(w.agent_pid) if w.agent_pid else {}).items()
            if k in KEEP_ENV}
        if action.kill_first and w.agent_pid is not None:
            self.stop_tree(w.agent_pid)     # the agent's own tree: never the shell above it
        w.agent_pid = None
        if ctx is not None and ctx.style is LaunchStyle.SHELL:
            return self._at_shell(w, ctx, argv)
        pane = self.tmux.pane(w.pane_id) or pane
        if ctx is None and not pane.dead and pane.current_command in SHELLS:
            return self._type(w, argv)
        if not w.kept_by_us and self.tmux.remains_on_exit(w.pane_id) is False:
            self.tmux.set_remain_on_exit(w.pane_id)
            w.kept_by_us = True
        self.tmux.respawn(w.pane_id, argv, cwd=(ctx.cwd if ctx else "") or w.cwd, env=env,
                          kill=not pane.dead)
        new = self.tmux.pane(w.pane_id)
        w.relaunched_pid = new.pid if new is not None else None
        log.info("%s: respawned the pane: %s (generation %d)", w.key, shlex.join(argv),
                 action.generation)
        return Result(Outcome.STARTED)

    def _at_shell(self, w: Watched, ctx: LaunchContext, argv: Sequence[str]) -> Result:
        if ctx.shell_pid is None or not self.is_alive(ctx.shell_pid, ctx.shell_started):
            return Result(Outcome.SHELL_GONE, "the shell the agent ran in is gone")
        if not self.at_prompt(ctx.shell_pid, ctx.shell_started):
            return Result(Outcome.SHELL_BUSY, f"the {ctx.shell_name or 'shell'} in the pane is "
                          "busy with another program")
        w.relaunched_pid = ctx.shell_pid
        return self._type(w, argv)

    def _type(self, w: Watched, argv: Sequence[str]) -> Result:
        command = shlex.join(argv)
        if (why := self._line_taken(w)) is not None:
            return Result(Outcome.SHELL_BUSY, why)
        below = self._left_below(w, command)
        try:
            self.type_line(w, command, "the resume command")
        except NotTyped as exc:     # a person is in that pane (copy mode): as a busy shell
            return Result(Outcome.SHELL_BUSY, f"nothing typed: {exc}")
        # what the old process left above the command is history now (its start only: a
        # shell may wrap a long line with a hard line break), and so is what it left below
        w.screen_from, w.left_below = command[:MARKER_CHARS], below
        log.info("%s: typed the resume command at the shell: %s", w.key, shlex.join(argv))
        return Result(Outcome.STARTED)

    def _left_below(self, w: Watched, command: str) -> tuple[str, ...]:
        """The rows under the shell's command line before `command` is typed on it: a
        full-screen program that died leaves its last rows there (watched.since). The rows the
        typed line will wrap onto are left out."""
        snap = self.tmux.snapshot(w.pane_id)
        if snap is None:
            return ()
        pane, text = snap
        row = cursor_line(text, pane)
        if row is None:
            return ()
        wraps = (pane.cursor_x + len(command) - 1) // max(pane.width, 1)
        return tuple(text.split("\n")[row + 1 + wraps:])

    def _line_taken(self, w: Watched) -> str | None:
        """Why the shell's command line is not empty (None: it is): typed after what a
        person left there, the resume command would run as part of their line."""
        snap = self.tmux.snapshot(w.pane_id)
        if snap is None:
            return None     # the pane went: typing fails on its own
        pane, text = snap
        row = cursor_line(text, pane)
        line = text.split("\n")[row] if row is not None else ""
        if row is not None and empty_command_line(line, pane.cursor_x):
            return None
        return (f"the shell's command line is not empty ({line.strip()[-60:]!r}): "
                "nothing typed after what is there")
