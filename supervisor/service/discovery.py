"""Finding agent terminals: which panes run an agent CLI, and which process is the agent.

The loop re-lists panes when tmux says the layout changed (and every RESCAN_EVERY seconds as
a fallback), keeps one control-mode client per session, and walks a pane's process tree only
when the pane's process, command or liveness changed since the last look. A dead pane with an
open incident (Pitcrew restarted while it waited) is picked up again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Protocol

from pitcrew.supervisor.adapters import processes
from pitcrew.supervisor.adapters.tmux import PaneInfo
from pitcrew.supervisor.core.records import Observation, ProcessStarted, TerminalState
from pitcrew.supervisor.providers.model import Provider
from pitcrew.supervisor.service.ports import Changed, Clock, TmuxReads
from pitcrew.supervisor.service.watched import Watched

log = logging.getLogger("pitcrew")

FindAgent = Callable[[int, list[Provider]], tuple[Provider, processes.ProcInfo] | None]


class ExitWatch(Protocol):
    def watch(self, pid: int, key: str, create_time: float | None = None) -> None: ...
    def watched(self) -> set[int]: ...


def find_agent(pane_pid: int, providers: list[Provider]
               ) -> tuple[Provider, processes.ProcInfo] | None:
    return processes.find_agent(processes.process_tree(pane_pid), providers)


class Discovery:
    def __init__(self, tmux: TmuxReads, clock: Clock, watched: dict[str, Watched],
                 providers: Callable[[], list[Provider]], exits: ExitWatch,
                 feed: Callable[[Watched, Observation], object],
                 saved: Callable[[str], TerminalState | None],
                 sync_sessions: Callable[[Iterable[str]], None], changed: Changed,
                 find: FindAgent = find_agent) -> None:
        self.tmux = tmux
        self.clock = clock
        self.watched = watched
        self.providers = providers
        self.exits = exits
        self.feed = feed
        self.saved = saved
        self.sync_sessions = sync_sessions
        self.changed = changed
        self.find = find
        self.seen: dict[str, tuple[int, str, bool]] = {}   # pane → what it ran at the last look
        self.last_rescan = -1e9                              # monotonic

    @property
    def server(self) -> str:
        return self.tmux.label

    def rescan(self) -> None:
        self.last_rescan = self.clock.mono()
        panes = self.tmux.list_panes()
        self.sync_sessions({p.session_name for p in panes})
        seen = set()
        for pane in panes:
            seen.add(f"{self.server}:{pane.pane_id}")
            self.inspect(pane)
        for key in list(self.watched):
            if key not in seen:
                log.info("%s: pane closed", key)
                self.watched.pop(key)
                self.changed()

    def rescan_pane(self, pane_id: str) -> None:
        pane = self.tmux.pane(pane_id)
        if pane is not None:
            self.seen.pop(f"{self.server}:{pane_id}", None)   # asked to look: look afresh
            self.inspect(pane)

    def inspect(self, pane: PaneInfo) -> None:
        key = f"{self.server}:{pane.pane_id}"
        w = self.watched.get(key)
        signature = (pane.pid, pane.current_command, pane.dead)
        known = w is None or (w.agent_pid is not None and w.agent_pid in self.exits.watched())
        if self.seen.get(key) == signature and known:
            return   # nothing changed in this pane since the last look: skip the process walk
        self.seen[key] = signature
        if pane.dead:
            if w is None:
                self.adopt_dead(key, pane)
            return  # exits are reported by the exit watcher; a dead pane is read then
        found = self.find(pane.pid, self.providers())
        if found is None:
            return
        provider, proc = found
        if w is None or w.provider.name != provider.name:
            saved = self.saved(key)
            state = saved if saved is not None and saved.agent == provider.display_name else (
                TerminalState(terminal=f"{pane.session_name}:{pane.pane_id}",
                              agent=provider.display_name, project=proc.cwd or pane.current_path))
            w = Watched(key, pane.pane_id, provider, state, proc.cwd or pane.current_path,
                        last_output=self.clock.mono())  # quiet counts from when we started
            self.watched[key] = w
            self.changed()
            log.info("%s: watching %s in %s", key, provider.display_name, w.cwd)
        if proc.pid not in w.pid_generation:
            w.pid_generation[proc.pid] = w.state.generation
            w.agent_pid, w.agent_started = proc.pid, proc.create_time
            w.dirty = True
            self.exits.watch(proc.pid, key, proc.create_time)
            self.feed(w, ProcessStarted(w.state.generation, proc.pid))

    def adopt_dead(self, key: str, pane: PaneInfo) -> None:
        """After a restart of Pitcrew: a dead pane with an open incident is still ours."""
        saved = self.saved(key)
        if saved is None or saved.incident is None:
            return
        providers = self.providers()
        provider = processes.provider_for_command(pane.start_command, providers)
        if provider is None:
            provider = next((p for p in providers if p.display_name == saved.agent), None)
        if provider is None:
            return
        self.watched[key] = Watched(key, pane.pane_id, provider, saved,
                                    saved.project or pane.start_path)
        log.info("%s: picking up the open incident for %s", key, provider.display_name)
