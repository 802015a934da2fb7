"""What a (re)start of the supervisor picks up, and what it keeps for the next one.

A start stops the checkers a killed Pitcrew left running, re-lists the panes, presses the
Enter of a line typed just before a kill, schedules again the waits state.json holds, and
reconciles every terminal state.json knows with what is there now: an agent whose running
task (or open incident) ended while no watcher ran — a dead pane, its shell back at the
prompt — is told to the core as the exit it was (so a crash meanwhile is acted on once, with
the incident's count); a terminal whose pane is gone, or runs something else now, gets a
ledger row and is let go. It also looks again at queued messages. What Pitcrew typed last
(and has not yet seen taken) is kept too, so its own text is its own after a
restart. `launch_json` is the other half: how each agent was started, written to state.json
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
from pitcrew.supervisor.core.records import Action, Badge, Decision, Phase
from pitcrew.supervisor.service.ports import Clock, LedgerPort
from pitcrew.supervisor.service.statebook import StateBook
from pitcrew.supervisor.service.watched import Watched

log = logging.getLogger("pitcrew")
OWN_TYPING_KEPT = 600.0    # seconds: typing older than this at a restart is not looked for


class Startup:
    def __init__(self, owner: str, watched: Mapping[str, Watched], clock: Clock,
                 ledger: LedgerPort, book: StateBook, launches: dict[str, LaunchContext],
                 server: Callable[[], str], rescan: Callable[[], None],
                 finish_typed: Callable[[object], None],
                 run: Callable[[Watched, tuple[Action, ...]], None],
                 restore_deliveries: Callable[[], None],
                 gone_while_away: Callable[[Watched], None] = lambda w: None,
                 sweep: Callable[[str], int] = leftovers.sweep) -> None:
        """`owner`: the data folder, which tags the checkers this Pitcrew starts (a sweep
        stops only those). `launches`: the Supervisor's own dict (discovery reads it too)."""
        self.owner, self.watched, self.clock, self.ledger = owner, watched, clock, ledger
        self.book, self.launches, self.server = book, launches, server
        self.rescan, self.finish_typed, self.run = rescan, finish_typed, run
        self.restore_deliveries, self.sweep = restore_deliveries, sweep
        self.gone_while_away = gone_while_away

    def start(self) -> None:
        """What a (re)start picks up: the panes, the waits in state.json, queued messages;
        and checkers a killed Pitcrew left running are stopped."""
        os.environ[leftovers.OWNER_VAR] = self.owner
        self.sweep(os.environ[leftovers.OWNER_VAR])
        self.rescan()
        self.restore_typing(self.book.extra("own_typing"))
        self.finish_typed(self.book.extra("typed"))   # a line typed, Enter not pressed
        for w in self.watched.values():
            self.run(w, restore(w.state, self.clock.wall()))
        self.reconcile()
        self.close_lost_incidents()
        self.restore_deliveries()

    def reconcile(self) -> None:
        """Every terminal that was running a task, or whose incident had been acted on (its
        agent resumed and continued), and has no agent now: it ended while no watcher ran.
        Told to the core once, as the exit it was (with no running task the core does
        nothing); an incident that waits (its wake-up was just scheduled again) or is
        confirming a relaunch is left to that."""
        for w in list(self.watched.values()):
            st, inc = w.state, w.state.incident
            if w.agent_pid is not None or self.book.saved(w.key) is None:
                continue
            if (inc is None and st.task is None) or (
                    inc is not None and inc.phase not in (Phase.WATCHING, Phase.ASKING)):
                continue
            self.gone_while_away(w)

    def close_lost_incidents(self) -> None:
        """Open incidents and running tasks in state.json whose pane is not there any more,
        or runs no agent Pitcrew can pick up again (another program, a new shell): closed,
        with a ledger row saying why — never silently lost, never acted on elsewhere."""
        for key, state in list(self.book.snapshot.terminals.items()):
            inc = state.incident
            if key in self.watched or (inc is None and state.task is None) \
                    or not key.startswith(f"{self.server()}:"):
                continue
            what = "the incident is closed" if inc is not None else \
                "its running task was not resumed"
            self.ledger.append(Decision(
                Badge.SKIPPED, self.clock.wall(), state.terminal, state.agent,
                inc.prompt if inc is not None else state.task or "", state.project,
                inc.trigger if inc is not None else "process exited",
                "did not act: the pane is gone, or runs no agent Pitcrew can pick up again "
                "(closed, another program or shell in it, or the tmux server restarted "
                f"while Pitcrew was not running); {what}",
                inc.attempts if inc is not None else 0, {}))
            log.info("%s: let go of a terminal whose agent is not there any more", key)
            self.launches.pop(key, None)
            self.book.forget(key)

    def typing_json(self) -> dict[str, dict[str, Any]]:
        """What Pitcrew typed and has not seen taken yet, per terminal (wall clock), so the
        prompt it becomes is still Pitcrew's own after a restart."""
        mono, wall = self.clock.mono(), self.clock.wall()
        return {key: {"text": w.typed_text, "at": wall - (mono - w.typed_at)}
                for key, w in self.watched.items() if w.typed_text and w.typed_at is not None}

    def restore_typing(self, saved: object) -> None:
        """After a restart: text typed within `OWN_TYPING_KEPT` before it is Pitcrew's again;
        its window to be recognised starts now (its text must still match)."""
        if not isinstance(saved, dict):
            return
        wall = self.clock.wall()
        for key, entry in saved.items():
            w = self.watched.get(key) if isinstance(key, str) else None
            if w is None or not isinstance(entry, dict):
                continue
            text, at = entry.get("text"), entry.get("at")
            if isinstance(text, str) and text and isinstance(at, int | float) \
                    and wall - at <= OWN_TYPING_KEPT:
                w.typed_text, w.typed_at = text, self.clock.mono()

    def launch_json(self) -> dict[str, Any]:
        """How each agent was started, for state.json (kept for panes not seen right now)."""
        for key, w in self.watched.items():
            if w.launch is not None:
                self.launches[key] = w.launch
        return {key: ctx.to_json() for key, ctx in self.launches.items()}
