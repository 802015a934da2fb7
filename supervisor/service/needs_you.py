"""Each terminal's attention (core/attention.py), kept up to date, and the needs-you
notifications (core/nudges.py) it leads to.

The loop calls `run()` after its housekeeping; at most every CHECK_EVERY seconds it asks tmux
which panes you are looking at (`list-clients`: the active pane of every attached client
that had input in the last LOOKING_RECENT seconds; Pitcrew's own control-mode clients do not
count), assesses every terminal, and offers what `Nudges` says is due to the one
notification gate — the path Autopilot's own notifications take, so snooze and dedupe apply
to both. What it asks is said in one line, redacted (core/redact.py). Remote terminals are
assessed too; only whether you look at them is not known (their tmux is another machine's).
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Callable, Iterable, Mapping
from typing import Protocol

from pitcrew.supervisor.adapters.notifier import Message
from pitcrew.supervisor.core.attention import Attention, Attn, Signals, assess
from pitcrew.supervisor.core.health import Health
from pitcrew.supervisor.core.nudges import Candidate, Nudges, headline
from pitcrew.supervisor.core.redact import redact
from pitcrew.supervisor.service.ports import Clock, NotifyPort
from pitcrew.supervisor.service.watched import Watched
from pitcrew.supervisor.store.config import Config

log = logging.getLogger("pitcrew")

CHECK_EVERY = 1.0        # seconds between assessments (and list-clients calls)
LOOKING_RECENT = 120.0   # seconds: a client with input this recently is being looked at
LINE_MAX = 140           # characters of the question in a notification
# attentions that whether you look at the pane cannot change (core/attention.py rule 6: it
# only tells a finished task "done" from "idle")
QUIET = (Attention.IDLE, Attention.STOPPED)


class ClientSeen(Protocol):
    """One attached tmux client (adapters/tmux.py `ClientInfo`)."""

    @property
    def pane_id(self) -> str: ...
    @property
    def activity(self) -> int: ...
    @property
    def control(self) -> bool: ...


class NeedsYou:
    def __init__(self, clock: Clock, watched: Mapping[str, Watched], gate: NotifyPort,
                 config: Callable[[], Config], clients: Callable[[], Iterable[ClientSeen]],
                 is_local: Callable[[str], bool] = lambda key: True,
                 changed: Callable[[], None] = lambda: None) -> None:
        """`is_local`: whether a terminal runs on this machine's tmux (the clients listed);
        `changed`: called when an attention changed (a UI shows it)."""
        self.clock, self.watched, self.gate, self.config = clock, watched, gate, config
        self.clients, self.is_local, self.changed = clients, is_local, changed
        self.attn: dict[str, Attn] = {}
        self.looked_at: dict[str, float] = {}
        self.nudges = Nudges()
        self._checked = -1e9

    def run(self) -> None:
        mono = self.clock.mono()
        if mono - self._checked < CHECK_EVERY:
            return
        self._checked = mono
        now = self.clock.wall()
        for key in set(self.attn) - set(self.watched):
            self.attn.pop(key, None)
            self.looked_at.pop(key, None)
        told = {w.key: signals(w, self.looked_at.get(w.key)) for w in list(self.watched.values())}
        after = {key: assess(self.attn.get(key), s, now) for key, s in told.items()}
        # whether you look at a pane decides only a need's notification and whether a finished
        # task is "done": an idle or stopped fleet asks tmux nothing (a tmux process a second
        # was most of an idle watcher's cost)
        watching: set[str] = set()
        if any(a.attention not in QUIET for a in after.values()):
            watching = self.looking(now)
            for key in watching:
                self.looked_at[key] = now
                after[key] = assess(self.attn.get(key),
                                    dataclasses.replace(told[key], looked_at=now), now)
        for key, now_attn in after.items():
            before = self.attn.get(key)
            self.attn[key] = now_attn
            if before is not None and (before.attention, before.why) != (now_attn.attention,
                                                                         now_attn.why):
                self.changed()    # a first assessment comes with a new terminal: shown then
        self.notify(watching, now)

    def of(self, key: str) -> Attn | None:
        """The terminal's attention as last assessed (None: not yet)."""
        return self.attn.get(key)

    def looking(self, now: float) -> set[str]:
        """The terminals whose pane is the active pane of an attached client with recent
        input. tmux not answering: none (a notification too many beats a missed need)."""
        try:
            clients = list(self.clients())
        except Exception as exc:   # tmux hung or gone: the loop says so elsewhere
            log.debug("cannot list tmux clients: %s", exc)
            return set()
        panes = {c.pane_id for c in clients
                 if not c.control and now - c.activity <= LOOKING_RECENT}
        return {w.key for w in self.watched.values()
                if w.pane_id in panes and self.is_local(w.key)}

    def notify(self, watching: set[str], now: float) -> None:
        config = self.config()
        self.nudges.grace = config.needs_you_after
        kinds = {Attention.NEEDS_YOU} if config.needs_you else set()
        if config.task_finished:
            kinds.add(Attention.DONE)
        batch = self.nudges.step(
            (Candidate(k, a.since, "done" if a.attention is Attention.DONE else "needs_you",
                       a.told) for k, a in self.attn.items() if a.attention in kinds),
            watching, now)
        if batch:
            self.gate.offer(self.message(batch))

    def message(self, batch: tuple[Candidate, ...]) -> Message:
        first = self.watched[batch[0].key]
        title = headline(batch, first.provider.display_name)
        if len(batch) == 1:
            c = batch[0]
            line = (f"Task: {first.state.task}" if c.kind == "done" and first.state.task
                    else what_it_asks(self.attn[c.key]))
            body = f"in {folder(first.cwd)}" + (f": {one_line(line)}" if line else "")
            return Message(title, body, f"{c.key}:{c.kind}:{c.since:.0f}", c.key)
        names = [f"{self.watched[c.key].provider.display_name} in "
                 f"{folder(self.watched[c.key].cwd)}" for c in batch]
        return Message(title, "; ".join(names),
                       "needs:" + ",".join(f"{c.key}@{c.since:.0f}" for c in batch))


