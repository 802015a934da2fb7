"""What a (re)start of the supervisor picks up, and what it keeps for the next one.

A start stops the checkers a killed Pitcrew left running, re-lists the panes, presses the
Enter of a line typed just before a kill, schedules again the waits state.json holds, closes
(with a ledger row) the open incidents whose pane is gone, and looks again at queued
messages. `launch_json` is the other half: how each agent was started, written to state.json
so a restart resumes it the same way. Split out of `service/loop.py`; like every part it gets
narrow ports, never the Supervisor.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping
from typing import Any

from pitcrew.supervisor.adapters import leftovers
from pitcrew.supervisor.adapters.processes import LaunchContext
from pitcrew.supervisor.core.autopilot import restore
from pitcrew.supervisor.core.records import Action, Badge, Decision
from pitcrew.supervisor.service.ports import Clock, LedgerPort
from pitcrew.supervisor.service.statebook import StateBook
from pitcrew.supervisor.service.watched import Watched

log = logging.getLogger("pitcrew")


class Startup:
    def __init__(self, owner: str, watched: Mapping[str, Watched], clock: Clock,
                 ledger: LedgerPort, book: StateBook, launches: dict[str, LaunchContext],
                 server: Callable[[], str], rescan: Callable[[], None],
                 finish_typed: Callable[[object], None],
                 run: Callable[[Watched, tuple[Action, ...]], None],
                 restore_deliveries: Callable[[], None],
                 sweep: Callable[[str], int] = leftovers.sweep) -> None:
        """`owner`: the data folder, which tags the checkers this Pitcrew starts (a sweep
        stops only those). `launches`: the Supervisor's own dict (discovery reads it too)."""
        self.owner, self.watched, self.clock, self.ledger = owner, watched, clock, ledger
        self.book, self.launches, self.server = book, launches, server
        self.rescan, self.finish_typed, self.run = rescan, finish_typed, run
        self.restore_deliveries, self.sweep = restore_deliveries, sweep

    def start(self) -> None:
        """What a (re)start picks up: the panes, the waits in state.json, queued messages;
        and checkers a killed Pitcrew left running are stopped."""
        os.environ[leftovers.OWNER_VAR] = self.owner
        self.sweep(os.environ[leftovers.OWNER_VAR])
        self.rescan()
        self.finish_typed(self.book.extra("typed"))   # a line typed, Enter not pressed
        for w in self.watched.values():
            self.run(w, restore(w.state, self.clock.wall()))
        self.close_lost_incidents()
        self.restore_deliveries()

    def close_lost_incidents(self) -> None:
        """Open incidents in state.json whose pane is not there any more: closed, with a
        ledger row saying why — never silently lost, never acted on elsewhere."""
        for key, state in list(self.book.snapshot.terminals.items()):
            inc = state.incident
            if key in self.watched or inc is None or not key.startswith(f"{self.server()}:"):
                continue
            self.ledger.append(Decision(
                Badge.SKIPPED, self.clock.wall(), state.terminal, state.agent, inc.prompt,
                state.project, inc.trigger, "did not act: the pane is gone (closed, or the "
                "tmux server restarted); the incident is closed", inc.attempts, {}))
            log.info("%s: closed the incident of a pane that is gone", key)
            self.launches.pop(key, None)
            self.book.forget(key)

    def launch_json(self) -> dict[str, Any]:
        """How each agent was started, for state.json (kept for panes not seen right now)."""
        for key, w in self.watched.items():
            if w.launch is not None:
                self.launches[key] = w.launch
        return {key: ctx.to_json() for key, ctx in self.launches.items()}
