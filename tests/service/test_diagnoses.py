"""Diagnoses over fakes: a checker's verdict (injected, never a real CLI) and what follows it
(`core.failover.after_diagnosis`): Autopilot is fed, the seat fails over, messages wait for a
reset, or you are told."""

from __future__ import annotations

import datetime as dt
import queue
from dataclasses import dataclass, field

import pytest

from pitcrew.supervisor.adapters.checker_cli import Attempt, CheckerChoice, Diagnosis, Outcome
from pitcrew.supervisor.core.records import Badge, DeliveryStalled, LoopSeen, WentQuiet
from pitcrew.supervisor.core.screen import Classification, ScreenState
from pitcrew.supervisor.core.seats import AgentChoice
from pitcrew.supervisor.service.diagnoses import Diagnoses
from pitcrew.supervisor.service.events import DiagnosisDone
from pitcrew.supervisor.store.config import Config
from tests.service.fakes import LIMIT, Fed, Rig, busy, registry

S = ScreenState
RESET = dt.datetime(2027, 1, 15, 15, 0, tzinfo=dt.UTC)


def verdict(state: ScreenState, by: str = "codex", reset_at: dt.datetime | None = None
            ) -> Diagnosis:
    attempt = Attempt("codex", None, Outcome.ANSWERED, 4.2, "ok")
    return Diagnosis(Classification(state, f"{state.value} line", reset_at), by, 4.2,
                     (attempt,), True)


@dataclass
class Setup:
    rig: Rig = field(default_factory=Rig)
    config: Config = field(default_factory=lambda: Config(
        diagnosis_mode="ai", checkers=(AgentChoice("codex", "gpt-5"),)))
    seated: bool = False
    consent: bool = True
    posted: queue.Queue[object] = field(default_factory=queue.Queue)
    fed: Fed = field(default_factory=Fed)
    failed_over: list[tuple[str, str]] = field(default_factory=list)
    postponed: list[tuple[str, dt.datetime]] = field(default_factory=list)
    asked: list[tuple[object, ...]] = field(default_factory=list)
    answer: Diagnosis | Exception = field(default_factory=lambda: verdict(S.RATE_LIMIT))

    def diagnose(self, *args: object, **kw: object) -> Diagnosis:
        self.asked.append(args + tuple(kw.items()))
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer

    def build(self) -> Diagnoses:
        return Diagnoses(
            self.rig.watched, self.rig.reader, self.posted.put, self.rig.clock,
            self.rig.ledger, self.rig.gate, lambda: self.config, registry(),
            lambda: self.consent, self.fed,
            lambda w, reason: self.failed_over.append((w.key, reason)),
            lambda key, until: self.postponed.append((key, until)),
            lambda w: self.seated, lambda: dt.UTC, diagnose=self.diagnose)


@pytest.fixture
def setup() -> Setup:
    return Setup()


def finished(setup: Setup) -> DiagnosisDone:
    event = setup.posted.get(timeout=10)   # the worker thread posts it; no sleep
    assert isinstance(event, DiagnosisDone)
    return event


def test_start_asks_the_checkers_off_the_loop_and_posts_the_verdict(setup: Setup) -> None:
    setup.rig.terminal(screen=LIMIT)
    diagnoses = setup.build()
    try:
        diagnoses.start(setup.rig.watched["test:%1"], "delivery", failures=8)
        event = finished(setup)
    finally:
        diagnoses.shutdown()
    assert (event.key, event.origin, event.failures) == ("test:%1", "delivery", 8)
    assert event.diagnosis == setup.answer
    [(text, provider, choices, _registry, local, consent, budget, chain)] = setup.asked
    assert (budget, chain) == (60.0, 150.0)          # the checker and chain budgets
    assert text == LIMIT and provider == "fakeagent" and consent is True
    assert choices == [CheckerChoice("codex", "gpt-5")]
    assert isinstance(local, Classification) and local.state is S.RATE_LIMIT   # it goes along


def test_manual_timer_mode_never_runs_a_checker(setup: Setup) -> None:
    setup.config = Config(diagnosis_mode="timer")
    setup.rig.terminal(screen=busy("fix it"))
    diagnoses = setup.build()
    try:
        diagnoses.start(setup.rig.watched["test:%1"], "quiet", quiet_for=300)
        event = finished(setup)
    finally:
        diagnoses.shutdown()
    assert setup.asked == []
    assert event.diagnosis.by == "local classifier (manual timer)"
    assert event.diagnosis.screen.state is S.BUSY and event.quiet_for == 300


def test_a_checker_that_blows_up_falls_back_to_the_local_reading(setup: Setup) -> None:
    setup.answer = RuntimeError("checker exploded")
    setup.rig.terminal(screen=LIMIT)
    diagnoses = setup.build()
    try:
        diagnoses.start(setup.rig.watched["test:%1"], "quiet")
        event = finished(setup)
    finally:
        diagnoses.shutdown()
    assert event.diagnosis.by == "local classifier (checker exploded)"
    assert event.diagnosis.screen.state is S.RATE_LIMIT


