"""Which tmux server runs on the socket, and whether a terminal is still the agent an earlier
decision was about (SPEC §7 "Identity").

A tmux server restarted on the same socket numbers its panes from `%0` again; its pid and
start time are new. A shell-started agent's terminal is only the same while the shell it ran
from is the same process.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Protocol

from pitcrew.supervisor.adapters.processes import LaunchStyle
from pitcrew.supervisor.adapters.tmux import ServerIdentity
from pitcrew.supervisor.service.watched import Watched

log = logging.getLogger("pitcrew")


class ServerProbe(Protocol):
    @property
    def label(self) -> str: ...
    def server_identity(self) -> ServerIdentity | None: ...


class ServerWatch:
    def __init__(self, tmux: ServerProbe) -> None:
        self.tmux = tmux
        self.ident: str | None = None     # "<pid>@<start time>" of the server, None: none
        self._looked = False
        self._was_gone = False
        self._had_one = False

    def refresh(self) -> None:
        """Look again; say when there is none at the first look (as `pitcrew status` does),
        when the server went away, and when one is there (again): once each, not at every
        listing."""
        found = self.tmux.server_identity()
        ident = f"{found.pid}@{found.started}" if found is not None else None
        first, self._looked = not self._looked, True
        if ident == self.ident and not first:
            return
        label = self.tmux.label
        if found is None:
            if first:
                log.warning("No tmux server is running (%s); watching for one to start", label)
            else:
                log.warning("the tmux server %s went away; watching for it to come back",
                            label)
        elif self._had_one and (self.ident is not None or self._was_gone):
            log.info("a tmux server is running on %s again (a new server: pid %d)",
                     label, found.pid)
        elif self._was_gone:
            log.info("A tmux server is running on %s now (pid %d); watching it", label,
                     found.pid)
        self._was_gone = found is None
        self._had_one = self._had_one or found is not None
        self.ident = ident

    def changed_for(self, w: Watched, is_alive: Callable[[int, float | None], bool]
                    ) -> str | None:
        """Before acting on an earlier decision: why this is no longer that agent's terminal
        (None: it still is)."""
        self.refresh()
        if w.state.server and self.ident and w.state.server != self.ident:
            return "the tmux server was restarted; this pane id now belongs to a different pane"
        ctx = w.launch
        if (w.agent_pid is None and ctx is not None and ctx.style is LaunchStyle.SHELL
                and ctx.shell_pid is not None and not is_alive(ctx.shell_pid,
                                                               ctx.shell_started)):
            return "the shell the agent was started from is gone"
        return None
