"""Finding agent terminals: which panes run an agent CLI, and which process is the agent.

The supervisor re-lists panes when tmux says the layout changed (and every RESCAN_EVERY
seconds as a fallback), starts one control-mode client per session, and walks a pane's
process tree only when the pane's process, command or liveness changed since the last look.
A dead pane with an open incident (Pitcrew restarted while it waited) is picked up again.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from pitcrew.supervisor.adapters import processes
from pitcrew.supervisor.adapters.control import ControlClient
from pitcrew.supervisor.adapters.tmux import PaneInfo
from pitcrew.supervisor.core.records import ProcessStarted, TerminalState
from pitcrew.supervisor.service.watched import Watched

if TYPE_CHECKING:
    from pitcrew.supervisor.service.loop import Supervisor

log = logging.getLogger("pitcrew")


class Discovery:
    def __init__(self, sup: Supervisor) -> None:
        self.sup = sup
        self.seen: dict[str, tuple[int, str, bool]] = {}   # pane → what it ran at the last look
        self.last_rescan = 0.0

    def rescan(self) -> None:
        self.last_rescan = time.monotonic()
        panes = self.sup.tmux.list_panes()
        sessions_now = {p.session_name for p in panes}
        for session in sessions_now - self.sup.controls.keys():
            client = ControlClient(self.sup.tmux, session, self.sup.post)
            if client.start_client():
                self.sup.controls[session] = client
        for session in self.sup.controls.keys() - sessions_now:
            self.sup.controls.pop(session).stop()
        seen = set()
        for pane in panes:
            seen.add(f"{self.sup.server}:{pane.pane_id}")
            self.inspect(pane)
        for key in list(self.sup.watched):
            if key not in seen:
                log.info("%s: pane closed", key)
                self.sup.watched.pop(key)
                self.sup.changed()

    def rescan_pane(self, pane_id: str) -> None:
        pane = self.sup.tmux.pane(pane_id)
        if pane is not None:
            self.seen.pop(f"{self.sup.server}:{pane_id}", None)   # asked to look: look afresh
            self.inspect(pane)

    def inspect(self, pane: PaneInfo) -> None:
        key = f"{self.sup.server}:{pane.pane_id}"
        w = self.sup.watched.get(key)
        signature = (pane.pid, pane.current_command, pane.dead)
        known = w is None or (w.agent_pid is not None and w.agent_pid in self.sup.exits.watched())
        if self.seen.get(key) == signature and known:
            return   # nothing changed in this pane since the last look: skip the process walk
        self.seen[key] = signature
        if pane.dead:
            if w is None:
                self.adopt_dead(key, pane)
            return  # exits are reported by the exit watcher; a dead pane is read then
        found = processes.find_agent(processes.process_tree(pane.pid),
                                     self.sup.app.active_providers)
        if found is None:
            return
        provider, proc = found
        if w is None or w.provider.name != provider.name:
            saved = self.sup.snapshot.terminals.get(key)
            state = saved if saved is not None and saved.agent == provider.display_name else (
                TerminalState(terminal=f"{pane.session_name}:{pane.pane_id}",
                              agent=provider.display_name, project=proc.cwd or pane.current_path))
            w = Watched(key, pane.pane_id, provider, state, proc.cwd or pane.current_path,
                        last_output=time.monotonic())  # quiet counts from when we started
            self.sup.watched[key] = w
            self.sup.changed()
            log.info("%s: watching %s in %s", key, provider.display_name, w.cwd)
        if proc.pid not in w.pid_generation:
            w.pid_generation[proc.pid] = w.state.generation
            w.agent_pid, w.agent_started = proc.pid, proc.create_time
            w.dirty = True
            self.sup.exits.watch(proc.pid, key, proc.create_time)
            self.sup.feed(w, ProcessStarted(w.state.generation, proc.pid))

    def adopt_dead(self, key: str, pane: PaneInfo) -> None:
        """After a restart of Pitcrew: a dead pane with an open incident is still ours."""
        saved = self.sup.snapshot.terminals.get(key)
        if saved is None or saved.incident is None:
            return
        provider = processes.provider_for_command(pane.start_command, self.sup.app.active_providers)
        if provider is None:
            provider = next((p for p in self.sup.app.active_providers
                             if p.display_name == saved.agent), None)
        if provider is None:
            return
        self.sup.watched[key] = Watched(key, pane.pane_id, provider, saved,
                                    saved.project or pane.start_path)
        log.info("%s: picking up the open incident for %s", key, provider.display_name)
