"""Keeping the fleet record (core/fleet.py) while watching: where each agent is, how it was
started, its session and whether it works on a task, so `pitcrew restore` can put them all
back after the tmux server or the machine restarted.

The loop calls `tick()` after each housekeeping pass. It costs nothing while no agent changed
(a signature of the watched terminals is compared); after a change, and every LOOK_EVERY
seconds anyway (a window renamed or split sends no agent event), it lists the server's panes
and windows, merges them into the record and writes fleet.json only when the record changed,
at most once every WRITE_EVERY seconds. The server's identity is read around the listing, so
panes of a server that restarted meanwhile are never taken for the old one's.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Protocol

from pitcrew.supervisor.adapters.processes import LaunchContext
from pitcrew.supervisor.adapters.tmux import PaneInfo
from pitcrew.supervisor.core.fleet import (
    AgentPlace,
    Launched,
    PanePlace,
    WindowPlace,
    from_before,
    merge,
)
from pitcrew.supervisor.service.watched import Watched
from pitcrew.supervisor.store import fleet_file

log = logging.getLogger("pitcrew")

WRITE_EVERY = 1.0    # seconds: fleet.json is written at most this often
LOOK_EVERY = 10.0    # seconds: the server is looked at this often even when no agent changed

Write = Callable[[Path, fleet_file.Record], None]


class PlacesReads(Protocol):
    @property
    def label(self) -> str: ...
    def ident(self) -> str | None: ...
    def layouts(self) -> dict[tuple[str, int], str]: ...


class FleetKeeper:
    def __init__(self, path: Path, places: PlacesReads, list_panes: Callable[[], list[PaneInfo]],
                 watched: Mapping[str, Watched], mono: Callable[[], float],
                 write: Write = fleet_file.save) -> None:
        self.path, self.places, self.list_panes = path, places, list_panes
        self.watched, self.mono, self.write = watched, mono, write
        loaded = fleet_file.load(path, move_aside=True)
        if loaded.problem:
            log.warning("%s", loaded.problem)
        self.record: dict[str, tuple[WindowPlace, ...]] = dict(loaded.record)
        self._sig: object = None
        self._due = True
        self._looked = self._written = -1e9
        self._failed = False

    @property
    def windows(self) -> tuple[WindowPlace, ...]:
        return self.record.get(self.places.label, ())

    def from_before(self) -> tuple[WindowPlace, ...]:
        """The windows recorded from an earlier server (what a restore would bring back)."""
        return from_before(self.windows, self.places.ident())

    def tick(self) -> None:
        now = self.mono()
        sig = signature(self.watched)
        if sig != self._sig or now - self._looked >= LOOK_EVERY:
            self._sig, self._due = sig, True
        if not self._due or now - self._written < WRITE_EVERY:
            return
        self._due, self._looked = False, now
        ident = self.places.ident()
        if ident is None:
            return                          # no server: the record stays as it is
        panes, layouts = self.list_panes(), self.places.layouts()
        if self.places.ident() != ident:
            self._due = True                # it restarted while we listed: look again
            return
        windows = merge(self.windows, seen(self.watched, panes, layouts, ident), ident,
                        {(p.session_name, p.window_index) for p in panes})
        if windows == self.windows:
            return
        record = {**self.record, self.places.label: windows}
        try:
            self.write(self.path, record)
        except OSError as exc:
            if not self._failed:
                log.error("cannot write %s (%s); trying again", self.path, exc.strerror or exc)
            self._failed, self._due = True, True
            return
        self.record, self._written, self._failed = record, now, False


def signature(watched: Mapping[str, Watched]) -> object:
    """What, when it changes, changes the record (cheap: no tmux, no files)."""
    return tuple(sorted((k, w.pane_id, w.agent_pid, w.state.session_id, w.state.task,
                         w.state.server, w.launch is not None) for k, w in watched.items()))


def seen(watched: Mapping[str, Watched], panes: list[PaneInfo],
         layouts: Mapping[tuple[str, int], str], ident: str) -> tuple[WindowPlace, ...]:
    """The windows of this server (`ident`) with an agent in them, as they are now. An agent
    counts while it runs or while its incident is open (crashed, waiting to be resumed); its
    launch must be known (it was seen running)."""
    by_id = {p.pane_id: p for p in panes}
    agents: dict[tuple[str, int], list[AgentPlace]] = {}
    for w in watched.values():
        pane = by_id.get(w.pane_id)
        if pane is None or w.launch is None or w.state.server != ident or (
                w.agent_pid is None and w.state.incident is None):
            continue
        agents.setdefault((pane.session_name, pane.window_index), []).append(AgentPlace(
            pane.pane_index, w.provider.name, launched(w.launch), w.state.session_id,
            w.state.task, w.provider.display_name))
    out = []
    for (session, index), found in agents.items():
        window = sorted((p for p in panes if (p.session_name, p.window_index) == (session, index)),
                        key=lambda p: p.pane_index)
        out.append(WindowPlace(session, index, window[0].window_name,
                               layouts.get((session, index), ""),
                               tuple(PanePlace(p.pane_index, p.current_path) for p in window),
                               tuple(sorted(found, key=lambda a: a.pane)), ident))
    return tuple(sorted(out, key=lambda w: (w.session, w.index)))


def launched(ctx: LaunchContext) -> Launched:
    return Launched(ctx.style.value, ctx.program, ctx.cwd, dict(ctx.env), ctx.shell_name)
