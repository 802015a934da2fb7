"""Task timeouts: the table with an injected clock, settings layering, progress filtering,
and what Autopilot does at each limit. Nothing here sleeps."""

from __future__ import annotations

import random
import re

from pitcrew.supervisor.core.autopilot import decide
from pitcrew.supervisor.core.records import (
    Badge,
    Notify,
    Phase,
    ProcessExited,
    PromptSubmitted,
    Record,
    TextKind,
    TimedOut,
    TypeText,
    Wake,
)
from pitcrew.supervisor.core.screen import Classification, ScreenState
from pitcrew.supervisor.core.settings import Context, Mode
from pitcrew.supervisor.core.timeouts import (
    DEFAULT_TIMEOUTS,
    WRAP_UP_MESSAGE,
    Clock,
    Timeout,
    Timeouts,
    due,
    progress_text,
    resolve,
)
from tests.core.test_autopilot import CTX, T0, Run

SEED_003 = Timeouts(idle=600.0, soft=1200.0, hard=1800.0, not_started=300.0)


def test_each_limit_fires_once_when_its_clock_passes_it() -> None:
    fired: set[Timeout] = set()
    seen: list[tuple[float, Timeout]] = []
    started = {Clock.RUNNING: T0, Clock.PROGRESS: T0 + 900.0, Clock.DELIVERED: None}
    for minute in range(0, 40):
        now = T0 + minute * 60.0
        for kind in due(SEED_003, now, started, fired):
            fired.add(kind)
            seen.append((now - T0, kind))
    # soft at 20 min, idle 10 min after the last progress (at 15 min), hard at 30 min
    assert seen == [(1200.0, Timeout.SOFT), (1500.0, Timeout.IDLE), (1800.0, Timeout.HARD)]


def test_not_started_counts_from_the_delivery_and_stops_when_the_clock_stops() -> None:
    limits = SEED_003
    assert due(limits, T0 + 299, {Clock.DELIVERED: T0}) == ()
    assert due(limits, T0 + 300, {Clock.DELIVERED: T0}) == (Timeout.NOT_STARTED,)
    assert due(limits, T0 + 9999, {Clock.DELIVERED: None}) == ()


def test_a_limit_that_is_off_never_fires() -> None:
    off = resolve(SEED_003, {"hard": 0, "soft": False})
    assert off.hard is None and off.soft is None
    assert due(off, T0 + 10 ** 6, {Clock.RUNNING: T0}) == ()


def test_seat_beats_provider_beats_global_key_by_key() -> None:
    limits = resolve(DEFAULT_TIMEOUTS, {"soft": 600, "idle": 120}, {"soft": 900},
                     {"wrap_up": True})
    assert (limits.soft, limits.idle, limits.hard, limits.wrap_up) == (900.0, 120.0, 9000.0,
                                                                       True)


def test_defaults_and_scaling() -> None:
    assert (DEFAULT_TIMEOUTS.idle, DEFAULT_TIMEOUTS.soft, DEFAULT_TIMEOUTS.not_started) == (
        180.0, 1200.0, 300.0)
    fast = SEED_003.scaled(0.1)
    assert (fast.soft, fast.hard) == (120.0, 180.0)


CLAUDE_IGNORE = tuple(re.compile(p, re.I) for p in (
    r"^\s*[·✢✳✶✻✽*]\s+\S+…\s*", r"\(\d+[hms](?: \d+[ms])?\s*·", r"[⠀-⣿]"))


def test_a_spinner_and_a_timer_are_not_progress_but_new_text_is() -> None:
    a = "● Reading the parser\n✻ Concocting… (4s · ↓ 41 tokens)\n> "
    b = "● Reading the parser\n✶ Concocting… (5m 9s · ↓ 41 tokens)\n> "
    grown = "● Reading the parser\n✶ Concocting… (5m 9s · ↓ 97 tokens)\n> "
    more = "● Reading the parser\n● Editing parser.py\n✶ Concocting… (9s · ↓ 41 tokens)\n> "
    assert progress_text(a, CLAUDE_IGNORE) == progress_text(b, CLAUDE_IGNORE)
    assert progress_text(a, CLAUDE_IGNORE) != progress_text(grown, CLAUDE_IGNORE)
    assert progress_text(a, CLAUDE_IGNORE) != progress_text(more, CLAUDE_IGNORE)


