"""Reading one terminal's screen now: capture, classify, and whether its agent still runs.

Every part that needs a fresh look (the loop after output, the effects executor before it
types, deliveries confirming a message, a diagnosis) asks this one reader, so a reading is
always taken the same way and remembered on the terminal (`Watched.screen`, `.last_read`,
`.last_text`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass

from pitcrew.supervisor.adapters.tmux import PaneInfo
from pitcrew.supervisor.core.screen import Classification
from pitcrew.supervisor.service.ports import Clock, TmuxReads
from pitcrew.supervisor.service.watched import Watched

IsAlive = Callable[[int, float | None], bool]   # (pid, create time) → still that process


@dataclass(frozen=True, slots=True)
class Reading:
    screen: Classification | None     # None: the pane is gone
    alive: bool                       # the agent process runs
    text: str = ""                    # what was captured
    cursor_y: int | None = None       # the cursor's line in `text` (None: not known)


class Reader:
    def __init__(self, tmux: TmuxReads, clock: Clock, is_alive: IsAlive,
                 zone: Callable[[], dt.tzinfo]) -> None:
        self.tmux = tmux
        self.clock = clock
        self.is_alive = is_alive
        self.zone = zone
        self.reads = 0                # screens captured (tests count them)

    def read(self, w: Watched) -> Reading:
        snap = self.tmux.snapshot(w.pane_id)     # the cursor and the text of one moment
        if snap is None:
            return Reading(None, False)
        self.reads += 1
        pane, text = snap
        if pane.dead:   # its last screen is scrolled into history above "Pane is dead"
            dead_text = self.tmux.capture(w.pane_id, history=pane.height)
            if dead_text is None:
                return Reading(None, False)
            text = dead_text
        alive = (not pane.dead and w.agent_pid is not None
                 and self.is_alive(w.agent_pid, w.agent_started))
        line = None if pane.dead else cursor_line(text, pane)
        screen = w.read(text, dt.datetime.fromtimestamp(self.clock.wall(), dt.UTC), self.zone(),
                        None if line is None else (pane.cursor_x, line))
        w.screen, w.last_text, w.last_read = screen, text, self.clock.mono()
        w.last_alive, w.last_cursor = alive, line
        return Reading(screen, alive, text, line)

    def fresh(self, w: Watched, max_age: float) -> Reading:
        """The last reading if it is at most `max_age` seconds old, else a new one."""
        if w.screen is not None and self.clock.mono() - w.last_read < max_age:
            return Reading(w.screen, w.last_alive, w.last_text, w.last_cursor)
        return self.read(w)


def cursor_line(text: str, pane: PaneInfo) -> int | None:
    """The index in the captured `text` of the row the cursor is on. Counted from the bottom:
    `capture-pane -J` joins wrapped rows above, which shifts indices counted from the top."""
    rows = text.split("\n")
    if rows and rows[-1] == "":
        rows.pop()
    index = len(rows) - (pane.height - pane.cursor_y)
    return index if 0 <= index < len(rows) else None
