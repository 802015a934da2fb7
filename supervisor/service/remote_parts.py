"""A remote host's discovery, reader and relauncher: the local ones' logic over the host's
tmux and process reads (`service/hosts.py` calls this once per host, at start).

Split out of `service/loop.py`: the loop hands over the ports the remote parts share with the
local ones (the watched terminals, the Autopilot's feed, state.json's saved states and launch
records), never itself.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

from pitcrew.supervisor.adapters.clock import local_zone
from pitcrew.supervisor.adapters.processes import LaunchContext
from pitcrew.supervisor.core.records import Action, Observation, TerminalState
from pitcrew.supervisor.service.discovery import Discovery
from pitcrew.supervisor.service.hosts import Remote
from pitcrew.supervisor.service.observing import Observer
from pitcrew.supervisor.service.ports import Changed, Clock
from pitcrew.supervisor.service.reading import Reader
from pitcrew.supervisor.service.relaunching import Relauncher
from pitcrew.supervisor.service.watched import Watched


class RemoteParts:
    def __init__(self, clock: Clock, watched: dict[str, Watched],
                 providers: Callable[[], list[Any]],
                 feed: Callable[[Watched, Observation], tuple[Action, ...]],
                 saved: Callable[[str], TerminalState | None],
                 launch_of: Callable[[str], LaunchContext | None],
                 sync_sessions: Callable[[Remote, Mapping[str, int]], set[str]], changed: Changed,
                 observer: Observer) -> None:
        """`observer`: the local one; each host gets a copy that asks the host's shells."""
        self.clock, self.watched, self.providers, self.feed = clock, watched, providers, feed
        self.saved, self.launch_of, self.sync_sessions = saved, launch_of, sync_sessions
        self.changed, self.observer = changed, observer

    def __call__(self, remote: Remote) -> tuple[Discovery, Reader, Relauncher]:
        procs, clock = remote.procs, self.clock
        observer = copy.copy(self.observer)       # the same observer, the host's shells
        observer.at_prompt = procs.shell_at_prompt
        discovery = Discovery(remote.tmux, clock, self.watched, self.providers,
                              remote.exits, self.feed, self.saved,
                              self.launch_of, lambda: remote.servers.ident,
                              lambda sessions: self.sync_sessions(remote, sessions),
                              self.changed, observer.gone_while_confirming,
                              find=procs.find_agent, capture=procs.launch_context,
                              is_alive=procs.is_alive)
        reader = Reader(remote.tmux, clock, procs.is_alive, local_zone)
        relauncher = Relauncher(remote.tmux, procs.stop_tree, procs.environ,
                                procs.shell_at_prompt, procs.is_alive)
        return discovery, reader, relauncher