def busy() -> Classification:
    return Classification(ScreenState.BUSY, "esc to interrupt")


def rows(actions) -> list:
    return [a.decision for a in actions if isinstance(a, Record)]


def test_soft_timeout_is_a_row_and_a_notification_and_types_nothing_by_default() -> None:
    run = Run()
    run.prompt(at=T0)
    out = run.feed(TimedOut("soft", 1200.0, busy()), T0 + 1200)
    [row] = rows(out)
    assert (row.badge, row.reason, row.trigger) == (Badge.TIMED_OUT, "running for 20 min",
                                                    "soft timeout")
    assert row.readings["timeout"] == "soft"
    assert [a.title for a in out if isinstance(a, Notify)] == [
        '"Claude Code" has been running for 20 min']
    assert not [a for a in out if isinstance(a, TypeText)]
    assert run.state.incident is None   # nothing is held: it keeps running


def test_soft_timeout_types_the_fixed_wrap_up_message_only_when_asked_and_busy() -> None:
    import dataclasses
    run = Run(ctx=dataclasses.replace(CTX, wrap_up=True))
    run.prompt(at=T0)
    out = run.feed(TimedOut("soft", 1200.0, busy()), T0 + 1200)
    assert [a for a in out if isinstance(a, TypeText)] == [
        TypeText(WRAP_UP_MESSAGE, TextKind.WRAP_UP)]
    question = Classification(ScreenState.QUESTION, "Proceed? (y/n)")
    out = run.feed(TimedOut("soft", 1200.0, question), T0 + 1300)
    assert not [a for a in out if isinstance(a, TypeText)]   # never typed into a question


def test_hard_timeout_holds_the_terminal_and_a_crash_after_it_is_not_resumed() -> None:
    run = Run()
    run.prompt(at=T0)
    out = run.feed(TimedOut("hard", 9000.0, busy()), T0 + 9000)
    [row] = rows(out)
    assert row.badge is Badge.TIMED_OUT and row.readings["timeout"] == "hard"
    assert "past the hard limit" in row.reason
    assert any(isinstance(a, Notify) for a in out)
    inc = run.state.incident
    assert inc is not None and (inc.phase, inc.hold) == (Phase.HOLD, "hard_timeout")
    out = run.feed(ProcessExited(0, status=1), T0 + 9100)
    assert not [a for a in out if isinstance(a, Wake)]            # held: nothing scheduled
    run.feed(PromptSubmitted("next task", session_id="sess-1"), T0 + 9200)
    assert run.state.incident is None                             # a new prompt frees it


def test_not_started_is_a_row_naming_the_failed_delivery() -> None:
    run = Run()
    out = run.feed(TimedOut("not_started", 300.0), T0)
    [row] = rows(out)
    assert row.badge is Badge.TIMED_OUT and row.trigger == "not started"
    assert row.readings["timeout"] == "not_started"
    assert row.reason.startswith("not started within 5 min of a message")


def test_the_report_flags_each_timeout_and_loop_row_as_its_own_anomaly() -> None:
    """The incident report (core.anomalies) reads rows by their words: a not-started row must
    not read as a resume that did not start, and a loop row is a loop."""
    from pitcrew.supervisor.core.anomalies import ROW_RULES
    from pitcrew.supervisor.core.records import LoopSeen

    def kind(row) -> str:
        said = " ".join([row.trigger, row.reason, row.badge.value])
        return next(k for k, _, rx in ROW_RULES if rx.search(said))

    run = Run()
    run.prompt(at=T0)
    made = [*rows(run.feed(TimedOut("not_started", 300.0), T0)),
            *rows(run.feed(TimedOut("soft", 1200.0, busy()), T0 + 1200)),
            *rows(run.feed(LoopSeen("Bash: make (error) ×3", screen=busy()), T0 + 1300)),
            *rows(run.feed(TimedOut("hard", 9000.0, busy()), T0 + 9000))]
    assert [kind(r) for r in made] == ["timeout", "timeout", "loop", "timeout"]


def test_timeouts_do_nothing_with_autopilot_off_or_no_task() -> None:
    state, out = decide(Run().state, TimedOut("hard", 1.0), T0,
                        Context(mode=Mode.OFF), random.Random(1))
    assert out == () and state.incident is None
    assert Run().feed(TimedOut("soft", 1.0), T0) == ()