def signals(w: Watched, looked_at: float | None) -> Signals:
    """What the attention rule is told about one watched terminal."""
    dead = w.agent_pid is None and bool(w.timeline) and w.timeline[-1][1] == "exited"
    screen = "exited" if dead else (w.screen.state.value if w.screen else "unknown")
    if screen == "busy" and w.state.health is Health.LOOPING:
        screen = "looping"
    inc = w.state.incident
    phase = inc.phase.value if inc is not None else None
    hold = inc.hold if inc is not None else None
    reason = ""
    if phase in ("hold", "stopped"):
        reason = ("Autopilot stopped retrying" if phase == "stopped"
                  else f"Autopilot holds it for you ({(hold or 'hold').replace('_', ' ')})")
    elif phase in ("waiting", "confirming", "asking"):
        reason = ("waiting for the usage limit's reset" if hold == "rate_limit"
                  else "Autopilot is resuming it")
    state_since = w.timeline[-1][0] if w.timeline else None
    return Signals(screen, w.screen.evidence if w.screen and not dead else "",
                   alive=not dead and w.agent_pid is not None, phase=phase, hold=hold,
                   hold_reason=reason, looked_at=looked_at, state_since=state_since)


def what_it_asks(a: Attn) -> str:
    """The reason behind an attention, without its evidence word ("screen: …")."""
    return a.why.split(": ", 1)[1] if ": " in a.why else a.why


def one_line(text: str) -> str:
    line = redact(" ".join(text.split()))
    return line if len(line) <= LINE_MAX else line[:LINE_MAX - 1] + "…"


def folder(path: str) -> str:
    return os.path.basename(path.rstrip("/")) or path or "?"
