"""Running the Autopilot core: observations in, the effects executor carries out what it decides.

`core.autopilot` holds the rules; this holds what they need from the running app (the mode
from config, pause and the launch's environment, the provider's resume commands, whether the
terminal's seat has a backup) and the one `feed` every part uses to hand the core an
observation.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Mapping

from pitcrew.supervisor.core.autopilot import decide, resume_now, set_mode
from pitcrew.supervisor.core.policy import RestartPolicy
from pitcrew.supervisor.core.records import Action, Observation, PromptSubmitted, Record
from pitcrew.supervisor.core.seats import Seat
from pitcrew.supervisor.core.settings import Context, Mode
from pitcrew.supervisor.service.effects import Effects
from pitcrew.supervisor.service.ports import Changed, Clock, Persist
from pitcrew.supervisor.service.watched import Watched
from pitcrew.supervisor.store.config import Config

MAX_HELD = 1000     # observations kept while nothing can be recorded (oldest kept)
WATCHING = ("Watching. Acts only when a running task goes quiet, its process exits, or a "
            "message to it stalls. Idle tabs are never checked.")


def status_line(mode: Mode, off_for_launch: bool) -> str:
    """The Autopilot card's line (SPEC §4), also printed by `pitcrew autopilot`."""
    if off_for_launch:
        return "Off for this launch."
    if mode is Mode.OFF:
        return "Off."
    if mode is Mode.PAUSED:
        return "Paused"
    return WATCHING


log = logging.getLogger("pitcrew")

class AutopilotService:
    def __init__(self, clock: Clock, effects: Effects, persist: Persist, changed: Changed,
                 config: Callable[[], Config], paused: Callable[[], bool],
                 has_backup: Callable[[Watched], bool], policy: RestartPolicy,
                 off_for_launch: bool, rng: random.Random | None = None,
                 seat_of: Callable[[str], Seat | None] = lambda key: None) -> None:
        self.clock = clock
        self.effects = effects
        self.persist = persist
        self.changed = changed
        self.config = config
        self.paused = paused
        self.has_backup = has_backup
        self.policy = policy
        self.off_for_launch = off_for_launch
        self.rng = rng or random.Random()
        self.seat_of = seat_of
        self.task_started: Callable[[Watched], None] = lambda w: None   # the watchdog's
        self.can_record: Callable[[], bool] = lambda: True   # the ledger can take rows
        self.held: list[tuple[str, Observation]] = []   # not decided: nothing could record it

    def catch_up(self, watched: Mapping[str, Watched]) -> int:
        """Recording works again: decide, in order, what was held back; how many."""
        held, self.held = self.held, []
        for key, obs in held:
            if (w := watched.get(key)) is not None:
                self.feed(w, obs)
        return len(held)

    def mode(self) -> Mode:
        if self.off_for_launch or not self.config().autopilot:
            return Mode.OFF
        return Mode.PAUSED if self.paused() else Mode.ON

    def status_line(self) -> str:
        return status_line(self.mode(), self.off_for_launch)

    def context_for(self, w: Watched) -> Context:
        p = w.provider
        config = self.config()
        return Context(
            mode=self.mode(), ask_to_continue=config.ask_to_continue,
            timer_mode=config.diagnosis_mode == "timer",
            resume_by_id=p.resume.by_id, resume_latest=p.resume.latest,
            session_doubt=None if w.state.session_id else w.session_doubt,
            continue_message=p.screen.continue_message, has_backup=self.has_backup(w),
            policy=self.policy, session_id_pattern=p.sessions.id_pattern,
            wrap_up=config.timeouts_for(p.name, self.seat_of(w.key)).wrap_up,
        )

    def feed(self, w: Watched, obs: Observation) -> tuple[Action, ...]:
        if isinstance(obs, PromptSubmitted) and not obs.by_pitcrew:
            self.task_started(w)   # a user's prompt: the task's clocks start over
        before = w.state
        log.debug("%s: %s → the core", w.key, type(obs).__name__ if not isinstance(
            obs, PromptSubmitted) else f"PromptSubmitted(by_pitcrew={obs.by_pitcrew}, "
            f"{obs.text[:30]!r})")
        w.state, actions = decide(w.state, obs, self.clock.wall(), self.context_for(w),
                                  self.rng)
        # first: a decision is on disk before anything acts on it, so a crash in between never
        # repeats a resume nor loses an incident. One that cannot be written down (a full or
        # read-only disk) is not taken: the observation is kept and decided again later
        if (w.state != before and self.persist() is False) or (actions and not self.can_record()):
            w.state = before
            if len(self.held) < MAX_HELD:
                self.held.append((w.key, obs))
            return ()
        if w.state.task:
            w.last_task = w.state.task   # what a rerun sends again once the task is over
        self.run(w, actions)
        if actions or w.state != before:
            self.changed()
        return actions

    def run(self, w: Watched, actions: tuple[Action, ...]) -> None:
        # the ledger rows first: what Pitcrew does is written down before it is done, so a
        # kill in between never leaves a continue typed that no row speaks of
        for action in sorted(actions, key=lambda a: not isinstance(a, Record)):
            self.effects.run(w, action)

    def resume_now(self, w: Watched) -> bool:
        """A notification's *Resume now*: act on a waiting incident at once."""
        w.state, actions = resume_now(w.state, self.clock.wall(), self.context_for(w), self.rng)
        self.run(w, actions)
        self.persist()
        return bool(actions)

    def mode_changed(self, watched: dict[str, Watched]) -> None:
        for w in watched.values():
            w.state, actions = set_mode(w.state, self.mode(), self.clock.wall(),
                                        self.context_for(w), self.rng)
            self.run(w, actions)
        self.persist()