def test_one_diagnosis_at_a_time_per_terminal(setup: Setup) -> None:
    w = setup.rig.terminal(screen=LIMIT)
    diagnoses = setup.build()
    try:
        diagnoses.start(w, "quiet")
        diagnoses.start(w, "quiet")                         # still running: not again
        event = finished(setup)
        assert setup.posted.empty() and len(setup.asked) == 1
        diagnoses.done(event)
        diagnoses.start(w, "quiet")                         # done: may run again
        finished(setup)
    finally:
        diagnoses.shutdown()
    assert len(setup.asked) == 2


def test_done_writes_a_diagnosed_ledger_row(setup: Setup) -> None:
    setup.rig.terminal()
    setup.build().done(DiagnosisDone("test:%1", "delivery", verdict(S.RATE_LIMIT), failures=8))
    [row] = setup.rig.ledger.rows
    assert row.badge is Badge.DIAGNOSED and row.trigger == "message stalled"
    assert row.reason == "codex says rate_limit in 4.2s"
    assert row.readings["checker"] == "codex" and row.readings["failures"] == 8
    assert row.readings["attempts"] == [{"checker": "codex", "model": None,
                                         "outcome": "answered", "seconds": 4.2, "detail": "ok"}]


def test_quiet_feeds_autopilot_went_quiet(setup: Setup) -> None:
    setup.rig.terminal()
    diag = verdict(S.BUSY)
    setup.build().done(DiagnosisDone("test:%1", "quiet", diag, quiet_for=240))
    assert setup.fed.observations == [WentQuiet(diag.screen, 240, confirmed_by="codex")]
    assert setup.failed_over == [] and setup.rig.gate.messages == []


def test_quiet_and_seated_with_a_limit_fails_over_too(setup: Setup) -> None:
    setup.seated = True
    setup.rig.terminal()
    setup.build().done(DiagnosisDone("test:%1", "quiet", verdict(S.RATE_LIMIT), quiet_for=240))
    assert [type(o) for o in setup.fed.observations] == [WentQuiet]
    assert setup.failed_over == [("test:%1", "rate limit")]


def test_delivery_seated_with_a_limit_fails_over_and_holds_messages_to_the_reset(
        setup: Setup) -> None:
    setup.seated = True
    setup.rig.terminal()
    setup.build().done(DiagnosisDone("test:%1", "delivery", verdict(S.RATE_LIMIT, reset_at=RESET),
                                     failures=8))
    assert setup.failed_over == [("test:%1", "rate limit, resets 2027-01-15 15:00 UTC")]
    assert setup.postponed == [("test:%1", RESET)]
    assert setup.fed.items == [] and setup.rig.gate.messages == []


def test_delivery_seated_with_a_connection_lost_goes_to_autopilot(setup: Setup) -> None:
    setup.seated = True
    setup.rig.terminal()
    diag = verdict(S.CONNECTION_LOST)
    setup.build().done(DiagnosisDone("test:%1", "delivery", diag, failures=8))
    assert setup.fed.observations == [DeliveryStalled(diag.screen, 8, confirmed_by="codex")]
    assert setup.failed_over == []


def test_delivery_unseated_is_a_notification(setup: Setup) -> None:
    setup.rig.terminal()
    setup.build().done(DiagnosisDone("test:%1", "delivery", verdict(S.LOGIN_REQUIRED),
                                     failures=8))
    [msg] = setup.rig.gate.messages
    assert msg.title == 'Messages to "Fake Agent" are not getting through'
    assert msg.body == "login required: login_required line (diagnosed by codex)"
    assert (msg.key, msg.terminal) == ("test:%1:diagnosis:login_required", "test:%1")
    assert setup.failed_over == []


def test_manual_timer_mode_fails_a_seat_over_on_any_verdict(setup: Setup) -> None:
    setup.config = Config(diagnosis_mode="timer")
    setup.seated = True
    setup.rig.terminal()
    setup.build().done(DiagnosisDone("test:%1", "delivery", verdict(S.UNKNOWN), failures=8))
    assert setup.failed_over == [("test:%1", "unknown")]


def test_a_verdict_for_a_terminal_that_closed_is_dropped(setup: Setup) -> None:
    diagnoses = setup.build()
    diagnoses.running.add("test:%1")
    diagnoses.done(DiagnosisDone("test:%1", "delivery", verdict(S.RATE_LIMIT)))
    assert diagnoses.running == set()
    assert setup.rig.ledger.rows == [] and setup.rig.gate.messages == []


def test_a_loop_is_diagnosed_with_what_repeats_and_its_verdict_goes_to_autopilot(
        setup: Setup) -> None:
    setup.rig.terminal()
    setup.seated = True
    diagnoses = setup.build()
    try:
        diagnoses.start(setup.rig.watched["test:%1"], "loop", note="Bash: make (error) ×3")
        event = finished(setup)
    finally:
        diagnoses.shutdown()
    assert setup.asked[0][-1] == ("note", "Bash: make (error) ×3")   # the checker is told
    diag = verdict(S.RATE_LIMIT)
    setup.build().done(DiagnosisDone("test:%1", "loop", diag, note=event.note))
    [row] = setup.rig.ledger.rows
    assert row.trigger == "stuck in a loop" and row.readings["loop"] == "Bash: make (error) ×3"
    assert setup.fed.observations == [LoopSeen("Bash: make (error) ×3", screen=diag.screen,
                                               confirmed_by="codex")]
    assert setup.failed_over == [] and setup.rig.gate.messages == []   # the core decides
