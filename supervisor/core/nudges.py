"""When a needs-you notification goes out: after a grace period, never for the pane you are
looking at, once per need, bursts as one.

Theory of operation
-------------------
`Nudges.step(candidates, watching, now)` is called every second or so with the terminals
whose attention could be notified (`Candidate`: a need, or a finished task when that setting
is on) and the terminals you are looking at now. It returns the candidates to notify about
now, as one batch (one notification; several in one batch are said as "N agents need you").

1. A need is notified at most once: it is known by its terminal and its `since`. A terminal
   that needs you again later (a new question) is a new need.
2. Not before it is `grace` seconds old: an answer already being typed never triggers one.
3. Never while you look at that terminal (the active pane of an attached tmux client with
   recent input): and one you looked at while it waited counts as seen, never notified later.
4. Not when Autopilot already notified about the same need (`Candidate.told`).
5. A burst is one notification: once one candidate is due, others that come due within
   `burst` seconds join it, then the batch goes out.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

GRACE = 20.0      # seconds a need waits before a notification (config: needs_you_after)
BURST = 3.0       # seconds a due notification waits for others to join it


@dataclass(frozen=True, slots=True)
class Candidate:
    key: str                 # the terminal
    since: float             # when it entered its attention (epoch seconds)
    kind: str = "needs_you"  # or "done" (a task finished)
    told: bool = False       # Autopilot already sent its own notification for it


class Nudges:
    def __init__(self, grace: float = GRACE, burst: float = BURST) -> None:
        self.grace = grace
        self.burst = burst
        self.settled: dict[str, float] = {}    # terminal → the since of its need, told or seen
        self.batch_at: float | None = None     # the first due candidate of a batch came due

    def step(self, candidates: Iterable[Candidate], watching: Iterable[str],
             now: float) -> tuple[Candidate, ...]:
        """The candidates to notify about now, oldest first (empty: nothing yet)."""
        current = {c.key: c for c in candidates}
        for key in [k for k, since in self.settled.items()
                    if k not in current or current[k].since != since]:
            del self.settled[key]             # that need is over: a new one is new (rule 1)
        for key in set(watching) & set(current):
            self.settled[key] = current[key].since               # seen (rule 3)
        for c in current.values():
            if c.told:
                self.settled[c.key] = c.since                    # rule 4
        due = sorted((c for c in current.values() if c.key not in self.settled
                      and now - c.since >= self.grace), key=lambda c: (c.since, c.key))
        if not due:
            self.batch_at = None
            return ()
        if self.batch_at is None:
            self.batch_at = now
        if now - self.batch_at < self.burst:                     # rule 5
            return ()
        self.batch_at = None
        for c in due:
            self.settled[c.key] = c.since
        return tuple(due)


def headline(batch: Sequence[Candidate], name: str) -> str:
    """The notification's title: `name` (the agent) for one, a count for several."""
    if len(batch) == 1:
        c = batch[0]
        return f"{name} finished its task" if c.kind == "done" else f"{name} needs you"
    if all(c.kind == "done" for c in batch):
        return f"{len(batch)} agents finished their tasks"
    return f"{len(batch)} agents need you"
