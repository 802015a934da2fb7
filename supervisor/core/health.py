"""The terminal health machine.

Rules (seed 001, "ZFC: observable state beats recorded state"):

1. Health only moves forward within one run: booting → working → completed | stalled | zombie,
   and stalled → zombie; working → looping (it repeats itself) → completed | stalled |
   zombie. A new prompt starts a new run of a live agent (working again); a relaunch starts a
   new run of a new process (booting).
2. tmux or the agent process observed dead while recorded working or stalled → zombie at once.
3. Alive while recorded zombie → investigate (a new run is started by whoever relaunched it);
   the machine never kills anything itself.
4. An event outside the table raises `IllegalTransition` and changes nothing.
"""

from __future__ import annotations

import enum


class Health(enum.StrEnum):
    BOOTING = "booting"
    WORKING = "working"
    COMPLETED = "completed"
    STALLED = "stalled"
    ZOMBIE = "zombie"
    LOOPING = "looping"       # working, but repeating the same steps (core.loops)


class HealthEvent(enum.StrEnum):
    SEEN_WORKING = "seen_working"      # the agent process is there and answering
    FINISHED = "finished"              # a normal exit (/exit, Ctrl-D, status 0, user signal)
    WENT_QUIET = "went_quiet"          # a running task stopped producing output and is stuck
    SEEN_DEAD = "seen_dead"            # tmux pane or agent process observed dead
    PROMPTED = "prompted"              # a new prompt: a new run of the live agent
    RELAUNCHED = "relaunched"          # Pitcrew (or the user) started the agent again
    LOOPED = "looped"                  # a running task repeats the same steps


class IllegalTransition(Exception):
    def __init__(self, health: Health, event: HealthEvent) -> None:
        super().__init__(f"{event.value} is not allowed while {health.value}")
        self.health = health
        self.event = event


TRANSITIONS: dict[tuple[Health, HealthEvent], Health] = {
    (Health.BOOTING, HealthEvent.SEEN_WORKING): Health.WORKING,
    (Health.BOOTING, HealthEvent.SEEN_DEAD): Health.ZOMBIE,
    (Health.BOOTING, HealthEvent.FINISHED): Health.COMPLETED,
    (Health.WORKING, HealthEvent.SEEN_WORKING): Health.WORKING,
    (Health.WORKING, HealthEvent.FINISHED): Health.COMPLETED,
    (Health.WORKING, HealthEvent.WENT_QUIET): Health.STALLED,
    (Health.WORKING, HealthEvent.SEEN_DEAD): Health.ZOMBIE,       # observable beats recorded
    (Health.STALLED, HealthEvent.SEEN_DEAD): Health.ZOMBIE,
    (Health.STALLED, HealthEvent.WENT_QUIET): Health.STALLED,
    (Health.STALLED, HealthEvent.FINISHED): Health.COMPLETED,
    (Health.WORKING, HealthEvent.LOOPED): Health.LOOPING,
    (Health.LOOPING, HealthEvent.LOOPED): Health.LOOPING,
    (Health.LOOPING, HealthEvent.SEEN_WORKING): Health.LOOPING,
    (Health.LOOPING, HealthEvent.FINISHED): Health.COMPLETED,
    (Health.LOOPING, HealthEvent.WENT_QUIET): Health.STALLED,
    (Health.LOOPING, HealthEvent.SEEN_DEAD): Health.ZOMBIE,
    (Health.ZOMBIE, HealthEvent.SEEN_DEAD): Health.ZOMBIE,
    (Health.COMPLETED, HealthEvent.SEEN_DEAD): Health.COMPLETED,  # a finished run stays finished
    **{(h, HealthEvent.PROMPTED): Health.WORKING
       for h in (Health.BOOTING, Health.WORKING, Health.COMPLETED, Health.STALLED,
                 Health.LOOPING)},
    **{(h, HealthEvent.RELAUNCHED): Health.BOOTING for h in Health},
}


def advance(health: Health, event: HealthEvent) -> Health:
    """The next health, or `IllegalTransition` (and no change) for an event out of order."""
    try:
        return TRANSITIONS[(health, event)]
    except KeyError:
        raise IllegalTransition(health, event) from None
