"""Who sits in which seat, and handing a seat to its backup agent.

Seats come from config.toml; which agent holds each seat and which terminals sit in it are
state (state.json): a terminal sits in a seat when Pitcrew launched it there or the user
bound it. A failover launches the next installed backup in a new window of the same tmux
session, in the seat's directory, and queues a task brief for it as a delivery (typed when
the backup is ready, confirmed like any message). The old pane stays open; nothing ever
switches back by itself.
"""

from __future__ import annotations

import logging
import os
import shutil
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from pitcrew.supervisor.adapters import git, sessions, transcripts
from pitcrew.supervisor.adapters.notifier import Message
from pitcrew.supervisor.core import brief as briefs
from pitcrew.supervisor.core.records import Badge, Decision
from pitcrew.supervisor.core.seats import AgentChoice, Seat
from pitcrew.supervisor.providers.loader import Registry
from pitcrew.supervisor.providers.model import Provider
from pitcrew.supervisor.service.ports import (
    Clock,
    LedgerPort,
    NotifyPort,
    Persist,
    TmuxPort,
)
from pitcrew.supervisor.service.watched import Watched

log = logging.getLogger("pitcrew")

QueueBrief = Callable[[str, str], object]     # (terminal key, text) → queued delivery
LookAgain = Callable[[str], None]             # re-read a pane soon


def launch_command(provider: Provider, choice: AgentChoice
                   ) -> tuple[tuple[str, ...], str | None]:
    """The provider's launch argv for `choice`, and the session id Pitcrew gave it (a CLI
    that takes one at launch: `[launch] session_id`), or None."""
    argv = provider.launch.argv.render(provider.launch.model_args(choice.model))
    if not provider.launch.session_id:
        return argv, None
    sid = str(uuid.uuid4())
    return argv + tuple(part.replace("{session_id}", sid)
                        for part in provider.launch.session_id), sid


def launch_argv(provider: Provider, choice: AgentChoice) -> tuple[str, ...]:
    return launch_command(provider, choice)[0]


def installed(provider: Provider) -> bool:
    exe = provider.launch.argv.argv[0]
    return shutil.which(exe) is not None


def load(saved: object) -> tuple[dict[str, str], dict[str, str]]:
    """(holders, terminals) from state.json; anything that is not a str → str table is empty."""
    raw = saved if isinstance(saved, Mapping) else {}

    def table(value: object) -> dict[str, str]:
        if not isinstance(value, Mapping):
            return {}
        return {str(k): str(v) for k, v in value.items() if isinstance(v, str)}

    return table(raw.get("holders")), table(raw.get("terminals"))


