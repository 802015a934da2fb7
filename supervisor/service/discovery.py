"""Finding agent terminals: which panes run an agent CLI, which process is the agent, how it
was started, and whether it is still the agent an earlier decision was about.

The loop re-lists panes when tmux says the layout changed (and every RESCAN_EVERY seconds as
a fallback), keeps one control-mode client per session, and walks a pane's process tree only
when the pane's process, command or liveness changed since the last look.

Identity (SPEC §7): a terminal is a tmux server (its pid and start time), a pane, and the
agent in it (its process start time). When an agent appears that is not the one an open
incident is about — the tmux server was restarted and reused the pane id, or the user
started the agent again by hand while Pitcrew waited or was not running — the incident is
closed (`Superseded`), never acted on. After a restart of Pitcrew, a pane with an open
incident or a running task is picked up again: a dead pane kept by `remain-on-exit`, or the
same shell the agent was started from, now back at its prompt.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Mapping
from typing import Protocol

from pitcrew.supervisor.adapters import processes
from pitcrew.supervisor.adapters.processes import LaunchContext, LaunchStyle
from pitcrew.supervisor.adapters.tmux import PaneInfo
from pitcrew.supervisor.core.process_start import same_process
from pitcrew.supervisor.core.records import (
    Observation,
    Phase,
    ProcessStarted,
    Superseded,
    TerminalState,
)
from pitcrew.supervisor.providers.model import Provider
from pitcrew.supervisor.service.ports import Changed, Clock, TmuxPort
from pitcrew.supervisor.service.watched import Watched

log = logging.getLogger("pitcrew")

FindAgent = Callable[[int, list[Provider]], tuple[Provider, processes.ProcInfo] | None]
Capture = Callable[[processes.ProcInfo, int, Provider], LaunchContext | None]
IsAlive = Callable[[int, float | None], bool]
Feed = Callable[[Watched, Observation], object]


class ExitWatch(Protocol):
    def watch(self, pid: int, key: str, create_time: float | None = None) -> None: ...
    def watched(self) -> set[int]: ...


def find_agent(pane_pid: int, providers: list[Provider]
               ) -> tuple[Provider, processes.ProcInfo] | None:
    return processes.find_agent(processes.process_tree(pane_pid), providers)


class Discovery:
    def __init__(self, tmux: TmuxPort, clock: Clock, watched: dict[str, Watched],
                 providers: Callable[[], list[Provider]], exits: ExitWatch, feed: Feed,
                 saved: Callable[[str], TerminalState | None],
                 saved_launch: Callable[[str], LaunchContext | None],
                 server_id: Callable[[], str | None],
                 sync_sessions: Callable[[Mapping[str, int]], set[str]], changed: Changed,
                 gone_while_confirming: Callable[[Watched, PaneInfo], None],
                 find: FindAgent = find_agent,
                 capture: Capture = processes.launch_context,
                 is_alive: IsAlive = processes.is_alive) -> None:
        self.tmux = tmux
        self.clock = clock
        self.watched = watched
        self.providers = providers
        self.exits = exits
        self.feed = feed
        self.saved = saved
        self.saved_launch = saved_launch
        self.server_id = server_id
        self.sync_sessions = sync_sessions
        self.changed = changed
        self.gone_while_confirming = gone_while_confirming
        self.find = find
        self.capture = capture
        self.is_alive = is_alive
        self.seen: dict[str, tuple[int, str, bool]] = {}   # pane → what it ran at the last look
        self.last_rescan = -1e9                              # monotonic

    @property
    def server(self) -> str:
        return self.tmux.label

    def key(self, pane_id: str) -> str:
        """`<server>:%3`; a remote host's pane id already is its key (`gpu1:%3`)."""
        return pane_id if ":" in pane_id else f"{self.server}:{pane_id}"

    def pane_of(self, key: str) -> str:
        """The reverse of `key`: `%3` for `<server>:%3`; a remote host's key is its pane id."""
        local = f"{self.server}:"
        return key[len(local):] if key.startswith(local) else key

    def launches(self) -> Mapping[str, LaunchContext]:
        return {k: w.launch for k, w in self.watched.items() if w.launch is not None}

    def rescan(self) -> None:
        self.last_rescan = self.clock.mono()
        panes = self.tmux.list_panes()
        waiting = self.sync_sessions({p.session_name: p.session_created for p in panes})
        seen = set()
        for pane in panes:
            key = self.key(pane.pane_id)
            seen.add(key)
            self.inspect(pane)
            if pane.session_name in waiting and (w := self.watched.get(key)):
                w.dirty = True    # no control client tells of its output yet: look anyway
        for key in list(self.watched):
            if key not in seen and key.startswith(f"{self.server}:"):   # this server's only
                log.info("%s: pane closed", key)
                if self.watched[key].state.incident is not None and self.server_id():
                    # the pane alone closed: its incident ends with a row, never silently (a
                    # whole server gone is judged when one is back, or at the next start)
                    self.feed(self.watched[key], Superseded("the pane was closed"))
                self.watched.pop(key)
                self.changed()

    def rescan_pane(self, pane_id: str) -> None:
        pane = self.tmux.pane(pane_id)
        if pane is not None:
            self.seen.pop(self.key(pane_id), None)   # asked to look: look afresh
            self.inspect(pane)

    def inspect(self, pane: PaneInfo) -> None:
        key = self.key(pane.pane_id)
        w = self.watched.get(key)
        signature = (pane.pid, pane.current_command, pane.dead)
        known = w is None or (w.agent_pid is not None and w.agent_pid in self.exits.watched())
        if self.seen.get(key) == signature and known and not _confirming(w):
            return   # nothing changed in this pane since the last look: skip the process walk
        self.seen[key] = signature
        if w is not None and _confirming(w) and w.agent_pid is None:
            self.gone_while_confirming(w, pane)   # the resumed agent may have died at once
            w = self.watched.get(key)
        if pane.dead:
            if w is None:
                self.adopt(key, pane, dead=True)
            return  # exits are reported by the exit watcher; a dead pane is read then
        found = self.find(pane.pid, self.providers())
        if found is None:
            if w is None:
                self.adopt(key, pane, dead=False)
            return
        provider, proc = found
        if w is None or w.provider.name != provider.name:
            w = self.new_terminal(key, pane, provider, proc)
        if proc.pid not in w.pid_generation:
            self.agent_started(w, pane, proc)

    def new_terminal(self, key: str, pane: PaneInfo, provider: Provider,
                     proc: processes.ProcInfo) -> Watched:
        saved = self.saved(key)
        state = saved if saved is not None and saved.agent == provider.display_name else (
            TerminalState(terminal=_label(pane),
                          agent=provider.display_name, project=proc.cwd or pane.current_path))
        w = Watched(key, pane.pane_id, provider, state, proc.cwd or pane.current_path,
                    last_output=self.clock.mono(),  # quiet counts from when we started
                    launch=self.saved_launch(key))
        self.watched[key] = w
        self.changed()
        log.info("%s: watching %s in %s", key, provider.display_name, w.cwd)
        self.check_server(w)
        return w

    def agent_started(self, w: Watched, pane: PaneInfo, proc: processes.ProcInfo) -> None:
        """A new agent process in the pane: ours (a relaunch), or someone else's."""
        inc = w.state.incident
        before = w.state.agent_started
        if inc is not None and inc.phase is not Phase.CONFIRMING and before is not None \
                and not same_process(w.state.agent_pid, before, proc.pid, proc.create_time):
            self.feed(w, Superseded("the agent was started again by hand (a new process)"))
        launch = self.capture(proc, pane.pid, w.provider)
        if launch is not None:
            w.launch = launch
            if launch.style is LaunchStyle.PANE and not pane.dead:
                self.keep_on_exit(w)
        w.state = dataclasses.replace(w.state, agent_started=proc.create_time, agent_pid=proc.pid,
                                      server=self.server_id() or w.state.server)
        w.pid_generation[proc.pid] = w.state.generation
        w.agent_pid, w.agent_started = proc.pid, proc.create_time
        w.dirty = True
        self.exits.watch(proc.pid, w.key, proc.create_time)
        self.feed(w, ProcessStarted(w.state.generation, proc.pid))

    def keep_on_exit(self, w: Watched) -> None:
        """The agent is the pane's own command: keep the pane when it exits, so a crash can
        be resumed in it (a normal exit closes it as tmux would have)."""
        try:
            if self.tmux.remains_on_exit(w.pane_id) is False:   # the user keeps panes: leave it
                self.tmux.set_remain_on_exit(w.pane_id)
                w.kept_by_us = True
        except Exception as exc:  # the pane may be closing right now
            log.info("%s: cannot keep the pane on exit: %s", w.key, exc)

    def check_server(self, w: Watched) -> None:
        """An incident recorded on another tmux server is not about this pane's agent."""
        now = self.server_id()
        if w.state.incident is not None and w.state.server and now and w.state.server != now:
            self.feed(w, Superseded("the tmux server was restarted; this pane id now belongs "
                                    "to a different pane"))

    def adopt(self, key: str, pane: PaneInfo, dead: bool) -> None:
        """After a restart of Pitcrew: a pane with an open incident or a running task is still
        ours — dead (kept by remain-on-exit), or the very shell the agent was started from
        (`Startup.reconcile` then tells the core how its agent ended)."""
        saved = self.saved(key)
        if saved is None or (saved.incident is None and saved.task is None):
            return
        launch = self.saved_launch(key)
        if not dead and not (launch is not None and launch.style is LaunchStyle.SHELL
                             and launch.shell_pid is not None
                             and self.is_alive(launch.shell_pid, launch.shell_started)):
            return
        providers = self.providers()
        provider = processes.provider_for_command(pane.start_command, providers) if dead \
            else None
        if provider is None:
            provider = next((p for p in providers if p.display_name == saved.agent), None)
        if provider is None:
            return
        w = Watched(key, pane.pane_id, provider, saved, saved.project or pane.start_path,
                    launch=launch)
        self.watched[key] = w
        log.info("%s: picking up the %s for %s", key, "open incident" if saved.incident
                 else "running task", provider.display_name)
        self.check_server(w)


def _label(pane: PaneInfo) -> str:
    """How the ledger and messages name the terminal: `work:%3`, or `gpu1:work:%3` for a
    pane on a remote host (whose pane id is `gpu1:%3`)."""
    host, _, pane_id = pane.pane_id.rpartition(":")
    return f"{host}:{pane.session_name}:{pane_id}" if host else \
        f"{pane.session_name}:{pane.pane_id}"


def _confirming(w: Watched | None) -> bool:
    inc = w.state.incident if w is not None else None
    return inc is not None and inc.phase is Phase.CONFIRMING and inc.started_pid is None
