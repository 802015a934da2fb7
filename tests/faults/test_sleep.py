"""Laptop sleep: the wall clock jumps forward hours while waits are pending.

The core is pure (time is an argument), so the rules are proved with an injected clock; the
real watcher is then run through a real jump of its clock (inject/sitecustomize.py moves the
wall clock it and its scheduler read, and wakes the scheduler as a resume from sleep does):
no burst of resumes, cooldowns and the rolling hour counted right, and a limit whose reset
passed during the sleep is read from the screen again before anything is typed.
"""

from __future__ import annotations

import datetime as dt
import time
from pathlib import Path

import pytest

from pitcrew.supervisor.core.autopilot import restore
from pitcrew.supervisor.core.policy import RestartPolicy
from pitcrew.supervisor.core.records import (
    Badge,
    Phase,
    Relaunch,
    Tick,
    TypeText,
    Wake,
    WentQuiet,
)
from pitcrew.supervisor.core.recovery import CONTINUE_MESSAGE
from pitcrew.supervisor.core.screen import Classification
from pitcrew.supervisor.core.settings import Context
from tests.core.test_autopilot import BY_ID, CTX, T0, Run, S, badges, kinds, screen
from tests.faults.harness import badges as ledger_badges
from tests.faults.harness import prompts, rows, start_agent, wait_badges, watch
from tests.support.tmux_server import TmuxServer
from tests.support.waiting import wait_until

HOURS = 3 * 3600.0


# -- the rules, with an injected clock -------------------------------------------------------


def test_a_wait_overdue_by_hours_is_one_wake_and_one_resume_not_a_burst() -> None:
    run = Run()
    run.prompt()
    due = run.wake_at(run.crash(T0))
    woke = due + HOURS                                     # slept through the 5 s wait
    assert restore(run.state, woke) == (Wake(woke),)       # a restart then: one wake, now
    out = run.feed(Tick(screen(S.CRASHED), alive=False), woke)
    assert len(kinds(out, Relaunch)) == 1 and run.state.incident.attempts == 1
    again = run.feed(Tick(screen(S.CRASHED), alive=False), woke + 0.01)   # a late duplicate
    assert kinds(again, Relaunch) == [] and kinds(again, TypeText) == []


def test_the_rolling_hour_and_the_crash_loop_window_count_wall_time_across_a_sleep() -> None:
    policy = RestartPolicy(backoff=(1,), max_attempts=99)
    run = Run(Context(resume_by_id=BY_ID, policy=policy))
    run.prompt()
    at = T0
    for _ in range(6):                                     # six resumes within the hour
        due = run.wake_at(run.crash(at))
        run.feed(Tick(screen(S.CRASHED), alive=False), due)
        run.started(run.state.generation, 1, due)
        at += 300
    capped = Run(run.ctx, run.state)
    assert badges(capped.crash(at)) == [Badge.WAITING]     # the seventh, awake: capped
    out = run.crash(at + HOURS)                            # … after a sleep: the hour is over
    assert badges(out) == [Badge.SCHEDULED] and kinds(out, Wake)
    assert run.state.restarts == () and len(run.state.crashes) == 1   # old ones fell out


def test_a_limit_whose_reset_passed_during_the_sleep_is_read_again_before_acting() -> None:
    reset = dt.datetime.fromtimestamp(T0 + 600, dt.UTC)
    line = "limit reached · resets 2:16pm"
    for seen, expected in [
        (Classification(S.RATE_LIMIT, line, reset_at=reset + dt.timedelta(days=1)),
         [Badge.CONTINUED]),                               # the same line: history
        (Classification(S.RATE_LIMIT, "weekly limit reached · resets Monday",
                        reset_at=reset + dt.timedelta(days=3)), [Badge.SCHEDULED]),
        (screen(S.QUESTION), [Badge.WAITING]),             # someone answered meanwhile
        (screen(S.BUSY), [Badge.SKIPPED]),                 # it went on by itself
    ]:
        run = Run(CTX)
        run.prompt()
        due = run.wake_at(run.feed(WentQuiet(Classification(S.RATE_LIMIT, line,
                                                            reset_at=reset), 100), T0))
        out = run.feed(Tick(seen, alive=True, active=True), due + HOURS)
        assert badges(out) == expected, seen
        typed = kinds(out, TypeText)
        assert typed == ([TypeText(CONTINUE_MESSAGE, typed[0].kind)] if typed else [])
        assert run.state.incident.phase is not Phase.CONFIRMING


# -- the real watcher, its clock jumped -----------------------------------------------------


@pytest.mark.e2e
def test_a_sleep_through_the_wait_before_a_restart_resumes_once_on_waking(
    tmux: TmuxServer, home: Path, tmp_path: Path
) -> None:
    pane = start_agent(tmux, tmp_path)
    clock = tmp_path / "clock-offset"
    clock.write_text("0")
    w = watch(tmux, {"clock_file": str(clock)}, scale="1")    # the real 5 s wait
    try:
        w.wait_for(f"{pane}: idle")
        tmux.type(pane, "crash 3 1")
        w.wait_for("Scheduled")
        clock.write_text(str(HOURS))                             # the lid closes for 3 h
        w.wait_for("wall clock offset +10800")
        got = wait_badges(home, "Resumed", "Continued", timeout=20)
        wait_until(lambda: CONTINUE_MESSAGE in prompts(tmux), 20)
        time.sleep(1.5)
    finally:
        assert w.stop() == 0
    assert ledger_badges(home, scheduled=True) == ["Scheduled", "Resumed", "Continued"]
    scheduled = rows(home)[0]
    assert got[0].at >= scheduled.at + HOURS - 1, "the resume is stamped with the clock after"
    assert got[0].at < scheduled.at + HOURS + 5, "and came at once, not 5 s of waking later"
    assert prompts(tmux) == ["crash 3 1", CONTINUE_MESSAGE]


@pytest.mark.e2e
def test_a_limit_that_reset_during_a_sleep_is_read_again_then_continued_once(
    tmux: TmuxServer, home: Path, tmp_path: Path
) -> None:
    (home / "config.toml").write_text(
        "[autopilot]\nenabled = true\nquiet_after = 10\n[diagnosis]\nmode = \"timer\"\n")
    pane = start_agent(tmux, tmp_path)
    reset = (dt.datetime.now().astimezone() + dt.timedelta(hours=2)).replace(second=0,
                                                                             microsecond=0)
    clock = tmp_path / "clock-offset"
    clock.write_text("0")
    w = watch(tmux, {"clock_file": str(clock)})
    try:
        w.wait_for(f"{pane}: idle")
        tmux.type(pane, f"limit resets {reset:%H:%M}")
        w.wait_for("Scheduled")
        clock.write_text(str(HOURS))
        continued = wait_badges(home, "Continued", timeout=30)[0]
        time.sleep(1.5)
    finally:
        assert w.stop() == 0
    assert ledger_badges(home, scheduled=True) == ["Scheduled", "Continued"]
    scheduled = rows(home)[0]
    assert dt.datetime.fromisoformat(scheduled.readings["reset_at"]) == reset
    assert continued.at >= reset.timestamp(), "not before the reset"
    assert continued.readings["screen"] == "rate_limit", "the screen was read at the wake"
    assert tmux.screen(pane).count("fake> Continue from where you stopped") == 1
