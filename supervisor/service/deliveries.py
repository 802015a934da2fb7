"""Deliveries in the service layer: queueing, attempting, and keeping them on disk.

`pitcrew send`, the tray app and seat failover queue messages here. Each open delivery is
attempted against a fresh reading of its terminal, following `core.delivery`, and the
effects executor carries out the steps — typing, Enter, and the next look (a scheduler job
at the time the core names). The queue lives in state.json, so a restart of Pitcrew neither
loses a message nor types one twice (a delivery already typed is only confirmed or, if its
text is still in the box, sent with Enter). A pane is read at most once per READ_EVERY for
its deliveries, however many are waiting.
"""

from __future__ import annotations

import datetime as dt
import logging
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, replace
from typing import Any

from pitcrew.supervisor.core.classifier import input_text
from pitcrew.supervisor.core.delivery import (
    MAX_TEXT,
    RETRY_EVERY,
    Delivery,
    Seen,
    Status,
    stale,
    step,
    untyped,
)
from pitcrew.supervisor.core.plain_text import one_line, visible
from pitcrew.supervisor.core.policy import RestartPolicy
from pitcrew.supervisor.core.records import Badge, Decision
from pitcrew.supervisor.core.screen import ScreenState
from pitcrew.supervisor.service.effects import Effects
from pitcrew.supervisor.service.events import DeliveryDue
from pitcrew.supervisor.service.ports import Clock, Persist, Scheduler
from pitcrew.supervisor.service.reading import Reader
from pitcrew.supervisor.service.watched import Watched

log = logging.getLogger("pitcrew")
KEEP_DONE = 50          # delivered messages kept in state.json (newest)
CONFIRM_AT_LEAST = 5.0  # seconds a typed text gets to be taken (a long brief takes a moment)
READ_EVERY = 1.0        # seconds: at most one screen read per pane for its deliveries


def resolve_terminal(ref: str, watched: Mapping[str, Watched]) -> str | None:
    """A terminal by its key (`server:%3`), pane id (`%3`) or tmux target (`work:1.0`)."""
    if ref in watched:
        return ref
    for key, w in watched.items():
        if ref in (w.pane_id, w.state.terminal) or key.endswith(f":{ref}"):
            return key
    return None


def load(saved: object) -> dict[str, Delivery]:
    """The deliveries state.json holds; an entry that does not read back is dropped (logged)."""
    items: dict[str, Delivery] = {}
    for raw in saved if isinstance(saved, list) else ():
        try:
            d = Delivery(**{**raw, "status": Status(raw["status"])})
        except (TypeError, ValueError, KeyError):
            log.warning("state.json: skipping a delivery that does not read back")
            continue
        items[d.id] = d
    return items


