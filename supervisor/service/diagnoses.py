"""Running diagnoses off the loop's thread, and carrying out what `core.failover` says follows.

A diagnosis reads a stuck terminal's screen with the checker chain (With AI) or the local
classifier (Manual timer, or no consent); checkers can take a minute, so they run on a small
worker pool and report back through the loop's queue (`DiagnosisDone`). Every diagnosis is a
ledger row saying which checker answered and how long it took.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from pitcrew.supervisor.adapters import checker_cli
from pitcrew.supervisor.adapters.notifier import Message
from pitcrew.supervisor.core.failover import after_diagnosis, reason
from pitcrew.supervisor.core.records import (
    Badge,
    Decision,
    DeliveryStalled,
    LoopSeen,
    Observation,
    WentQuiet,
)
from pitcrew.supervisor.core.screen import Classification, ScreenState
from pitcrew.supervisor.providers.loader import Registry
from pitcrew.supervisor.service.events import DiagnosisDone
from pitcrew.supervisor.service.ports import Clock, LedgerPort, NotifyPort, Post
from pitcrew.supervisor.service.reading import Reader
from pitcrew.supervisor.service.watched import Watched
from pitcrew.supervisor.store.config import Config

log = logging.getLogger("pitcrew")

Diagnose = Callable[..., checker_cli.Diagnosis]   # checker_cli.diagnose's shape


class Diagnoses:
    def __init__(self, watched: dict[str, Watched], reader: Reader, post: Post, clock: Clock,
                 ledger: LedgerPort, gate: NotifyPort, config: Callable[[], Config],
                 registry: Registry, consent: Callable[[], bool],
                 feed: Callable[[Watched, Observation], object],
                 fail_over: Callable[[Watched, str], None],
                 postpone: Callable[[str, dt.datetime], None],
                 seated: Callable[[Watched], bool],
                 zone: Callable[[], dt.tzinfo],
                 diagnose: Diagnose = checker_cli.diagnose) -> None:
        self.watched = watched
        self.reader = reader
        self.post = post
        self.clock = clock
        self.ledger = ledger
        self.gate = gate
        self.config = config
        self.registry = registry
        self.consent = consent
        self.feed = feed
        self.fail_over = fail_over
        self.postpone = postpone
        self.seated = seated
        self.zone = zone
        self.diagnose = diagnose
        self.pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="diagnosis")
        self.running: set[str] = set()

    def start(self, w: Watched, origin: str, failures: int = 0, quiet_for: float = 0.0,
              note: str = "") -> None:
        """`origin`: "quiet", "delivery" or "loop" (then `note` says what repeats, and the
        checker is told)."""
        if w.key in self.running:
            return
        reading = self.reader.read(w)
        text = reading.text
        local = reading.screen or Classification(ScreenState.UNKNOWN)
        config = self.config()
        use_ai = config.diagnosis_mode == "ai"
        consent = self.consent()
        choices = [checker_cli.CheckerChoice(c.provider, c.model) for c in config.checkers]
        registry, diagnose, provider = self.registry, self.diagnose, w.provider.name
        self.running.add(w.key)

        def work() -> None:
            try:
                if use_ai:
                    diagnosis = diagnose(text, provider, choices, registry, local, consent,
                                         config.checker_timeout, config.chain_timeout,
                                         **({"note": note} if note else {}),
                                         **({"stalled_for": quiet_for}
                                            if origin == "quiet" else {}))
                else:
                    diagnosis = checker_cli.Diagnosis(local, "local classifier (manual timer)",
                                                      0.0, (), consent)
            except Exception as exc:  # a checker problem must never stop the supervisor
                log.exception("diagnosis failed")
                diagnosis = checker_cli.Diagnosis(local, f"local classifier ({exc})", 0.0, (),
                                                  consent)
            self.post(DiagnosisDone(w.key, origin, diagnosis, failures, quiet_for, note))

        self.pool.submit(work)

    def done(self, event: DiagnosisDone) -> None:
        self.running.discard(event.key)
        w = self.watched.get(event.key)
        if w is None:
            return
        diag = event.diagnosis
        screen = diag.screen
        self.record(w, event)
        if event.origin == "loop":   # Autopilot decides (core.guards): a row, or recovery
            self.feed(w, LoopSeen(event.note, screen=screen, confirmed_by=diag.by))
            return
        verdict = after_diagnosis(event.origin, screen, self.seated(w),
                                  self.config().diagnosis_mode == "timer")
        if verdict.went_quiet:
            self.feed(w, WentQuiet(screen, event.quiet_for, confirmed_by=diag.by))
        if verdict.postpone and screen.reset_at is not None:
            self.postpone(w.key, screen.reset_at)
        if verdict.fail_over:
            self.fail_over(w, reason(screen, self._reset(screen), brief=True))
        if verdict.stalled:
            self.feed(w, DeliveryStalled(screen, event.failures, confirmed_by=diag.by))
        if verdict.notify:
            self.gate.offer(Message(
                f'Messages to "{w.provider.display_name}" are not getting through',
                f"{reason(screen, self._reset(screen))} (diagnosed by {diag.by})",
                f"{w.key}:diagnosis:{screen.state.value}", w.key))

    def _reset(self, screen: Classification) -> str | None:
        if screen.reset_at is None:
            return None
        return f"{screen.reset_at.astimezone(self.zone()):%Y-%m-%d %H:%M %Z}"

    def record(self, w: Watched, event: DiagnosisDone) -> None:
        diag = event.diagnosis
        trigger = {"delivery": "message stalled", "loop": "stuck in a loop"}.get(
            event.origin, "task went quiet")
        inc = w.state.incident
        self.ledger.append(Decision(
            Badge.DIAGNOSED, self.clock.wall(), w.state.terminal, w.state.agent,
            inc.prompt if inc else (w.state.task or ""), w.state.project, trigger,
            f"{diag.by} says {diag.screen.state.value} in {diag.seconds:.1f}s",
            inc.attempts if inc else 0,
            {"checker": diag.by, "seconds": round(diag.seconds, 2), "consent": diag.consent,
             "state": diag.screen.state.value, "evidence": diag.screen.evidence,
             "reset_at": diag.screen.reset_at.isoformat() if diag.screen.reset_at else None,
             "attempts": [{"checker": a.provider, "model": a.model, "outcome": a.outcome,
                           "seconds": round(a.seconds, 2), "detail": a.detail}
                          for a in diag.attempts],
             "failures": event.failures, **({"incident": inc.number} if inc else {}),
             **({"loop": event.note} if event.note else {}),
             **({"timeout": "idle", "quiet_for": round(event.quiet_for, 1)}
                if event.origin == "quiet" else {}),
             "at": dt.datetime.fromtimestamp(self.clock.wall(), dt.UTC).isoformat()}))
        log.info("%s: diagnosed %s by %s (%.1fs)", w.key, diag.screen.state.value, diag.by,
                 diag.seconds)

    def shutdown(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)
