"""What reaches the supervisor from outside its own watching: commands, hooks, settings.

Commands come from the command spool (`pitcrew autopilot …`, `send`, `seat bind`, `launch`)
and, in the tray app, straight from the UI thread (`Supervisor.command`); both are the plain
records of `supervisor.view`, applied here on the supervisor's thread, so a UI click and a
CLI call do exactly the same thing. Hook reports come from `pitcrew hook …`. A changed
config.toml is re-read between events.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pitcrew.supervisor.core.autopilot import resume_now, set_mode
from pitcrew.supervisor.core.records import PromptSubmitted, TaskFinished
from pitcrew.supervisor.service.deliveries import resolve_terminal
from pitcrew.supervisor.store import config_edit
from pitcrew.supervisor.store.config import check_setting, load_config
from pitcrew.supervisor.store.state_store import Snapshot

if TYPE_CHECKING:
    from pitcrew.supervisor.service.loop import Supervisor

log = logging.getLogger("pitcrew")

# What the UI may change in config.toml (the rest is for the user's editor).
SETTABLE = frozenset({("autopilot", "enabled"), ("autopilot", "ask_to_continue"),
                      ("diagnosis", "enabled"), ("diagnosis", "mode"),
                      ("diagnosis", "checkers")})


class Inbox:
    def __init__(self, sup: Supervisor) -> None:
        self.sup = sup
        self._config_mtime = _mtime(sup.app.paths.config_file)

    # -- settings ----------------------------------------------------------------------------

    def reload_settings(self, force: bool = False) -> None:
        sup = self.sup
        mtime = _mtime(sup.app.paths.config_file)
        if mtime == self._config_mtime and not force:
            return
        self._config_mtime = mtime
        loaded = load_config(sup.app.paths.config_file)
        for problem in loaded.errors:
            log.warning("%s", problem)
        before = sup.mode()
        sup.app = dataclasses.replace(sup.app, config=loaded.config)
        sup.problems = tuple(loaded.errors)
        sup.changed()
        if sup.mode() != before:
            self.mode_changed()

    def set_setting(self, section: str, key: str, value: Any) -> bool:
        """Validate like config.toml's loader, then write it with comments kept."""
        if (section, key) not in SETTABLE:
            log.warning("ignoring a change to %s.%s: not a UI setting", section, key)
            return False
        try:
            check_setting(section, key, value)
            config_edit.set_value(self.sup.app.paths.config_file, section, key, value)
        except (ValueError, OSError) as exc:
            log.warning("cannot set %s.%s: %s", section, key, exc)
            return False
        self.reload_settings(force=True)
        return True

    # -- commands ----------------------------------------------------------------------------

    def apply(self, record: Mapping[str, Any]) -> None:
        sup = self.sup
        sup.changed()
        if isinstance(send := record.get("send"), dict):
            sup.deliveries.queue(str(send.get("terminal")), str(send.get("text", "")),
                                 delivery_id=str(send.get("id")) if send.get("id") else None,
                                 wait=send.get("wait") is True)
            return
        if isinstance(bind := record.get("bind"), dict):
            key = resolve_terminal(str(bind.get("terminal")), sup.watched) or str(
                bind.get("terminal"))
            sup.seats.bind(str(bind.get("seat")), key)
            return
        if isinstance(change := record.get("set"), dict):
            self.set_setting(str(change.get("section")), str(change.get("key")),
                             change.get("value"))
            return
        if isinstance(terminal := record.get("resume_now"), str):
            self.resume_now(terminal)
            return
        if record.get("consent_asked"):
            sup.snapshot = dataclasses.replace(
                sup.snapshot, extra={**sup.snapshot.extra, "consent_asked": True})
            sup.persist()
            return
        mode = record.get("autopilot_mode")
        if mode in ("on", "off"):
            # the same as `pitcrew autopilot on|off`: Off also clears a pause, On grants consent
            self.set_setting("autopilot", "enabled", mode == "on")
            record = {"autopilot": "resume", **({"consent": "grant"} if mode == "on" else {})}
        elif mode in ("pause", "resume"):
            record = {"autopilot": mode}
        before = sup.mode()
        sup.snapshot = apply_state_record(sup.snapshot, record)
        sup.paused = sup.snapshot.paused
        sup.persist()
        if sup.mode() != before:
            self.mode_changed()

    def resume_now(self, terminal: str) -> None:
        sup = self.sup
        key = resolve_terminal(terminal, sup.watched) or terminal
        w = sup.watched.get(key)
        if w is None:
            log.warning("resume now: no terminal %s", terminal)
            return
        w.state, actions = resume_now(w.state, sup.clock(), sup.context_for(w), sup.rng)
        if not actions:
            log.info("%s: nothing to resume now", key)
        for action in actions:
            sup.executor.run(w, action)
        sup.persist()

    def mode_changed(self) -> None:
        sup = self.sup
        log.info("Autopilot: %s", sup.status_line())
        for w in sup.watched.values():
            w.state, actions = set_mode(w.state, sup.mode(), sup.clock(), sup.context_for(w),
                                        sup.rng)
            for action in actions:
                sup.executor.run(w, action)
        sup.persist()

    # -- hooks -------------------------------------------------------------------------------

    def apply_hook(self, record: Mapping[str, object]) -> None:
        sup = self.sup
        pane = record.get("pane")
        w = sup.watched.get(f"{sup.server}:{pane}") if isinstance(pane, str) else None
        if w is None:
            return
        event = record.get("event")
        raw_sid = record.get("session_id")
        sid = raw_sid if isinstance(raw_sid, str) and raw_sid else None
        if sid:
            w.state = dataclasses.replace(w.state, session_id=str(sid))
        if event == "UserPromptSubmit":
            sup.deliveries.hook_prompt(w.key, str(record.get("prompt") or ""))
            by_us = w.is_own_prompt(str(record.get("prompt") or ""), time.monotonic())
            sup.feed(w, PromptSubmitted(str(record.get("prompt") or "(a prompt)"),
                                        by_pitcrew=by_us, session_id=sid))
        elif event == "Stop" and w.state.task is not None:
            sup.feed(w, TaskFinished(session_id=sid))


def apply_state_record(snap: Snapshot, record: Mapping[str, Any]) -> Snapshot:
    """Pause/resume and consent: the state.json part of a command."""
    paused = {"pause": True, "resume": False}.get(str(record.get("autopilot")), snap.paused)
    consent = {"grant": True, "revoke": False}.get(str(record.get("consent")), snap.consent)
    return Snapshot(snap.terminals, paused, consent, snap.extra)


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
