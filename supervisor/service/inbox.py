"""What reaches the supervisor from outside its own watching: commands and hook reports.

Commands are the typed records of `api.commands`: straight from the UI thread in the tray
app, or parsed from the command spool (`pitcrew autopilot …`, `send`, `seat bind`,
`launch`); both are applied here on the loop's thread, so a click and a CLI call do exactly
the same thing. Hook reports (`pitcrew hook …`, written by the CLIs' own hooks) become the
core's observations.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Mapping

from pitcrew.supervisor.api.commands import (
    Bind,
    ChangeState,
    Command,
    ConsentAsked,
    Rerun,
    ResumeNow,
    Send,
    SetAutopilot,
    SetSetting,
)
from pitcrew.supervisor.core.brief import UNKNOWN_PROMPT
from pitcrew.supervisor.core.records import Observation, PromptSubmitted, TaskFinished
from pitcrew.supervisor.core.settings import Mode
from pitcrew.supervisor.service.autopilot import AutopilotService
from pitcrew.supervisor.service.deliveries import Deliveries, resolve_terminal
from pitcrew.supervisor.service.ports import Changed, Clock
from pitcrew.supervisor.service.reruns import Reruns
from pitcrew.supervisor.service.seats import SeatBook
from pitcrew.supervisor.service.settings import Settings
from pitcrew.supervisor.service.statebook import StateBook
from pitcrew.supervisor.service.watched import Watched

log = logging.getLogger("pitcrew")


class Inbox:
    def __init__(self, watched: dict[str, Watched], server: Callable[[], str], clock: Clock,
                 settings: Settings, book: StateBook, autopilot: AutopilotService,
                 deliveries: Deliveries, seats: SeatBook, reruns: Reruns,
                 changed: Changed) -> None:
        self.watched = watched
        self.server = server
        self.clock = clock
        self.settings = settings
        self.book = book
        self.autopilot = autopilot
        self.deliveries = deliveries
        self.seats = seats
        self.reruns = reruns
        self.changed = changed

    # -- settings ----------------------------------------------------------------------------

    def reload_settings(self, force: bool = False) -> None:
        before = self.autopilot.mode()
        if self.settings.reload(force):
            self.changed()
            self.after_mode(before)

    def after_mode(self, before: Mode) -> None:
        if self.autopilot.mode() != before:
            log.info("Autopilot: %s", self.autopilot.status_line())
            self.autopilot.mode_changed(self.watched)

    # -- commands ----------------------------------------------------------------------------

    def apply(self, command: Command) -> None:
        self.changed()
        before = self.autopilot.mode()
        match command:
            case Send(terminal=terminal, text=text, id=delivery_id, wait=wait):
                self.deliveries.queue(terminal, text, delivery_id=delivery_id, wait=wait)
            case Bind(seat=seat, terminal=terminal):
                self.seats.bind(seat, resolve_terminal(terminal, self.watched) or terminal)
            case SetSetting(section=section, key=key, value=value):
                self.settings.set(section, key, value)
            case ResumeNow(terminal=terminal):
                self.resume_now(terminal)
            case Rerun(terminal=terminal):
                self.rerun(terminal)
            case ConsentAsked():
                self.book.change(consent_asked=True)
            case SetAutopilot(action="on" | "off" as action):
                # the same as `pitcrew autopilot on|off`: Off also clears a pause, On grants
                # the screen-read consent; a config.toml it cannot write changes nothing
                if self.settings.set("autopilot", "enabled", action == "on"):
                    self.book.change(paused=False, consent=True if action == "on" else None)
            case SetAutopilot(action=action):
                self.book.change(paused=action == "pause")
            case ChangeState(paused=paused, consent=consent):
                self.book.change(paused=paused, consent=consent)
        self.after_mode(before)

    def resume_now(self, terminal: str) -> None:
        key = resolve_terminal(terminal, self.watched) or terminal
        w = self.watched.get(key)
        if w is None:
            log.warning("resume now: no terminal %s", terminal)
            return
        if not self.autopilot.resume_now(w):
            log.info("%s: nothing to resume now", key)

    def rerun(self, terminal: str) -> None:
        key = resolve_terminal(terminal, self.watched) or terminal
        w = self.watched.get(key)
        if w is None:
            log.warning("rerun: no terminal %s", terminal)
            return
        self.reruns.rerun(w)

    # -- hooks -------------------------------------------------------------------------------

    def apply_hook(self, record: Mapping[str, object],
                   feed: Callable[[Watched, Observation], object]) -> None:
        pane = record.get("pane")
        w = self.watched.get(f"{self.server()}:{pane}") if isinstance(pane, str) else None
        if w is None:
            return
        event = record.get("event")
        raw_sid = record.get("session_id")
        sid = raw_sid if isinstance(raw_sid, str) and raw_sid else None
        if sid:
            w.state = dataclasses.replace(w.state, session_id=sid)
        if event == "UserPromptSubmit":
            prompt = str(record.get("prompt") or "")
            self.deliveries.hook_prompt(w.key, prompt)
            by_us = w.is_own_prompt(prompt, self.clock.mono())
            feed(w, PromptSubmitted(prompt or UNKNOWN_PROMPT, by_pitcrew=by_us, session_id=sid))
        elif event == "Stop" and w.state.task is not None:
            feed(w, TaskFinished(session_id=sid))
