"""Watching running tasks for the task timeouts and for stuck loops (issue #14).

The rules are the core's (`core.timeouts`, `core.loops`); this keeps their clocks per
terminal and carries out what is due, once a loop turn:

* idle → the quiet-task check (`Observer.went_quiet`: a diagnosis, then Autopilot); in
  Manual timer mode idle counts from the pane's last output of any kind, and `stalled`
  (spinners and timers alone moved that long) is a quiet task too (`core.timeouts`);
* soft, hard → `TimedOut` to the Autopilot core (a row, a notification; hard holds);
* not started → a `TimedOut` row, then today's failed-delivery diagnosis;
* a loop in the task's steps → the first time a diagnosis whose prompt says what repeats
  (its verdict reaches the core as `LoopSeen`); when it repeats a full window again after
  that, `LoopSeen(persists=True)`: the core holds the terminal and notifies.

Steps come from the CLI's session transcript when its provider file declares where the tool
calls are (`[transcript]`) and the file is found — only the part written since the task
started — otherwise from the distinct screen states the observer noted; and, for every CLI,
from each showing of its own error line (a new attempt, or the line printed once more). Only a
failing step makes a loop (`core.loops`): the same successful call is work, so is a spinner;
a CLI retrying "API Error: 500" with no tool calls is noticed, and the core handles it by its
error class. A crash is not an error step: exits and crash loops have their own rules.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from pitcrew.supervisor.core.loops import (
    ERROR_STATES,
    LoopRule,
    Step,
    detect,
    error_line,
    error_seen,
    screen_step,
)
from pitcrew.supervisor.core.records import LoopSeen, Observation, Phase, TimedOut
from pitcrew.supervisor.core.seats import Seat
from pitcrew.supervisor.core.timeouts import Clock as Since
from pitcrew.supervisor.core.timeouts import Timeout, due, rules
from pitcrew.supervisor.providers.model import TranscriptSpec
from pitcrew.supervisor.service.ports import Clock
from pitcrew.supervisor.service.watched import Watched
from pitcrew.supervisor.store.config import Config

log = logging.getLogger("pitcrew")

LOOP_CHECK_EVERY = 2.0      # seconds between reads of a running task's steps
SCREEN_STEPS = 50           # screen steps kept per task (as the observer keeps them)
HELD = frozenset({"hard_timeout", "looping"})   # holds that stop the watching too

ReadSteps = Callable[[TranscriptSpec | None, str | None, int], tuple[Step, ...] | None]


class Watchdog:
    def __init__(self, clock: Clock, config: Callable[[], Config],
                 seat_of: Callable[[str], Seat | None],
                 feed: Callable[[Watched, Observation], object],
                 went_quiet: Callable[[Watched, float], None],
                 diagnose: Callable[..., None],
                 session_file: Callable[[Watched], str | None],
                 read_steps: ReadSteps, size_of: Callable[[str | None], int | None],
                 scale: float = 1.0) -> None:
        self.clock = clock
        self.config = config
        self.seat_of = seat_of
        self.feed = feed
        self.went_quiet = went_quiet
        self.diagnose = diagnose
        self.session_file = session_file
        self.read_steps = read_steps
        self.size_of = size_of
        self.scale = scale

    def task_started(self, w: Watched) -> None:
        """A prompt from the user started a task: every clock and the step history start over
        (Pitcrew's own follow-ups keep them: a resumed task is the same task)."""
        now = self.clock.mono()
        w.task_started, w.last_progress = now, now
        w.fired.clear()
        w.screen_steps, w.loop_stage, w.loop_marks = (), 0, {}
        w.error_steps, w.error_mark = (), None
        w.transcript_from, w.transcript_path = None, None
        if w.provider.transcript is not None:
            w.transcript_path = self.session_file(w)
            w.transcript_from = self.size_of(w.transcript_path) or 0

    def check(self, w: Watched) -> None:
        """One look at `w`: fire what is due."""
        inc = w.state.incident
        if inc is not None and inc.phase is Phase.HOLD and inc.hold in HELD:
            return   # Autopilot stopped acting here: no more checks until a new prompt
        running = w.state.task is not None
        if w.agent_pid is None:
            w.delivered_at = None   # a gone agent starts nothing: its exit is handled apart
        if not running:
            w.task_started = None
        elif w.task_started is None:
            self.task_started(w)    # a task seen running before any prompt (a restart)
        if not running and w.delivered_at is None:
            # no clock runs, so nothing is due (an idle fleet is most terminals, looked at
            # several times a second); a timeout that fired may fire again once its clock runs
            for name in w.fired_from:
                w.fired.discard(name)
            w.fired_from.clear()
            return
        config = self.config()
        limits = config.timeouts_for(w.provider.name, self.seat_of(w.key)).scaled(self.scale)
        now = self.clock.mono()
        started = {Since.RUNNING: w.task_started if running else None,
                   Since.PROGRESS: w.last_progress if running else None,
                   Since.OUTPUT: max(w.last_output, w.last_progress) if running else None,
                   Since.DELIVERED: w.delivered_at}
        table = rules(config.diagnosis_mode == "timer")
        since = dict(table)
        for name, clock_start in list(w.fired_from.items()):
            kind = Timeout(name)
            if kind not in since or started[since[kind]] != clock_start:
                w.fired.discard(name)        # its clock started again: it may fire again
                del w.fired_from[name]
        for kind in due(limits, now, started, {Timeout(k) for k in w.fired}, table):
            clock_start = started[since[kind]]
            self.fire(w, kind, now - (clock_start or now))
            if kind.value in w.fired:
                w.fired_from[kind.value] = clock_start
        if running and w.agent_pid is not None:
            self.note_error(w)
        rule = config.loop_rule()
        if running and w.agent_pid is not None and rule is not None \
                and now - w.loop_checked >= LOOP_CHECK_EVERY:   # a gone agent loops no more
            w.loop_checked = now
            self.check_loop(w, rule)

    def fire(self, w: Watched, kind: Timeout, after: float) -> None:
        w.fired.add(kind.value)
        log.info("%s: %s timeout after %.0fs", w.key, kind.value, after)
        if kind in (Timeout.IDLE, Timeout.STALLED):
            self.went_quiet(w, after)
        elif kind is Timeout.NOT_STARTED:
            w.delivered_at = None
            w.fired.discard(kind.value)     # the next delivery has its own clock
            self.feed(w, TimedOut(kind.value, after, w.screen))
            self.diagnose(w, origin="delivery", failures=0)
        else:
            self.feed(w, TimedOut(kind.value, after, w.screen))

    def note_error(self, w: Watched) -> None:
        """One more failed step each time the CLI shows its own error again: the error state's
        line, or an error line at the bottom of a busy screen (a CLI retrying by itself). A
        new attempt number, or the line printed once more, is a new showing; the same line
        read again, or counting down, is not."""
        screen = w.screen
        if screen is None:
            return
        line = screen.evidence if screen.state.value in ERROR_STATES else \
            error_line(w.last_text)
        if not line:
            w.error_mark = None
            return
        seen = error_seen(w.last_text, line)
        if seen == w.error_mark:
            return
        w.error_mark = seen
        step = screen_step(screen.state.value if screen.state.value in ERROR_STATES
                           else "error", line)
        w.error_steps = (*w.error_steps, Step(step.key, step.label, True))[-SCREEN_STEPS:]

    def calls(self, w: Watched) -> tuple[Step, ...] | None:
        """The task's tool calls from its transcript, None when there is none to read."""
        spec = w.provider.transcript
        if spec is None:
            return None
        if w.transcript_path is None:   # looked up once per task (it globs and reads)
            w.transcript_path = self.session_file(w)
        found = self.read_steps(spec, w.transcript_path, w.transcript_from or 0)
        if found is None:
            w.transcript_path = None        # gone or unreadable: look again next time
        return found

    def check_loop(self, w: Watched, rule: LoopRule) -> None:
        if w.loop_stage >= 2:
            return
        calls = self.calls(w)   # the screen's states count where no transcript is read
        sources = {"calls": calls, "screen": w.screen_steps if calls is None else None,
                   "errors": w.error_steps}
        loop = None
        for name, steps in sources.items():
            if steps is not None:
                mark = w.loop_marks.get(name, 0) if w.loop_stage else 0
                if (loop := detect(steps[mark:], rule)) is not None:
                    break
        if loop is None:
            return
        what = loop.describe()
        w.note_state("looping", self.clock.wall())
        if w.loop_stage == 0:
            w.loop_stage = 1
            w.loop_marks = {name: len(steps) for name, steps in sources.items()
                            if steps is not None}
            log.info("%s: looping: %s", w.key, what)
            if self.config().diagnosis:
                self.diagnose(w, origin="loop", note=what)
            else:   # Diagnose & restore is off: the local reading stands
                self.feed(w, LoopSeen(what, screen=w.screen))
            return
        w.loop_stage = 2
        log.info("%s: still looping after the diagnosis: %s", w.key, what)
        self.feed(w, LoopSeen(what, persists=True, screen=w.screen))
