"""Deliveries: a message Pitcrew types into an agent terminal, confirmed or retried.

Theory of operation (SPEC §3)
-----------------------------
A delivery is typed only when the agent can take it: alive, at an empty input box. Pitcrew
presses Enter only for text it typed itself, and confirms the delivery from what happens
next: the agent leaves rest (works on it), its echo appears, or the CLI's hook reports the
prompt, or a copy of the text appears on screen outside the input box (an agent that answers
at once never shows a busy phase). An attempt that cannot type (agent busy, a draft, a
dialog, a dead pane) or whose text was not taken within the retry interval is a failure; it
is retried every 15 s, and the 8th failure asks for a diagnosis (once; retries go on). A
typed-but-unconfirmed text in the input box is sent with Enter alone — never typed twice.

Pure: `step` takes the delivery, what the screen shows, and the time, and returns the new
delivery and what to do.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace

from pitcrew.supervisor.core.screen import ScreenState

RETRY_EVERY = 15.0      # seconds between attempts
DIAGNOSE_AFTER = 8      # the 8th failed attempt asks for a diagnosis
MAX_TEXT = 4000         # characters; longer messages are refused when queued
WAIT_FOR_TERMINAL = 3600.0   # seconds a message waits for a terminal that is not there yet
CONFIRM_POLL = 1.0      # seconds between looks at a typed text waiting to be taken


class Status(enum.StrEnum):
    PENDING = "pending"          # waiting for its next attempt
    TYPED = "typed"              # typed (and Enter pressed); waiting to see it taken
    DELIVERED = "delivered"


class Do(enum.StrEnum):
    TYPE = "type"                # type the text and press Enter
    ENTER = "enter"              # the text Pitcrew typed is still in the box: press Enter only
    DIAGNOSE = "diagnose"
    WAKE = "wake"                # look again at `at`
    CONFIRMED = "confirmed"


@dataclass(frozen=True, slots=True)
class Delivery:
    id: str
    terminal: str                # the watched terminal's key ("<server>:<pane>")
    text: str
    created_at: float
    kind: str = "message"        # message | brief (a seat's task brief for a backup)
    attempts: int = 0            # failed attempts so far
    status: Status = Status.PENDING
    next_at: float = 0.0
    typed_at: float | None = None
    seen_on: str | None = None   # the tmux server its terminal was seen on ("" unknown);
                                 # None: not seen yet (`pitcrew send --wait`)


def stale(d: Delivery, now: float, present: bool, server: str | None) -> str | None:
    """Why an open delivery must never be typed any more, or None. A pane id names the same
    terminal only on the same tmux server, and only until that pane closes: after that the
    id goes to whatever pane comes next, an agent the message was never meant for."""
    if d.seen_on is None:
        if not present and now - d.created_at > WAIT_FOR_TERMINAL:
            return "its terminal never appeared"
        return None
    if not present:
        return "its pane was closed"
    if d.seen_on and server and server != d.seen_on:
        return "the tmux server was restarted; that pane id now belongs to another pane"
    return None


@dataclass(frozen=True, slots=True)
class Seen:
    """What the terminal shows now, as the shell read it."""

    state: ScreenState
    alive: bool
    input_text: str = ""         # what the input box holds (for a draft)
    echoed: str = ""             # the newest prompt echo on screen
    hook_prompt: str | None = None   # a prompt the CLI's hook just reported
    on_screen: str = ""          # the screen outside the input box (to find a copy of the text)


@dataclass(frozen=True, slots=True)
class Step:
    do: Do
    at: float = 0.0


def _norm(text: str) -> str:
    return " ".join(text.split())


def _same(a: str, b: str) -> bool:
    a, b = _norm(a), _norm(b)
    n = min(len(a), len(b), 60)
    return n > 0 and a[:n] == b[:n]


def _shown(text: str, screen: str) -> bool:
    """A copy of `text` (its start) appears in `screen` (whitespace and wrapping aside)."""
    head = _norm(text)[:40]
    return bool(head) and head in _norm(screen)


def step(d: Delivery, seen: Seen, now: float, every: float = RETRY_EVERY,
         confirm_within: float | None = None,
         poll: float = CONFIRM_POLL) -> tuple[Delivery, tuple[Step, ...]]:
    """`every`: seconds between attempts; `confirm_within`: how long a typed text has to be
    taken before the attempt counts as failed (default: `every`); `poll`: how often a typed
    text is looked at while it waits to be taken."""
    confirm = every if confirm_within is None else confirm_within
    if d.status is Status.DELIVERED:
        return d, ()
    if d.status is Status.TYPED:
        taken = (seen.hook_prompt is not None and _same(seen.hook_prompt, d.text)) or (
            seen.alive and (_same(seen.echoed, d.text) or _shown(d.text, seen.on_screen))
            and not _same(seen.input_text, d.text))
        if taken or (seen.alive and seen.state is ScreenState.BUSY
                     and not _same(seen.input_text, d.text)):
            return replace(d, status=Status.DELIVERED), (Step(Do.CONFIRMED),)
        if d.typed_at is not None and now < d.typed_at + confirm:
            return d, (Step(Do.WAKE, min(d.typed_at + confirm, now + poll)),)
        return _failed(replace(d, status=Status.PENDING), now, every)
    if d.typed_at is not None and seen.alive and (
            _same(seen.echoed, d.text) or _shown(d.text, seen.on_screen)) and not _same(
            seen.input_text, d.text):
        # typed before and on screen now: taken, late — never type a second copy
        return replace(d, status=Status.DELIVERED), (Step(Do.CONFIRMED),)
    if now < d.next_at:
        return d, (Step(Do.WAKE, d.next_at),)
    if seen.alive and seen.state is ScreenState.DRAFT and _same(seen.input_text, d.text):
        return _typed(d, now, Do.ENTER, every)    # our own text is still there: Enter only
    if seen.alive and seen.state is ScreenState.IDLE and not seen.input_text.strip():
        return _typed(d, now, Do.TYPE, every)
    return _failed(d, now, every)                 # not ready: busy, a draft, a dialog, dead


def untyped(d: Delivery, now: float, every: float = RETRY_EVERY
            ) -> tuple[Delivery, tuple[Step, ...]]:
    """`step` said to type (or press Enter on) `d`, and the shell could not: the pane was in
    copy mode, or went. A failed attempt like any other, retried at the next interval."""
    return _failed(replace(d, status=Status.PENDING), now, every)


def _typed(d: Delivery, now: float, how: Do, every: float) -> tuple[Delivery, tuple[Step, ...]]:
    return (replace(d, status=Status.TYPED, typed_at=now),
            (Step(how), Step(Do.WAKE, now + CONFIRM_POLL)))


def _failed(d: Delivery, now: float, every: float) -> tuple[Delivery, tuple[Step, ...]]:
    """One more failed attempt; the 8th asks for a diagnosis (once). Retries go on."""
    attempts = d.attempts + 1
    nxt = now + every
    steps = (Step(Do.DIAGNOSE),) if attempts == DIAGNOSE_AFTER else ()
    return (replace(d, attempts=attempts, next_at=nxt, status=Status.PENDING),
            (*steps, Step(Do.WAKE, nxt)))
