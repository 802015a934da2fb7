"""Starting an agent again in its own pane, the way it was started (SPEC §7 "Launch styles").

A relaunch respawns the pane when the agent was the pane's own process, and otherwise stops
the agent and types the resume command at the shell it ran from.
"""

from __future__ import annotations

import logging
import shlex
from collections.abc import Callable, Mapping

from pitcrew.supervisor.core.records import Relaunch
from pitcrew.supervisor.service.ports import TmuxPort
from pitcrew.supervisor.service.watched import Watched

log = logging.getLogger("pitcrew")

SHELLS = frozenset({"bash", "zsh", "fish", "sh", "dash", "ksh", "tcsh", "csh", "nu", "pwsh"})
KEEP_ENV = ("PATH",)     # passed explicitly on respawn: tmux would use its client's instead

TypeLine = Callable[[Watched, str, str], None]
StopTree = Callable[[int], None]
Environ = Callable[[int], Mapping[str, str]]


class Relauncher:
    def __init__(self, tmux: TmuxPort, stop_tree: StopTree, environ: Environ) -> None:
        self.tmux = tmux
        self.stop_tree = stop_tree
        self.environ = environ
        self.type_line: TypeLine = lambda w, text, what: None   # set by the effects executor

    def relaunch(self, w: Watched, action: Relaunch) -> None:
        pane = self.tmux.pane(w.pane_id)
        if pane is None:
            log.warning("%s: the pane is gone; cannot relaunch", w.key)
            return
        env = self.environ(w.agent_pid) if w.agent_pid else {}
        agent_env = {k: v for k, v in env.items() if k in KEEP_ENV}
        own_process = pane.dead or w.agent_pid in (None, pane.pid)
        if action.kill_first and w.agent_pid is not None:
            self.stop_tree(w.agent_pid)
            pane = self.tmux.pane(w.pane_id) or pane
        argv = list(action.argv)
        if own_process or pane.dead or pane.current_command not in SHELLS:
            if "PATH" in agent_env:
                argv = ["env", f"PATH={agent_env['PATH']}", *argv]
            self.tmux.set_remain_on_exit(w.pane_id)
            self.tmux.respawn(w.pane_id, argv, cwd=w.cwd)
        else:
            self.type_line(w, shlex.join(argv), "the resume command")
        w.agent_pid = None
        log.info("%s: relaunched %s (generation %d)", w.key, shlex.join(action.argv),
                 action.generation)
