"""Turning readings into the core's observations: prompts starting and finishing, a task going
quiet, the agent exiting.

An agent at rest (idle, or a draft in its box) waits for input: leaving rest means a prompt
was sent, returning means it finished; a new prompt echo on screen also means one was
accepted. A prompt within moments of Pitcrew's own typing, matching what it typed, is
Pitcrew's follow-up (it keeps the incident's attempt count), not a new prompt from the user.
"""

from __future__ import annotations

import dataclasses
import logging
import signal as signals
from collections.abc import Callable
from pathlib import Path

from pitcrew.supervisor.adapters import ownership, processes, sessions
from pitcrew.supervisor.adapters.tmux import PaneInfo
from pitcrew.supervisor.core.autopilot import ACTING
from pitcrew.supervisor.core.brief import UNKNOWN_PROMPT
from pitcrew.supervisor.core.classifier import said_goodbye
from pitcrew.supervisor.core.loops import add_screen_step, screen_step
from pitcrew.supervisor.core.records import (
    Observation,
    ProcessExited,
    PromptSubmitted,
    ScreenSeen,
    TaskFinished,
    WentQuiet,
)
from pitcrew.supervisor.core.recovery import CONTINUE_MESSAGE, GOODBYE
from pitcrew.supervisor.core.screen import Classification, ScreenState
from pitcrew.supervisor.core.shell_report import is_report, shell_signal
from pitcrew.supervisor.core.timeouts import Timeout, progress_text
from pitcrew.supervisor.service.ports import Changed, Clock
from pitcrew.supervisor.service.reading import Reader
from pitcrew.supervisor.service.watched import Watched, since
from pitcrew.supervisor.store.config import Config

log = logging.getLogger("pitcrew")

AT_REST = frozenset({ScreenState.IDLE, ScreenState.DRAFT})
CHECKED_WHEN_QUIET = frozenset({ScreenState.BUSY, ScreenState.UNKNOWN,
                                ScreenState.CONNECTION_LOST, ScreenState.RATE_LIMIT,
                                ScreenState.LOGIN_REQUIRED})
Feed = Callable[[Watched, Observation], object]
ANSWER_LINES = 2        # new lines since Pitcrew typed that show the agent took it up: the
                        # echo of the message and at least one more (an instant answer)
SCREEN_STEPS = 50       # distinct screen states kept per task for the loop detector


def same_prompt(a: str, b: str) -> bool:
    """Two readings of one echoed prompt (wrapping and cut-offs may differ between reads)."""
    a, b = " ".join(a.split()), " ".join(b.split())
    n = min(len(a), len(b), 60)
    return a[:n] == b[:n]


def note_input(w: Watched, text: str, cursor_y: int | None, state: ScreenState) -> None:
    """What the user is typing, for CLIs whose provider file declares no input line: the
    cursor's row at rest is the input line; an empty prompt (idle) gives its prefix, and the
    same row with more after that prefix is the text typed so far."""
    if cursor_y is None:
        return
    rows = text.split("\n")
    line = rows[cursor_y].rstrip() if 0 <= cursor_y < len(rows) else ""
    if state is ScreenState.IDLE:
        w.input_prefix, w.typed_input = line, ""
        w.prompt_rows = len(_prompt_rows("\n".join(rows[:cursor_y]), line))
    elif w.input_prefix and line.startswith(w.input_prefix) and len(line) > len(w.input_prefix):
        w.typed_input = line[len(w.input_prefix):].strip()


def submitted_input(w: Watched, text: str, cursor_y: int | None) -> str | None:
    """The text typed on the input row (CLIs without `input`), once it was sent: that row is
    still on screen and the cursor has moved below it (something came after the Enter) —
    also when no busy phase was ever visible."""
    if not w.input_prefix:
        return None
    prefix, typed = w.input_prefix, w.typed_input
    above = text if cursor_y is None else "\n".join(text.split("\n")[:cursor_y])
    rows = _prompt_rows(above, prefix)          # the input row itself is not sent yet
    if not typed:   # sent before it was ever read: a prompt row more than at the last rest
        if len(rows) <= w.prompt_rows:
            return None
        w.prompt_rows = len(rows)
        return rows[-1]
    at = max((i for i, line in enumerate(text.split("\n"))
              if line.startswith(prefix) and line[len(prefix):].strip() == typed), default=None)
    if at is None or (cursor_y is not None and cursor_y <= at):
        return None
    # its row is counted now, or the next reading would take it for one more prompt sent
    w.typed_input, w.prompt_rows = "", len(rows)
    return typed


