"""The shell's view of one agent terminal: what it last saw, and when.

The core keeps the decision state (`TerminalState`); this keeps the readings that produce
observations: the agent pid (and which relaunch generation it belongs to), when the pane last
printed, the last screen reading, and when Pitcrew itself last typed there (so the busy
screen that follows is Pitcrew's own follow-up, not a new prompt from the user).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from pitcrew.supervisor.adapters.processes import LaunchContext
from pitcrew.supervisor.api.view import TIMELINE_SECONDS
from pitcrew.supervisor.core.classifier import classify, newest_turn
from pitcrew.supervisor.core.loops import Step
from pitcrew.supervisor.core.records import TerminalState
from pitcrew.supervisor.core.screen import Classification, ScreenState
from pitcrew.supervisor.providers.model import Provider

OWN_TYPING_WINDOW = 15.0   # seconds: only a prompt this soon after Pitcrew typed can be Pitcrew's
UNREAD_ECHO_WINDOW = 3.0   # … and, when its echo can't be read, only this soon


@dataclass
class Watched:
    key: str                      # "<server>:<pane id>"
    pane_id: str
    provider: Provider
    state: TerminalState
    cwd: str
    agent_pid: int | None = None
    agent_started: float | None = None
    pid_generation: dict[int, int] = field(default_factory=dict)
    last_output: float = 0.0      # monotonic
    last_output_wall: float = 0.0  # epoch seconds of the same moment (compared with incidents)
    dirty: bool = True
    last_read: float = 0.0        # monotonic
    screen: Classification | None = None
    last_text: str = ""           # the text of the last reading
    last_alive: bool = False      # whether the agent ran at the last reading
    last_cursor: int | None = None  # the cursor's line in `last_text`
    launch: LaunchContext | None = None   # how the agent was started (captured while it ran)
    relaunched_pid: int | None = None     # the pane's (or shell's) pid right after a relaunch
    kept_by_us: bool = False      # Pitcrew set remain-on-exit on this pane (tmux would not)
    was_at_rest: bool = True      # at rest (idle or a draft) since the last task started
    input_prefix: str = ""        # the input row of an empty prompt (CLIs without `input`)
    typed_input: str = ""         # what the user has typed on that row so far
    prompt_rows: int = 0          # prompts echoed on such rows at the last rest
    screen_from: str | None = None  # the resume command typed at its shell: above it is the
                                    # screen of the process before (classified no more)
    left_below: tuple[str, ...] = ()  # the rows under that command's row when it was typed:
                                      # what the dead program left there (see `since`)
    quiet_reported: bool = False
    session_doubt: str | None = None   # why its session could not be told from another's
    typed_at: float | None = None # monotonic
    typed_text: str = ""
    last_echo: str | None = None  # the newest prompt echo seen (None: not read yet)
    timeline: list[tuple[float, str]] = field(default_factory=list)   # (since, state)
    # task timeouts and loop detection (service/watchdog.py); monotonic seconds
    task_started: float | None = None     # the user's prompt started the running task
    last_progress: float = 0.0            # the screen last changed beyond its spinners
    progress_sig: str = ""                # the screen without its spinners, at that change
    delivered_at: float | None = None     # text typed; cleared once the agent gets busy
    delivered_sig: str = ""               # progress_sig when it was typed
    fired: set[str] = field(default_factory=set)   # timeouts fired since their clock started
    screen_steps: tuple[Step, ...] = ()   # distinct screen states of the running task
    transcript_from: int | None = None    # the session file's size when the task started
    transcript_path: str | None = None    # that session file (looked up once per task)
    fired_from: dict[str, float | None] = field(default_factory=dict)  # each fired timeout's
                                          # clock start: a clock that starts again re-arms it
    error_steps: tuple[Step, ...] = ()    # each showing of the CLI's own error line
    error_mark: tuple[str, str, int] | None = None   # the last showing (core.loops.error_seen)
    loop_stage: int = 0                   # 0 none, 1 diagnosed, 2 held
    loop_marks: dict[str, int] = field(default_factory=dict)  # steps per source (calls,
                                          # screen) seen when the loop was first diagnosed
    loop_checked: float = 0.0
    limit_seen: tuple[str, dt.datetime] | None = None   # a limit line, when it first appeared
    last_task: str = ""           # the newest task's prompt, kept after it finished (a rerun)

    @property
    def progress_wall(self) -> float:
        """Epoch seconds of the last progress (`last_progress` is monotonic; `last_output`
        and `last_output_wall` are one moment on both clocks)."""
        return self.last_output_wall - max(0.0, self.last_output - self.last_progress)

    def note_state(self, state: str, now: float) -> None:
        """Remember a change of state for the dashboard's timeline (the last 6 hours)."""
        if self.timeline and self.timeline[-1][1] == state:
            return
        self.timeline.append((now, state))
        horizon = now - TIMELINE_SECONDS
        while len(self.timeline) > 1 and self.timeline[1][0] <= horizon:
            self.timeline.pop(0)   # keep the segment that was running at the horizon

    def read(self, text: str, now: dt.datetime, local: dt.tzinfo,
             cursor: tuple[int, int] | None = None) -> Classification:
        """`cursor`: (column, line in `text`) of tmux's cursor, when known."""
        shown = since(text, self.screen_from, self.left_below)
        if cursor is not None:
            row = cursor[1] - (text.count("\n") - shown.count("\n"))
            cursor = (cursor[0], row) if row >= 0 else None
        screen = classify(shown, self.provider.screen, now, local, cursor)
        if screen.state is not ScreenState.RATE_LIMIT or not screen.evidence:
            self.limit_seen = None
        elif self.limit_seen is None or self.limit_seen[0] != screen.evidence:
            self.limit_seen = (screen.evidence, now)
        elif self.limit_seen[1] < now:
            # the same line read again: its reset as of when it appeared (SPEC §7), so one
            # shown before its reset and read after it is today's, not tomorrow's
            screen = classify(shown, self.provider.screen, self.limit_seen[1], local, cursor)
        return screen

    def is_own_prompt(self, echoed: str, mono_now: float) -> bool:
        """Whether the prompt that just started is the text Pitcrew typed (not the user's)."""
        if self.typed_at is None or mono_now - self.typed_at > OWN_TYPING_WINDOW:
            return False
        if not echoed:
            return mono_now - self.typed_at < UNREAD_ECHO_WINDOW
        echoed, typed = " ".join(echoed.split()), " ".join(self.typed_text.split())
        head = min(len(echoed), len(typed), 40)
        return head > 0 and echoed[:head] == typed[:head]

    def prompt_text(self, text: str) -> str:
        """The newest echoed prompt on screen (best effort), for the ledger and messages."""
        return newest_turn(text, self.provider.screen)


def is_working(screen: Classification | None) -> bool:
    return screen is not None and screen.state is ScreenState.BUSY


def is_ready(screen: Classification | None) -> bool:
    return screen is not None and screen.state is ScreenState.IDLE


def since(text: str, marker: str | None, left_below: tuple[str, ...] = ()) -> str:
    """The screen from the last line that holds `marker` on (the line itself left out).

    `left_below`: the rows that were under the marker's row before it was typed. A row that
    still holds the same text is what the dead program left there, not something the new one
    drew: it reads as blank. (Claude Code 2.1.197 killed at a bash prompt: bash's prompt takes
    the row of its input box's lower rule, and its status line, `esc to interrupt`, stays
    under the resume command until the resumed Claude draws over it — a second or two of a
    busy agent that is not there.)"""
    if not marker or marker not in text:
        return text
    at = text.rfind(marker)
    end = text.find("\n", at)
    shown = "" if end < 0 else text[end + 1:]
    if not left_below:
        return shown
    rows = shown.split("\n")
    for i, old in enumerate(left_below[:len(rows)]):
        if old.strip() and rows[i].rstrip() == old.rstrip():
            rows[i] = ""
    return "\n".join(rows)
