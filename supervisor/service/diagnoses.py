"""Running diagnoses off the supervisor's thread, and what their verdicts set off.

A diagnosis reads a stuck terminal's screen with the checker chain (With AI) or the local
classifier (Manual timer, or no consent); checkers can take a minute, so they run on a small
worker pool and report back through the supervisor's queue. Every diagnosis is a ledger row
saying which checker answered and how long it took. Then: a seated terminal with a limit or
login fails over to its seat's backup; a dropped connection goes to Autopilot; anything
else reaches the user as a notification.
"""

from __future__ import annotations

import datetime as dt
import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pitcrew.supervisor.adapters import checker_cli as checkers
from pitcrew.supervisor.adapters.clock import local_zone
from pitcrew.supervisor.adapters.notifier import Message
from pitcrew.supervisor.core.records import Badge, Decision, DeliveryStalled, WentQuiet
from pitcrew.supervisor.core.screen import Classification, ScreenState

if TYPE_CHECKING:
    from pitcrew.supervisor.service.loop import Supervisor
    from pitcrew.supervisor.service.watched import Watched

log = logging.getLogger("pitcrew")
FAILOVER_STATES = frozenset({ScreenState.RATE_LIMIT, ScreenState.LOGIN_REQUIRED})


@dataclass(frozen=True, slots=True)
class DiagnosisDone:
    key: str
    origin: str                 # "delivery" | "quiet"
    diagnosis: checkers.Diagnosis
    failures: int = 0
    quiet_for: float = 0.0


class Diagnoses:
    def __init__(self, sup: Supervisor) -> None:
        self.sup = sup
        self.pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="diagnosis")
        self.running: set[str] = set()

    def start(self, w: Watched, origin: str, failures: int = 0, quiet_for: float = 0.0) -> None:
        if w.key in self.running:
            return
        screen, _ = self.sup.read_now(w)
        text = self.sup.last_text
        local = screen or Classification(ScreenState.UNKNOWN)
        config = self.sup.app.config
        use_ai = config.diagnosis_mode == "ai"
        consent = self.sup.snapshot.consent
        choices = [checkers.CheckerChoice(c.provider, c.model) for c in config.checkers]
        registry = self.sup.app.registry
        self.running.add(w.key)

        def work() -> None:
            try:
                if use_ai:
                    diagnosis = checkers.diagnose(text, w.provider.name, choices, registry,
                                                  local, consent, config.checker_timeout,
                                                  config.chain_timeout)
                else:
                    diagnosis = checkers.Diagnosis(local, "local classifier (manual timer)",
                                                   0.0, (), consent)
            except Exception as exc:  # a checker problem must never stop the supervisor
                log.exception("diagnosis failed")
                diagnosis = checkers.Diagnosis(local, f"local classifier ({exc})", 0.0, (),
                                               consent)
            self.sup.post(DiagnosisDone(w.key, origin, diagnosis, failures, quiet_for))

        self.pool.submit(work)

    def done(self, event: DiagnosisDone) -> None:
        self.running.discard(event.key)
        w = self.sup.watched.get(event.key)
        if w is None:
            return
        diag = event.diagnosis
        self.record(w, event)
        screen = diag.screen
        timer = self.sup.app.config.diagnosis_mode == "timer"
        if event.origin == "quiet":
            self.sup.feed(w, WentQuiet(screen, event.quiet_for, confirmed_by=diag.by))
            if screen.state in FAILOVER_STATES or (timer and self.sup.seat_of(w) is not None):
                self.sup.seats.fail_over(w, self.reason(screen, diag, brief=True))
            return
        # a delivery kept failing
        if screen.reset_at is not None:
            self.sup.deliveries.postpone(w.key, screen.reset_at)
        seat = self.sup.seat_of(w)
        if seat is not None and (screen.state in FAILOVER_STATES or timer):
            self.sup.seats.fail_over(w, self.reason(screen, diag, brief=True))
        elif screen.state in (ScreenState.CONNECTION_LOST, ScreenState.CONTINUE_PROMPT):
            self.sup.feed(w, DeliveryStalled(screen, event.failures, confirmed_by=diag.by))
        if seat is None:
            self.sup.gate.offer(Message(
                f'Messages to "{w.provider.display_name}" are not getting through',
                f"{self.reason(screen, diag)} (diagnosed by {diag.by})",
                f"{w.key}:diagnosis:{screen.state.value}", w.key))

    def reason(self, screen: Classification, diag: checkers.Diagnosis,
               brief: bool = False) -> str:
        """Why, in a few words; the screen's own line too, except in a brief for another
        agent (it only needs the cause, not the stuck CLI's wording)."""
        what = screen.state.value.replace("_", " ")
        if screen.reset_at is not None:
            what += f", resets {screen.reset_at.astimezone(local_zone()):%Y-%m-%d %H:%M %Z}"
        return f"{what}: {screen.evidence}" if screen.evidence and not brief else what

    def record(self, w: Watched, event: DiagnosisDone) -> None:
        diag = event.diagnosis
        trigger = ("message stalled" if event.origin == "delivery" else "task went quiet")
        inc = w.state.incident
        self.sup.ledger.append(Decision(
            Badge.DIAGNOSED, self.sup.clock(), w.state.terminal, w.state.agent,
            inc.prompt if inc else (w.state.task or ""), w.state.project, trigger,
            f"{diag.by} says {diag.screen.state.value} in {diag.seconds:.1f}s",
            inc.attempts if inc else 0,
            {"checker": diag.by, "seconds": round(diag.seconds, 2), "consent": diag.consent,
             "state": diag.screen.state.value, "evidence": diag.screen.evidence,
             "reset_at": diag.screen.reset_at.isoformat() if diag.screen.reset_at else None,
             "attempts": [{"checker": a.provider, "model": a.model, "outcome": a.outcome,
                           "seconds": round(a.seconds, 2), "detail": a.detail}
                          for a in diag.attempts],
             "failures": event.failures,
             "at": dt.datetime.now(dt.UTC).isoformat()}))
        log.info("%s: diagnosed %s by %s (%.1fs)", w.key, diag.screen.state.value, diag.by,
                 diag.seconds)

    def shutdown(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)
