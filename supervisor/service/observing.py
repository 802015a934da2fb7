"""Turning readings into the core's observations: prompts starting and finishing, a task going
quiet, the agent exiting.

An agent at rest (idle, or a draft in its box) waits for input: leaving rest means a prompt
was sent, returning means it finished; a new prompt echo on screen also means one was
accepted. A prompt within moments of Pitcrew's own typing, matching what it typed, is
Pitcrew's follow-up (it keeps the incident's attempt count), not a new prompt from the user.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from pitcrew.supervisor.adapters import processes, sessions
from pitcrew.supervisor.adapters.tmux import PaneInfo
from pitcrew.supervisor.core.records import (
    Observation,
    ProcessExited,
    PromptSubmitted,
    ScreenSeen,
    TaskFinished,
    WentQuiet,
)
from pitcrew.supervisor.core.screen import ScreenState
from pitcrew.supervisor.service.ports import Changed, Clock
from pitcrew.supervisor.service.reading import Reader
from pitcrew.supervisor.service.watched import Watched
from pitcrew.supervisor.store.config import Config

log = logging.getLogger("pitcrew")

AT_REST = frozenset({ScreenState.IDLE, ScreenState.DRAFT})
CHECKED_WHEN_QUIET = frozenset({ScreenState.BUSY, ScreenState.UNKNOWN,
                                ScreenState.CONNECTION_LOST, ScreenState.RATE_LIMIT,
                                ScreenState.LOGIN_REQUIRED})
Feed = Callable[[Watched, Observation], object]


def same_prompt(a: str, b: str) -> bool:
    """Two readings of one echoed prompt (wrapping and cut-offs may differ between reads)."""
    a, b = " ".join(a.split()), " ".join(b.split())
    n = min(len(a), len(b), 60)
    return a[:n] == b[:n]


def session_of(w: Watched) -> str | None:
    """The agent's session id from the CLI's own files (its HOME and config-dir variables)."""
    env = processes.environ(w.agent_pid) if w.agent_pid else {}
    home = Path(env["HOME"]) if env.get("HOME") else None
    ref = sessions.find_session(w.provider.sessions, w.cwd, home=home, environ=env or None,
                                newer_than=w.agent_started)
    return ref.session_id if ref else w.state.session_id


class Observer:
    def __init__(self, reader: Reader, clock: Clock, feed: Feed, changed: Changed,
                 config: Callable[[], Config],
                 diagnose: Callable[[Watched, float], None],
                 pane: Callable[[str], PaneInfo | None],
                 session: Callable[[Watched], str | None] = session_of) -> None:
        self.reader = reader
        self.clock = clock
        self.feed = feed
        self.changed = changed
        self.config = config
        self.diagnose = diagnose
        self.pane = pane
        self.session = session

    def screen(self, w: Watched) -> None:
        """The pane printed something: read it, and tell the core what that means."""
        before = w.screen.state if w.screen is not None else None
        reading = self.reader.read(w)
        w.dirty = False
        screen = reading.screen
        if screen is None:
            return
        now_state = screen.state
        if now_state is not before:
            w.note_state(now_state.value, self.clock.wall())
            self.changed()
            log.info("%s: %s%s", w.key, now_state.value,
                     f" (was {before.value})" if before is not None else "")
        if not reading.alive:
            self.feed(w, ScreenSeen(screen, reading.alive))
            return   # a gone agent starts and finishes nothing; its exit is reported apart
        echoed = w.prompt_text(reading.text)
        new_echo = bool(echoed) and w.last_echo is not None and not same_prompt(echoed,
                                                                                w.last_echo)
        w.last_echo = echoed
        started = now_state not in AT_REST and now_state is not ScreenState.UNKNOWN
        if new_echo and w.state.task is not None:
            # a new prompt was accepted, so the one before it has finished (a read in between
            # was missed): finish it first, then start the new one
            self.feed(w, TaskFinished(session_id=self.session(w)))
        if (new_echo or (started and (before is None or before in AT_REST))) \
                and w.state.task is None:
            by_us = w.is_own_prompt(echoed, self.clock.mono())
            prompt = (w.typed_text if by_us else echoed) or "(a prompt)"
            if by_us:
                w.typed_text, w.typed_at = "", None
            self.feed(w, PromptSubmitted(prompt, by_pitcrew=by_us,
                                         session_id=self.session(w)))
        elif (now_state in AT_REST and w.state.task is not None
              and before is not None and before not in AT_REST):
            self.feed(w, TaskFinished(session_id=self.session(w)))
        self.feed(w, ScreenSeen(screen, reading.alive))

    def went_quiet(self, w: Watched, quiet_for: float) -> None:
        """A running task stopped printing: With AI, a checker reads the screen first."""
        reading = self.reader.read(w)
        if not reading.alive or reading.screen is None:
            return
        config = self.config()
        if (config.diagnosis and config.diagnosis_mode == "ai"
                and reading.screen.state in CHECKED_WHEN_QUIET):
            self.diagnose(w, quiet_for)
            return
        self.feed(w, WentQuiet(reading.screen, quiet_for, confirmed_by="local classifier"))

    def exited(self, w: Watched, pid: int) -> None:
        """The agent process `pid` is gone: its exit status (when tmux has it) to the core."""
        generation = w.pid_generation[pid]
        pane = self.pane(w.pane_id)
        status = pane.dead_status if pane is not None and pane.dead else None
        signal = pane.dead_signal if pane is not None and pane.dead else None
        reading = self.reader.read(w)
        if w.agent_pid == pid:
            w.agent_pid = None
        log.info("%s: %s exited (status %s, signal %s)", w.key, w.provider.display_name,
                 status, signal)
        w.note_state("exited", self.clock.wall())
        self.feed(w, ProcessExited(generation, status, signal, reading.screen))
