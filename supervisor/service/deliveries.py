"""Deliveries in the supervisor: queueing, attempting, typing, and keeping them on disk.

`pitcrew send`, the tray app and seat failover queue messages here; an APScheduler job per
open delivery wakes the supervisor when it is due, and it is attempted against a fresh
reading of its terminal, following `core.delivery`. The
queue lives in state.json, so a restart of Pitcrew neither loses a message nor types one
twice (a delivery already typed is only confirmed or, if its text is still in the box, sent
with Enter).
"""

from __future__ import annotations

import datetime as dt
import logging
import time
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import asdict, replace
from typing import TYPE_CHECKING, Any

from pitcrew.supervisor.adapters.clock import local_zone
from pitcrew.supervisor.core.classifier import input_text
from pitcrew.supervisor.core.delivery import MAX_TEXT, RETRY_EVERY, Delivery, Do, Seen, Status, step
from pitcrew.supervisor.core.screen import ScreenState
from pitcrew.supervisor.service.effects import ENTER_GAP

if TYPE_CHECKING:
    from pitcrew.supervisor.service.loop import Supervisor
    from pitcrew.supervisor.service.watched import Watched

log = logging.getLogger("pitcrew")
KEEP_DONE = 50          # delivered messages kept in state.json (newest)
CONFIRM_AT_LEAST = 5.0  # seconds a typed text gets to be taken (a long brief takes a moment)


def resolve_terminal(ref: str, watched: Mapping[str, Watched]) -> str | None:
    """A terminal by its key (`server:%3`), pane id (`%3`) or tmux target (`work:1.0`)."""
    if ref in watched:
        return ref
    for key, w in watched.items():
        if ref in (w.pane_id, w.state.terminal) or key.endswith(f":{ref}"):
            return key
    return None