def _prompt_rows(text: str, prefix: str) -> list[str]:
    """The prompts echoed on input rows (the prefix, then text), oldest first."""
    if not prefix:
        return []
    return [line[len(prefix):].strip() for line in text.split("\n")
            if line.startswith(prefix) and line[len(prefix):].strip()]


def redrawn(w: Watched, echoed: str) -> bool:
    """An echo of the open incident's own prompt is that prompt redrawn (a resumed session
    shows its history first; a reattach or a redraw shows it again): never a new prompt."""
    inc = w.state.incident
    return inc is not None and bool(inc.prompt) and same_prompt(echoed, inc.prompt)


def own_follow_up(w: Watched, prompt: str) -> bool:
    """The fixed follow-ups Pitcrew types while an incident is open (its continue, the CLI's
    continue-in-place message) are its own, however long ago it typed them — also after a
    restart of Pitcrew, when its memory of the typing is gone."""
    if w.state.incident is None or not prompt:
        return False
    own = (CONTINUE_MESSAGE, w.provider.screen.continue_message or "")
    return any(text and same_prompt(prompt, text) for text in own)


def answered(before: str, now: str) -> bool:
    """Whether the screen (spinners and timers removed) shows more than the echo of a typed
    message: an agent that answers at once never shows a busy phase."""
    return len(set(now.split("\n")) - set(before.split("\n"))) >= ANSWER_LINES


def session_of(w: Watched, taken: frozenset[str] = frozenset()) -> str | None:
    """The agent's session id from the CLI's own files (its HOME and config-dir variables)."""
    ref = session_ref(w, taken)
    return ref.session_id if ref else w.state.session_id


def session_file(w: Watched, taken: frozenset[str] = frozenset()) -> str | None:
    """The agent's session file (its transcript), if the CLI keeps one Pitcrew can find."""
    ref = session_ref(w, taken)
    return ref.path if ref else None


def session_ref(w: Watched, taken: frozenset[str] = frozenset()) -> sessions.SessionRef | None:
    """This agent's session by facts; `taken`: the sessions of the other live agents of its
    CLI in its folder, known to be theirs (see `sessions.attribute`)."""
    env = processes.environ(w.agent_pid) if w.agent_pid else {}
    if not env and w.launch is not None:
        env = dict(w.launch.env)     # the agent is gone: its environment as it was
    home = Path(env["HOME"]) if env.get("HOME") else None
    pid = w.agent_pid or max(w.pid_generation, key=w.pid_generation.__getitem__, default=None)
    found = sessions.attribute(w.provider.sessions, w.cwd,
                               lambda: ownership.own_facts(pid, w.provider.process, w.cwd),
                               home=home, environ=env or None, newer_than=w.agent_started,
                               taken=taken)
    w.session_doubt = found.doubt   # two agents of this CLI here, and no fact says which
    return found.ref