class Deliveries:
    def __init__(self, watched: Mapping[str, Watched], reader: Reader, effects: Effects,
                 scheduler: Scheduler, clock: Clock, persist: Persist, policy: RestartPolicy,
                 saved: Iterable[Delivery] = (),
                 typed_before: Callable[[str], bool] = lambda delivery_id: False) -> None:
        self.watched = watched
        self.reader = reader
        self.effects = effects
        self.scheduler = scheduler
        self.clock = clock
        self.persist = persist
        self.policy = policy
        self.items: dict[str, Delivery] = {d.id: d for d in saved}
        self.typed_before = typed_before     # the ledger's word: this id was typed already
        self.reachable: Callable[[str], bool] = lambda key: True   # its host can be asked
        self.pane_there: Callable[[str], bool] = lambda key: True  # its pane is listed

    def to_json(self) -> list[dict[str, Any]]:
        done = [d for d in self.items.values() if d.status is Status.DELIVERED]
        keep = {d.id for d in sorted(done, key=lambda d: d.created_at)[-KEEP_DONE:]}
        return [{**asdict(d), "status": d.status.value} for d in self.items.values()
                if d.status is not Status.DELIVERED or d.id in keep]

    def open(self) -> list[Delivery]:
        return [d for d in self.items.values() if d.status is not Status.DELIVERED]

    def queue(self, terminal: str, text: str, kind: str = "message",
              delivery_id: str | None = None, wait: bool = False) -> Delivery | None:
        """`wait`: `terminal` is a key `pitcrew send` resolved (or was asked to wait for):
        keep it for a terminal not watched yet, as a brief for a new backup pane is kept."""
        key = resolve_terminal(terminal, self.watched) or (
            terminal if kind == "brief" or wait else None)
        if key is None:
            log.warning("cannot send to %s: no such agent terminal", terminal)
            return None
        # one line (a newline would submit early), and text, not keys: a control character
        # in a prompt it was built from is typed as its visible escape (SPEC §7)
        text = visible(one_line(text))[:MAX_TEXT]
        if not text:
            return None
        did = delivery_id or uuid.uuid4().hex[:12]
        if did in self.items:
            return self.items[did]                 # the same request twice: queued once
        if delivery_id is not None and self.typed_before(did):
            log.info("%s: message %s was typed already (the ledger says so): not again", key, did)
            return None
        now = self.clock.wall()
        d = Delivery(did, key, text, now, kind=kind, next_at=now)
        self.items[did] = d
        log.info("%s: queued a %s (%d characters)", key, kind, len(text))
        self.persist()
        self.attempt(d)
        return self.items[did]

    def restore(self) -> None:
        """After a start: one look for each open delivery at its due time (jobs are not kept)."""
        now = self.clock.wall()
        for d in self.open():
            self.scheduler.at(max(due(d), now), DeliveryDue(d.id), key=f"delivery:{d.id}")

    def due_now(self, only: str | None = None) -> None:
        """A delivery's job ran (or a fallback sweep, `only=None`): attempt what is due."""
        now = self.clock.wall()
        for d in self.open():
            if (only is None or d.id == only) and now >= due(d):
                self.attempt(d)

    def ready(self, key: str) -> None:
        """The terminal just became ready (its prompt is empty): a message waiting for it is
        tried now, not at its next retry (a new agent's brief or rerun prompt goes as soon as
        the agent can take it)."""
        for d in self.open():
            if d.terminal == key and d.status is Status.PENDING:
                self.items[d.id] = d = replace(d, next_at=min(d.next_at, self.clock.wall()))
                self.attempt(d)
                return      # one at a time: the next goes once this one is taken

    def hook_prompt(self, key: str, prompt: str) -> None:
        for d in self.open():
            if d.terminal == key and d.status is Status.TYPED:
                self.attempt(d, hook_prompt=prompt)

    def attempt(self, d: Delivery, hook_prompt: str | None = None) -> None:
        if d.status is Status.PENDING and any(
                o.terminal == d.terminal and o.status is Status.TYPED and o.id != d.id
                for o in self.items.values()):
            # one message at a time: the one typed before must be taken first
            self.scheduler.at(self.clock.wall() + READ_EVERY, DeliveryDue(d.id),
                              key=f"delivery:{d.id}")
            return
        w = self.watched.get(d.terminal)
        if self.reachable(d.terminal):   # a host that is down says nothing about its panes
            # an agent that exited leaves its pane (and its message waits for the next one)
            why = stale(d, self.clock.wall(), w is not None or self.pane_there(d.terminal),
                        w.state.server if w is not None else None)
            if why is not None:
                self.drop(d, w, why)
                return
            if w is not None and d.seen_on is None:
                self.items[d.id] = d = replace(d, seen_on=w.state.server or "")
        seen = Seen(ScreenState.UNKNOWN, alive=False, hook_prompt=hook_prompt)
        if w is not None:
            reading = self.reader.fresh(w, READ_EVERY)
            if reading.screen is not None:
                box = input_text(reading.text, w.provider.screen)
                seen = Seen(reading.screen.state, reading.alive, box,
                            w.prompt_text(reading.text), hook_prompt,
                            outside_box(reading.text, reading.cursor_y, box))
        every = self.policy.scaled(RETRY_EVERY)
        new, steps = step(d, seen, self.clock.wall(), every=every,
                          confirm_within=max(every, CONFIRM_AT_LEAST), poll=READ_EVERY)
        log.debug("delivery %s: %s seen=%s → %s %s", d.id, d.status.value, seen,
                  new.status.value, [s.do.value for s in steps])
        self.items[d.id] = new
        if new != d and self.persist() is False:
            self.items[d.id] = d   # not written down, not done: tried again at the next sweep
            return
        # (saved before typing: a crash after it must not type it again)
        if not self.effects.deliver(w, new, steps) and new.status is Status.TYPED:
            # nothing typed after all (the pane is in copy mode, or went): a failed attempt
            self.items[d.id], steps = untyped(d, self.clock.wall(), every)
            self.persist()
            self.effects.deliver(w, self.items[d.id], steps)

    def drop(self, d: Delivery, w: Watched | None, why: str) -> None:
        """Never typed: said in the log and the ledger (a Skipped row with its text)."""
        log.warning("%s: %s %s not typed: %s", d.terminal, d.kind, d.id, why)
        self.items.pop(d.id, None)
        self.effects.ledger.append(Decision(
            Badge.SKIPPED, self.clock.wall(), w.state.terminal if w else d.terminal,
            w.state.agent if w else "", d.text[:200], w.state.project if w else "", d.kind,
            f"did not type a queued {d.kind}: {why}", 0, {"delivery_id": d.id}))
        self.persist()

    def postpone(self, key: str, until: dt.datetime) -> None:
        """A diagnosed limit: don't knock again before it resets."""
        at = until.timestamp()
        for d in self.open():
            if d.terminal == key and d.status is Status.PENDING and d.next_at < at:
                self.items[d.id] = replace(d, next_at=at)
                self.scheduler.at(at, DeliveryDue(d.id), key=f"delivery:{d.id}")
        self.persist()


def outside_box(text: str, cursor_y: int | None, box: str) -> str:
    """The screen without the input row (the cursor's row, or the row holding `box`): what is
    there is on screen, not merely typed."""
    rows = text.split("\n")
    if cursor_y is not None and 0 <= cursor_y < len(rows):
        return "\n".join(rows[:cursor_y] + rows[cursor_y + 1:])
    if box:
        return "\n".join(r for r in rows if box not in r)
    return text


def due(d: Delivery) -> float:
    """When a delivery is next looked at: a pending one at its retry time, a typed one a
    second after typing (to confirm it)."""
    return d.next_at if d.status is Status.PENDING else (d.typed_at or 0) + READ_EVERY