class Deliveries:
    def __init__(self, sup: Supervisor, saved: Iterable[Mapping[str, Any]] = ()) -> None:
        self.sup = sup
        self.items: dict[str, Delivery] = {}
        self.scheduled: dict[str, float] = {}     # delivery id → when its job runs
        for raw in saved:
            try:
                d = Delivery(**{**raw, "status": Status(raw["status"])})
            except (TypeError, ValueError, KeyError):
                log.warning("state.json: skipping a delivery that does not read back")
                continue
            self.items[d.id] = d

    def to_json(self) -> list[dict[str, Any]]:
        done = [d for d in self.items.values() if d.status is Status.DELIVERED]
        keep = {d.id for d in sorted(done, key=lambda d: d.created_at)[-KEEP_DONE:]}
        return [{**asdict(d), "status": d.status.value} for d in self.items.values()
                if d.status is not Status.DELIVERED or d.id in keep]

    def queue(self, terminal: str, text: str, kind: str = "message",
              delivery_id: str | None = None, wait: bool = False) -> Delivery | None:
        """`wait`: `terminal` is a key `pitcrew send` resolved (or was asked to wait for):
        keep it for a terminal not watched yet, as a brief for a new backup pane is kept."""
        key = resolve_terminal(terminal, self.sup.watched) or (
            terminal if kind == "brief" or wait else None)
        if key is None:
            log.warning("cannot send to %s: no such agent terminal", terminal)
            return None
        text = " ".join(text.split())[:MAX_TEXT]   # one line: a newline would submit early
        if not text:
            return None
        did = delivery_id or uuid.uuid4().hex[:12]
        if did in self.items:
            return self.items[did]                 # the same request twice: queued once
        d = Delivery(did, key, text, self.sup.clock(), kind=kind, next_at=self.sup.clock())
        self.items[did] = d
        log.info("%s: queued a %s (%d characters)", key, kind, len(text))
        self.sup.persist()
        self.tick(only=did)
        return d

    def tick(self, only: str | None = None) -> None:
        """Attempt what is due (all, or the one delivery a scheduled job woke us for), and
        schedule a job for the next attempt of each one still open."""
        now = self.sup.clock()
        if only is not None:
            self.scheduled.pop(only, None)         # its job has run (or it is new)
        for d in list(self.items.values()):
            if d.status is Status.DELIVERED or (only is not None and d.id != only):
                continue
            if now >= due(d):
                self.attempt(d, now)
            d = self.items[d.id]
            if d.status is not Status.DELIVERED:
                self.schedule(d, now)

    def schedule(self, d: Delivery, now: float) -> None:
        """Retries are APScheduler jobs (one per open delivery), rebuilt from state.json at
        start by the first `tick`."""
        from pitcrew.supervisor.service.loop import DeliveryDue

        at = max(due(d), now)
        if self.scheduled.get(d.id) == at:
            return
        self.scheduled[d.id] = at
        self.sup.scheduler.add_job(
            self.sup.post, "date", run_date=dt.datetime.fromtimestamp(at, dt.UTC),
            args=[DeliveryDue(d.id)], id=f"delivery:{d.id}", replace_existing=True,
            misfire_grace_time=None)

    def hook_prompt(self, key: str, prompt: str) -> None:
        for d in list(self.items.values()):
            if d.terminal == key and d.status is Status.TYPED:
                self.attempt(d, self.sup.clock(), hook_prompt=prompt)

    def attempt(self, d: Delivery, now: float, hook_prompt: str | None = None) -> None:
        w = self.sup.watched.get(d.terminal)
        seen = Seen(ScreenState.UNKNOWN, alive=False, hook_prompt=hook_prompt)
        if w is not None:
            screen, alive = self.sup.read_now(w)
            text = self.sup.last_text
            if screen is not None:
                seen = Seen(screen.state, alive, input_text(text, w.provider.screen),
                            w.prompt_text(text), hook_prompt)
        every = self.sup.policy.scaled(RETRY_EVERY)
        new, steps = step(d, seen, now, every=every,
                          confirm_within=max(every, CONFIRM_AT_LEAST))
        log.debug("delivery %s: %s seen=%s → %s %s", d.id, d.status.value, seen,
                  new.status.value, [s.do.value for s in steps])
        self.items[d.id] = new
        for s in steps:
            self.run(w, new, s.do)
        if new != d:
            self.sup.persist()

    def run(self, w: Watched | None, d: Delivery, do: Do) -> None:
        tmux = self.sup.tmux
        if do is Do.TYPE and w is not None:
            tmux.send_text(w.pane_id, d.text)
            time.sleep(ENTER_GAP)
            tmux.send_keys(w.pane_id, "Enter")
            log.info("%s: typed a queued %s", d.terminal, d.kind)
        elif do is Do.ENTER and w is not None:
            tmux.send_keys(w.pane_id, "Enter")
            log.info("%s: pressed Enter on the %s Pitcrew typed", d.terminal, d.kind)
        elif do is Do.CONFIRMED:
            log.info("%s: %s delivered", d.terminal, d.kind)
        elif do is Do.DIAGNOSE:
            log.info("%s: %d deliveries failed: diagnosing", d.terminal, d.attempts)
            if w is not None:
                self.sup.diagnoses.start(w, origin="delivery", failures=d.attempts)

    def postpone(self, key: str, until: dt.datetime) -> None:
        """A diagnosed limit: don't knock again before it resets."""
        at = until.timestamp()
        for d in list(self.items.values()):
            if d.terminal == key and d.status is Status.PENDING and d.next_at < at:
                self.items[d.id] = replace(d, next_at=at)
        self.sup.persist()


def due(d: Delivery) -> float:
    """When a delivery is next looked at: a pending one at its retry time, a typed one a
    second after typing (to confirm it)."""
    return d.next_at if d.status is Status.PENDING else (d.typed_at or 0) + 1.0


def now_aware() -> dt.datetime:
    return dt.datetime.now(local_zone())