class Observer:
    def __init__(self, reader: Reader, clock: Clock, feed: Feed, changed: Changed,
                 config: Callable[[], Config],
                 diagnose: Callable[[Watched, float], None],
                 pane: Callable[[str], PaneInfo | None],
                 kill_pane: Callable[[str], None],
                 close_dead_pane: Callable[[Watched], bool],
                 at_prompt: Callable[[int, float | None], bool],
                 enter_pending: Callable[[str], bool],
                 session: Callable[[Watched], str | None] = session_of) -> None:
        self.reader = reader
        self.clock = clock
        self.feed = feed
        self.changed = changed
        self.config = config
        self.diagnose = diagnose
        self.pane = pane
        self.kill_pane = kill_pane
        self.close_dead_pane = close_dead_pane
        self.at_prompt = at_prompt
        self.enter_pending = enter_pending
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
        self.note_progress(w, reading.text, screen)
        if now_state is not before:
            w.note_state(now_state.value, self.clock.wall())
            self.changed()
            log.info("%s: %s%s", w.key, now_state.value,
                     f" (was {before.value})" if before is not None else "")
        if not reading.alive:
            self.feed(w, ScreenSeen(screen, reading.alive))
            return   # a gone agent starts and finishes nothing; its exit is reported apart
        echoed = w.prompt_text(reading.text)
        new_echo = bool(echoed) and w.last_echo is not None and not same_prompt(
            echoed, w.last_echo) and not redrawn(w, echoed)
        w.last_echo = echoed
        at_rest = now_state in AT_REST
        started = not at_rest and now_state is not ScreenState.UNKNOWN
        submitted = submitted_input(w, reading.text, reading.cursor_y)
        if submitted and redrawn(w, submitted):
            submitted = None    # a resumed session's history: an input row sent long ago
        if at_rest or now_state is ScreenState.UNKNOWN:
            note_input(w, reading.text, reading.cursor_y, now_state)
        fresh = new_echo or bool(submitted)
        if fresh and w.state.task is not None:
            # a new prompt was accepted, so the one before it has finished (a read in between
            # was missed): finish it first, then start the new one
            self.feed(w, TaskFinished(session_id=self.session(w)))
        if (fresh or (started and w.was_at_rest)) and w.state.task is None:
            typed = submitted or w.typed_input
            # the box held what Pitcrew typed: its prompt, even when the newest echo on screen
            # is still an older turn (a resumed session shows its history first)
            by_us = w.is_own_prompt(echoed or typed, self.clock.mono()) or (
                bool(typed) and bool(echoed) and w.is_own_prompt(typed, self.clock.mono())) \
                or own_follow_up(w, echoed or typed)
            prompt = (w.typed_text if by_us else (echoed or typed)) or UNKNOWN_PROMPT
            if by_us:
                w.typed_text, w.typed_at = "", None
            if typed and not submitted:   # sent, its row not counted yet (the cursor on it)
                w.prompt_rows += 1
            w.typed_input = ""
            self.feed(w, PromptSubmitted(prompt, by_pitcrew=by_us,
                                         session_id=self.session(w)))
            if at_rest:   # answered before any reading saw it work: it has finished too
                self.feed(w, TaskFinished(session_id=self.session(w)))
        elif (at_rest and w.state.task is not None
              and before is not None and before not in AT_REST):
            self.feed(w, TaskFinished(session_id=self.session(w)))
        if at_rest:
            w.was_at_rest = True
        elif started:
            w.was_at_rest = False
        if w.state.task is not None:   # a step for the loop detector (CLIs without transcript)
            w.screen_steps = add_screen_step(
                w.screen_steps, screen_step(now_state.value, screen.evidence), SCREEN_STEPS)
        self.feed(w, ScreenSeen(screen, reading.alive))

    def note_progress(self, w: Watched, text: str, screen: Classification) -> None:
        """The clocks of the idle and not-started timeouts: only a change beyond the provider's
        spinners and timers is progress; a busy screen, or new lines beyond the echo of what
        Pitcrew typed, mean the typed text was taken up."""
        mono = self.clock.mono()
        sig = progress_text(text, w.provider.screen.progress_ignore)
        if sig != w.progress_sig:
            w.progress_sig, w.last_progress = sig, mono
            w.fired.discard(Timeout.IDLE.value)
            if w.delivered_at is not None and answered(w.delivered_sig, sig):
                w.delivered_at = None
        if screen.state is ScreenState.BUSY:
            w.delivered_at = None

    def went_quiet(self, w: Watched, quiet_for: float) -> None:
        """A running task stopped printing: With AI, a checker reads the screen first."""
        inc = w.state.incident
        if inc is not None and inc.phase in ACTING:
            return   # Autopilot is acting here already (a limit's wait): nothing to diagnose
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
        if w.agent_pid == pid:
            w.agent_pid = None
        self._exit(w, generation, self.pane(w.pane_id))

    def gone_while_away(self, w: Watched) -> None:
        """At a start: the agent of a running task (or of an open incident) ended while no
        watcher ran — its pane is dead, or its shell is back at the prompt. Told to the core as
        the exit it was, with what the screen still shows."""
        log.info("%s: %s ended while Pitcrew was not running", w.key, w.provider.display_name)
        self._exit(w, w.state.generation, self.pane(w.pane_id))

    def gone_while_confirming(self, w: Watched, pane: PaneInfo) -> None:
        """A relaunch is being confirmed and its agent was never seen: did it end already?
        (A respawned pane that died again; a shell back at its prompt after the command.)"""
        if w.relaunched_pid is None or self.enter_pending(w.key):
            return
        shell = w.launch.shell_pid if w.launch is not None else None
        died = pane.dead and pane.pid == w.relaunched_pid
        back_at_prompt = (not pane.dead and shell == w.relaunched_pid and w.launch is not None
                          and self.at_prompt(w.relaunched_pid, w.launch.shell_started))
        if died or back_at_prompt:
            w.relaunched_pid = None
            self._exit(w, w.state.generation, pane)

    def _exit(self, w: Watched, generation: int, pane: PaneInfo | None) -> None:
        status = pane.dead_status if pane is not None and pane.dead else None
        signal = pane.dead_signal if pane is not None and pane.dead else None
        reading = self.reader.read(w)
        tail = last_lines(reading.text)
        if status is None and signal is None:   # a shell's child: the shell says how it died
            signal = shell_signal(tail)
        screen = reading.screen
        if status is None and signal is None and not (screen and screen.cause == GOODBYE):
            # the process is known to be gone: its goodbye counts under any shell prompt
            bye = said_goodbye(since(reading.text, w.screen_from, w.left_below), w.provider.screen)
            if bye:
                screen = Classification(ScreenState.EXITED, bye, cause=GOODBYE)
        typed = submitted_input(w, reading.text, reading.cursor_y)
        if typed and is_report(typed):
            # the shell's `Killed`, drawn in the dead CLI's input box: not a prompt sent
            typed = None
        if not typed and w.state.task is None and (w.last_echo is None or w.typed_text):
            # Pitcrew's own text on screen, no reading saw it start (typed just before a
            # restart, or the agent died at once): that prompt was running
            echoed = w.prompt_text(since(reading.text, w.screen_from, w.left_below))
            if echoed and (w.is_own_prompt(echoed, self.clock.mono())
                           or own_follow_up(w, echoed)):
                typed = echoed
        if typed and not (w.state.task is not None and same_prompt(typed, w.state.task)):
            # it died on a prompt no reading saw start: that prompt was running (and the one
            # before it, if any, had finished). The prompt a reading did see start is not a
            # second one; and one Pitcrew typed is Pitcrew's (a user prompt would open a new
            # incident and start the attempt count over: a crash loop without end)
            if w.state.task is not None:
                self.feed(w, TaskFinished(session_id=self.session(w)))
            self.feed(w, PromptSubmitted(typed, by_pitcrew=w.is_own_prompt(
                typed, self.clock.mono()) or own_follow_up(w, typed),
                session_id=self.session(w)))
        elif w.state.task is not None and (sid := self.session(w)):
            w.state = dataclasses.replace(w.state, session_id=sid)   # pinned as it ended
        log.info("%s: %s %s", w.key, w.provider.display_name, exit_words(status, signal))
        w.note_state("exited", self.clock.wall())
        self.feed(w, ProcessExited(generation, status, signal, screen,
                                   interrupted=interrupted(tail), tail=tail))
        if pane is not None and pane.dead and self.close_dead_pane(w):
            log.info("%s: closing the dead pane, as tmux would have", w.key)
            self.kill_pane(w.pane_id)


TAIL_LINES = 12


def last_lines(text: str, n: int = TAIL_LINES) -> tuple[str, ...]:
    """The last non-blank lines a screen shows (tmux's own "Pane is dead" line left out)."""
    lines = [line.rstrip() for line in text.splitlines() if line.strip()
             and not line.startswith("Pane is dead")]
    return tuple(line[:200] for line in lines[-n:])


def interrupted(tail: tuple[str, ...]) -> bool:
    """A person pressed Ctrl-C: the terminal echoes `^C` on one of the last lines (above the
    traceback an interrupted program may print). An agent started from a shell is not
    tmux's child, so its exit status cannot be read."""
    return any("^C" in line for line in tail)


def exit_words(status: int | None, signal: int | None) -> str:
    """How the log says an agent ended: only what is known (an agent typed at a shell ends
    with no status tmux could see, unless its shell printed one)."""
    if signal is not None:
        try:
            name = signals.Signals(signal).name
        except ValueError:
            name = f"signal {signal}"
        return f"was killed ({name})"
    if status is not None:
        return f"exited (status {status})"
    return "exited; its exit status is not known"
