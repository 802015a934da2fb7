"""Attention: what each agent terminal asks of you, in one word. The one rule the tray, the
dashboard, `pitcrew status`, `pitcrew tmux-status` and the needs-you notifications read.

Theory of operation
-------------------
`assess(previous, signals, now)` turns what is known about one terminal right now
(`Signals`: the screen the classifier read, whether its agent runs, what Autopilot's open
incident is doing, whether you are looking at it) and its previous `Attn` into the new one.
Rules, the first that matches wins:

1. Autopilot holds the terminal's incident for you (a hold, or it stopped retrying)
   → NEEDS_YOU, evidence "autopilot". `told` says whether Autopilot has already sent its own
   notification for it (login, unclear screen, caps, stopped retrying …), so the needs-you
   notifier stays quiet: one notification per need.
2. Autopilot is about to act (waiting for a backoff or a limit's reset, resuming, asking the
   agent to continue) → WORKING, evidence "autopilot": someone is on it, not you.
3. The agent process is gone (the screen reads exited or crashed and no agent runs)
   → STOPPED, evidence "process".
4. The screen waits on a person: a question, a permission prompt or a picker, a login, an
   upgrade or continue prompt, a draft typed but never sent, a usage limit or a lost
   connection Autopilot is not handling → NEEDS_YOU, evidence "screen" (its line).
5. The screen is busy (or looping) → WORKING, evidence "screen".
6. At rest (idle) after WORKING → DONE, "a task finished since you last looked"; DONE stays
   DONE while the agent rests until you look (see below), then it is IDLE.
   A rest after anything else (a question you answered with Esc, a fresh start) → IDLE.
7. A screen the classifier cannot read keeps the previous attention (never a flap); with
   none before, IDLE.

"You looked" (`Signals.looked_at`) is the newest moment the terminal's pane was the active
pane of an attached tmux client that had input recently — which includes opening it from
Pitcrew (*Open terminal* switches or attaches a client to that pane). Nothing else counts:
Pitcrew cannot know what a person read.

`since` is when the terminal entered its attention (kept while only the reason changes, so a
question followed by a picker waits since the question); a first assessment takes the start
of the current screen state when the caller knows it (`Signals.state_since`).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from pitcrew.supervisor.core.timeouts import duration


class Attention(enum.StrEnum):
    NEEDS_YOU = "needs_you"
    WORKING = "working"
    DONE = "done"
    IDLE = "idle"
    STOPPED = "stopped"


# How every list sorts terminals: needs-you first (the oldest need first), then the others.
ORDER: tuple[Attention, ...] = (Attention.NEEDS_YOU, Attention.WORKING, Attention.DONE,
                                Attention.IDLE, Attention.STOPPED)

# Screen states (ScreenState values) that wait on a person.
ASKING = {
    "question": "asks a question", "picker": "waits for a choice",
    "login_required": "needs you to log in", "upgrade_prompt": "asks about an upgrade",
    "continue_prompt": "asks whether to continue", "draft": "has a draft left unsent",
    "rate_limit": "hit a usage limit", "connection_lost": "lost its connection",
}
WORKING_STATES = frozenset({"busy", "looping"})
GONE_STATES = frozenset({"exited", "crashed"})
# Autopilot's incident phases (core.records.Phase values).
HELD = frozenset({"hold", "stopped"})
ACTING = frozenset({"waiting", "confirming", "asking"})
# Holds Autopilot does not notify about itself: the needs-you notifier speaks for them.
UNTOLD_HOLDS = frozenset({"user", "paused", "backup"})


@dataclass(frozen=True, slots=True)
class Signals:
    """What is known about one terminal right now. Times are epoch seconds."""

    screen: str                        # a ScreenState value, "exited" or "looping"
    evidence: str = ""                 # the screen line that decided
    alive: bool = True                 # the agent process runs
    phase: str | None = None           # Autopilot's open incident (a Phase value), if any
    hold: str | None = None            # … and what it holds for
    hold_reason: str = ""              # … in words ("Waiting on you: log in")
    looked_at: float | None = None     # you last looked at its pane (see the module doc)
    state_since: float | None = None   # when the current screen state began, if known


@dataclass(frozen=True, slots=True)
class Attn:
    attention: Attention
    since: float                       # when it entered this attention
    why: str                           # "<evidence>: <reason>", one line
    told: bool = False                 # Autopilot already notified about this need

    @property
    def source(self) -> str:
        """Where the evidence comes from: "screen", "autopilot" or "process"."""
        return self.why.split(":", 1)[0]


def assess(previous: Attn | None, s: Signals, now: float) -> Attn:
    """The terminal's attention now (rules 1–7 in the module doc)."""
    attention, why, told = _rule(previous, s, now)
    if previous is not None and previous.attention is attention:
        return Attn(attention, previous.since, why, told)
    since = now
    if previous is None and s.state_since is not None and attention is not Attention.DONE:
        since = min(now, s.state_since)
    return Attn(attention, since, why, told)


def _rule(previous: Attn | None, s: Signals, now: float) -> tuple[Attention, str, bool]:
    if s.phase in HELD:                                                         # rule 1
        told = s.phase == "stopped" or (s.hold or "") not in UNTOLD_HOLDS
        reason = s.hold_reason or "Autopilot is waiting on you"
        if s.hold == "user" and s.screen in ASKING:
            return Attention.NEEDS_YOU, _screen_why(s), False
        return Attention.NEEDS_YOU, f"autopilot: {reason}", told
    if s.phase in ACTING:                                                       # rule 2
        return Attention.WORKING, f"autopilot: {s.hold_reason or 'Autopilot is acting'}", False
    if s.screen in GONE_STATES and not s.alive:                                 # rule 3
        return Attention.STOPPED, f"process: the agent {s.screen}", False
    if s.screen in ASKING:                                                      # rule 4
        return Attention.NEEDS_YOU, _screen_why(s), False
    if s.screen in WORKING_STATES:                                              # rule 5
        return Attention.WORKING, "screen: " + ("looping" if s.screen == "looping"
                                                else "working"), False
    if s.screen == "idle":                                                      # rule 6
        if previous is not None and previous.attention in (Attention.WORKING, Attention.DONE):
            finished = previous.since if previous.attention is Attention.DONE else now
            if s.looked_at is None or s.looked_at < finished:
                return Attention.DONE, "screen: finished its task since you last looked", False
        return Attention.IDLE, "screen: at its prompt", False
    if previous is not None:                                                    # rule 7
        return previous.attention, previous.why, previous.told
    return Attention.IDLE, f"screen: {s.screen.replace('_', ' ')}", False


def _screen_why(s: Signals) -> str:
    reason = ASKING.get(s.screen, s.screen.replace("_", " "))
    line = " ".join(s.evidence.split())
    return f"screen: {reason}" + (f" — {line}" if line else "")


def rank(attention: str, since: float | None) -> tuple[int, float]:
    """The sort key of every list: ORDER, then the oldest first (a need waiting longest on
    top). An unknown attention sorts last."""
    try:
        place = ORDER.index(Attention(attention))
    except ValueError:
        place = len(ORDER)
    return place, since if since is not None else float("inf")


def waited(since: float | None, now: float) -> str:
    """How long it has been in its attention, as a person reads it: "45 s", "12 min",
    "2.5 h"; "" when unknown."""
    return "" if since is None else duration(max(0.0, now - since))
