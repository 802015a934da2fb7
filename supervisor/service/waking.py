"""A wait is over (a `Wakeup` job fired): look at the terminal again and tell the core.

First the pane is listed again on its own host (the user may have restarted the agent by
hand) and its server and process checked, so a decision taken earlier is never acted on in a
terminal that now holds something else (`Superseded`); then the screen is read and fed as a
`Tick`. A terminal whose host is down is left alone: it is woken again when the host is back
(`service/hosts.py`). Split out of `service/loop.py`, with narrow ports.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping

from pitcrew.supervisor.core.errors import TmuxError
from pitcrew.supervisor.core.records import Action, Observation, Superseded, Tick
from pitcrew.supervisor.service.discovery import Discovery
from pitcrew.supervisor.service.hosts import Hosts
from pitcrew.supervisor.service.identity import ServerWatch
from pitcrew.supervisor.service.reading import Reader
from pitcrew.supervisor.service.watched import Watched

log = logging.getLogger("pitcrew")


class Waker:
    def __init__(self, watched: Mapping[str, Watched], hosts: Hosts, discovery: Discovery,
                 servers: ServerWatch, is_alive: Callable[[int, float | None], bool],
                 reader: Reader,
                 feed: Callable[[Watched, Observation], tuple[Action, ...]]) -> None:
        """`discovery`, `servers`, `is_alive`: the local ones (a remote terminal's come from
        its host)."""
        self.watched, self.hosts, self.discovery, self.servers = watched, hosts, discovery, servers
        self.is_alive, self.reader, self.feed = is_alive, reader, feed

    def wake(self, key: str) -> None:
        w = self.watched.get(key)
        if w is None:
            return
        parts = self.hosts.parts_for(key, self.discovery, self.servers, self.is_alive)
        if parts is None:
            return          # the host is down: woken again when it is back (service/hosts.py)
        discovery, servers, alive = parts
        try:
            discovery.rescan_pane(w.pane_id)   # the user may have restarted it by hand
            w = self.watched.get(key)
            if w is None:
                return
            why = servers.changed_for(w, alive)
        except TmuxError as exc:      # a remote link that dropped just now
            log.info("%s: %s", key, exc)
            return
        if why is not None:
            self.feed(w, Superseded(why))
            return
        reading = self.reader.read(w)
        inc = w.state.incident
        # working again by itself: it printed since the incident opened — for a task that went
        # quiet, more than its spinners and timers (a stalled stream keeps those moving)
        moved = w.progress_wall if inc is not None and inc.trigger == "task went quiet" \
            else w.last_output_wall
        active = None if inc is None else moved > inc.opened_at + 0.5
        self.feed(w, Tick(reading.screen, reading.alive if reading.screen else False, active))
