"""Watching running tasks for the task timeouts and for stuck loops (issue #14).

The rules are the core's (`core.timeouts`, `core.loops`); this keeps their clocks per
terminal and carries out what is due, once a loop turn:

* idle → the quiet-task check (`Observer.went_quiet`: a diagnosis, then Autopilot);
* soft, hard → `TimedOut` to the Autopilot core (a row, a notification; hard holds);
* not started → a `TimedOut` row, then today's failed-delivery diagnosis;
* a loop in the task's steps → the first time a diagnosis whose prompt says what repeats
  (its verdict reaches the core as `LoopSeen`); when it repeats a full window again after
  that, `LoopSeen(persists=True)`: the core holds the terminal and notifies.

Steps come from the CLI's session transcript when its provider file declares where the tool
calls are (`[transcript]`) and the file is found — only the part written since the task
started — otherwise from the distinct screen states the observer noted.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from pitcrew.supervisor.core.loops import LoopRule, Step, detect
from pitcrew.supervisor.core.records import LoopSeen, Observation, Phase, TimedOut
from pitcrew.supervisor.core.seats import Seat
from pitcrew.supervisor.core.timeouts import RULES, Timeout, due
from pitcrew.supervisor.core.timeouts import Clock as Since
from pitcrew.supervisor.providers.model import TranscriptSpec
from pitcrew.supervisor.service.ports import Clock
from pitcrew.supervisor.service.watched import Watched
from pitcrew.supervisor.store.config import Config

log = logging.getLogger("pitcrew")

LOOP_CHECK_EVERY = 2.0      # seconds between reads of a running task's steps
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
        w.screen_steps, w.loop_stage, w.loop_mark = (), 0, 0
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
        config = self.config()
        limits = config.timeouts_for(w.provider.name, self.seat_of(w.key)).scaled(self.scale)
        now = self.clock.mono()
        started = {Since.RUNNING: w.task_started if running else None,
                   Since.PROGRESS: w.last_progress if running else None,
                   Since.DELIVERED: w.delivered_at}
        for kind in due(limits, now, started, {Timeout(k) for k in w.fired}):
            self.fire(w, kind, now - (started[_SINCE[kind]] or now))
        rule = config.loop_rule()
        if running and rule is not None and now - w.loop_checked >= LOOP_CHECK_EVERY:
            w.loop_checked = now
            self.check_loop(w, rule)

    def fire(self, w: Watched, kind: Timeout, after: float) -> None:
        w.fired.add(kind.value)
        log.info("%s: %s timeout after %.0fs", w.key, kind.value, after)
        if kind is Timeout.IDLE:
            self.went_quiet(w, after)
        elif kind is Timeout.NOT_STARTED:
            w.delivered_at = None
            w.fired.discard(kind.value)     # the next delivery has its own clock
            self.feed(w, TimedOut(kind.value, after, w.screen))
            self.diagnose(w, origin="delivery", failures=0)
        else:
            self.feed(w, TimedOut(kind.value, after, w.screen))

    def steps(self, w: Watched) -> tuple[Step, ...]:
        spec = w.provider.transcript
        if spec is not None:
            if w.transcript_path is None:   # looked up once per task (it globs and reads)
                w.transcript_path = self.session_file(w)
            found = self.read_steps(spec, w.transcript_path, w.transcript_from or 0)
            if found is not None:
                return found
            w.transcript_path = None        # gone or unreadable: look again next time
        return w.screen_steps

    def check_loop(self, w: Watched, rule: LoopRule) -> None:
        if w.loop_stage >= 2:
            return
        steps = self.steps(w)
        loop = detect(steps if w.loop_stage == 0 else steps[w.loop_mark:], rule)
        if loop is None:
            return
        what = loop.describe()
        w.note_state("looping", self.clock.wall())
        if w.loop_stage == 0:
            w.loop_stage, w.loop_mark = 1, len(steps)
            log.info("%s: looping: %s", w.key, what)
            if self.config().diagnosis:
                self.diagnose(w, origin="loop", note=what)
            else:   # Diagnose & restore is off: the local reading stands
                self.feed(w, LoopSeen(what, screen=w.screen))
            return
        w.loop_stage = 2
        log.info("%s: still looping after the diagnosis: %s", w.key, what)
        self.feed(w, LoopSeen(what, persists=True, screen=w.screen))


_SINCE = dict(RULES)   # which clock each timeout counts from