class SeatBook:
    def __init__(self, seats: Callable[[], tuple[Seat, ...]], registry: Registry,
                 tmux: TmuxPort, clock: Clock, ledger: LedgerPort, gate: NotifyPort,
                 persist: Persist, queue_brief: QueueBrief, look_again: LookAgain,
                 saved: object = None, is_installed: Callable[[Provider], bool] = installed,
                 relieve: Callable[[Watched, str], None] = lambda w, why: None) -> None:
        self.seats = seats
        self.registry = registry
        self.tmux = tmux
        self.clock = clock
        self.ledger = ledger
        self.gate = gate
        self.persist = persist
        self.queue_brief = queue_brief
        self.look_again = look_again
        self.is_installed = is_installed
        self.relieve = relieve      # the old pane's incident is closed: it is off the task
        self.holders, self.terminals = load(saved)
        self._switching: set[str] = set()

    def to_json(self) -> dict[str, Any]:
        return {"holders": dict(self.holders), "terminals": dict(self.terminals)}

    def seat(self, name: str) -> Seat | None:
        return next((s for s in self.seats() if s.name == name), None)

    def seat_of(self, key: str) -> Seat | None:
        name = self.terminals.get(key)
        return self.seat(name) if name else None

    def bind(self, seat_name: str, key: str) -> None:
        self.terminals[key] = seat_name
        self.persist()
        log.info("%s: sits in seat %s", key, seat_name)

    def holder(self, seat: Seat) -> AgentChoice:
        label = self.holders.get(seat.name)
        return next((a for a in seat.agents if a.label() == label), seat.primary)

    def next_backup(self, seat: Seat) -> AgentChoice | None:
        agents = seat.agents
        current = self.holder(seat)
        start = agents.index(current) + 1 if current in agents else 1
        for choice in agents[start:]:
            provider = self.registry.get(choice.provider)
            if provider is not None and self.is_installed(provider):
                return choice
        return None

    def has_backup(self, w: Watched) -> bool:
        seat = self.seat_of(w.key)
        return seat is not None and self.next_backup(seat) is not None

    def seated(self, w: Watched) -> bool:
        return self.seat_of(w.key) is not None

    def fail_over(self, w: Watched, reason: str) -> None:
        seat = self.seat_of(w.key)
        if seat is None or w.key in self._switching:
            return
        backup = self.next_backup(seat)
        if backup is None:
            self.gate.offer(Message(
                f'Seat "{seat.name}" has no installed backup left',
                f"{w.provider.display_name}: {reason}", f"seat:{seat.name}:no-backup", w.key))
            return
        provider = self.registry.get(backup.provider)
        assert provider is not None
        pane = self.tmux.pane(w.pane_id)
        session = pane.session_name if pane is not None else (seat.session or seat.name)
        host = w.pane_id.rpartition(":")[0]   # a remote host's pane (`gpu1:%3`): open there
        cwd = seat.cwd if host else os.path.expanduser(seat.cwd)   # `~` is the host's own
        session = f"{host}:{session}" if host else session
        self._switching.add(w.key)
        try:
            new_pane = self.tmux.new_window(session, launch_argv(provider, backup), cwd,
                                            name=f"{seat.name}-{backup.provider}")
            self.tmux.set_remain_on_exit(new_pane)
        except Exception as exc:  # the tmux or the directory may be gone; the backup may
            # have died at once: the seat stays where it was, and may be tried again
            log.error("seat %s: could not start %s: %s", seat.name, backup.label(), exc)
            self._switching.discard(w.key)
            return
        new_key = new_pane if ":" in new_pane else f"{self.tmux.label}:{new_pane}"
        self.holders[seat.name] = backup.label()
        self.terminals[new_key] = seat.name
        text = self.task_brief(w, seat, provider, reason)
        self.queue_brief(new_key, text)
        inc = w.state.incident
        prompt = inc.prompt if inc else (w.state.task or "")
        self.ledger.append(Decision(
            Badge.SWITCHED, self.clock.wall(), w.state.terminal, w.state.agent, prompt,
            w.state.project, "seat failover", f"{reason}; {provider.display_name} took seat "
            f"{seat.name} in a new window ({new_pane})", inc.attempts if inc else 0,
            {"seat": seat.name, "from": w.provider.name, "to": backup.label(),
             "pane": new_pane, "brief_chars": len(text)}))
        self.gate.offer(Message(
            f'Seat "{seat.name}" switched to {provider.display_name}',
            f"{w.provider.display_name} stopped ({reason}); the task continues in {new_pane}.",
            f"seat:{seat.name}:switched:{new_pane}", new_key))
        log.info("seat %s: %s → %s in %s", seat.name, w.provider.name, backup.label(), new_pane)
        self.terminals.pop(w.key, None)      # the old pane no longer sits in the seat
        self._switching.discard(w.key)
        self.relieve(w, f"the seat's task went to {provider.display_name} in {new_pane}")
        self.persist()
        self.look_again(new_pane)

    def task_brief(self, w: Watched, seat: Seat, to: Provider, reason: str) -> str:
        ref = sessions.find_session(w.provider.sessions, w.cwd) if w.cwd else None
        progress = transcripts.read_progress(w.provider.name, ref.path if ref else None)
        inc = w.state.incident
        prompt = inc.prompt if inc else (w.state.task or "")
        return briefs.build_brief(
            seat=seat.name, prompt=prompt, project=os.path.expanduser(seat.cwd),
            from_agent=w.provider.display_name, to_agent=to.display_name, reason=reason,
            progress=progress, git=git.git_status(os.path.expanduser(seat.cwd)),
            seat_brief=seat.brief)
