"""Autopilot end to end: the real `pitcrew watch`, a real tmux server, the fake agent CLI.

Waits are scaled with PITCREW_TEST_TIME_SCALE (a documented test-only setting) so the
5 s / 20 s / 60 s ladder takes 0.5 s / 2 s / 6 s; the core tests prove the real numbers, and
one test here keeps the real 5 s.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import signal
import time
from pathlib import Path

import pytest

from pitcrew.supervisor.core.recovery import CONTINUE_MESSAGE
from pitcrew.supervisor.store.ledger import Ledger
from tests.support.proc import Running
from tests.support.tmux_server import TmuxServer
from tests.support.waiting import wait_until

pytestmark = pytest.mark.e2e
SCALE = "0.1"


@pytest.fixture
def home(pitcrew_home: Path, fake_provider_installed: Path) -> Path:
    (pitcrew_home / "config.toml").write_text(
        "[watch]\npoll_interval = 0.5\n[autopilot]\nenabled = true\nquiet_after = 10\n")
    return pitcrew_home


def watch(tmux: TmuxServer, scale: str = SCALE) -> Running:
    w = Running(["watch"], env={"PITCREW_TMUX_SOCKET": tmux.name,
                                "PITCREW_TEST_TIME_SCALE": scale})
    w.wait_for("Autopilot: Watching.")
    tmux.wait_watched()
    return w


def rows(home: Path) -> list:
    return list(reversed(Ledger(home / "autopilot-ledger.jsonl").tail(100)))


def badges(home: Path) -> list[str]:
    return [r.badge.value for r in rows(home)]


def wait_badges(home: Path, *expected: str, timeout: float = 40) -> list:
    """Wait for the ledger to start with `expected` (oldest first). `Scheduled` rows (every
    wait is one) are looked at only when `expected` names them."""
    def seen() -> list:
        return [r for r in rows(home)
                if "Scheduled" in expected or r.badge.value != "Scheduled"]

    wait_until(lambda: [r.badge.value for r in seen()][: len(expected)] == list(expected),
               timeout, message=lambda: f"ledger {badges(home)} to start with {list(expected)}")
    return seen()


def session_records(tmux: TmuxServer) -> list[dict]:
    out = []
    for path in tmux.fake_home.rglob("*.jsonl"):
        out += [json.loads(line) for line in path.read_text().splitlines()]
    return out


def start_agent(tmux: TmuxServer, cwd: Path) -> str:
    pane = tmux.start("fakeagent", cwd=cwd)
    tmux.wait_for_text(pane, "fake>")
    return pane


def test_a_crash_mid_task_is_resumed_with_the_pinned_session_and_asked_to_continue(
    tmux: TmuxServer, home: Path, tmp_path: Path
) -> None:
    pane = start_agent(tmux, tmp_path)
    [session] = list(tmux.fake_home.rglob("*.jsonl"))
    w = watch(tmux, scale="1")          # the real 5 s before the first restart
    try:
        w.wait_for(f"{pane}: idle")
        tmux.type(pane, "crash 3 2")
        w.wait_for(": busy (was ")  # from idle, or from draft if seen before Enter
        first = wait_badges(home, "Resumed", "Continued", timeout=60)
    finally:
        assert w.stop() == 0
    crashed_at = next(r["at"] for r in session_records(tmux) if r["type"] == "crash")
    resumed = first[0]
    assert resumed.readings["session_id"] == session.stem
    assert resumed.prompt == "crash 3 2" and resumed.attempt == 1
    assert resumed.trigger == "process exited"

    crash_epoch = dt.datetime.fromisoformat(crashed_at).timestamp()
    assert resumed.at - crash_epoch >= 5.0, "waited the SPEC's 5 s before the first restart"
    assert f"Resumed session {session.stem}" in tmux.screen(pane)
    prompts = [r["text"] for r in session_records(tmux) if r["type"] == "prompt"]
    assert prompts == ["crash 3 2", CONTINUE_MESSAGE]   # typed once, into the same session


def test_crashes_wait_longer_each_time_then_autopilot_stops_and_says_so(
    tmux: TmuxServer, home: Path, tmp_path: Path
) -> None:
    pane = start_agent(tmux, tmp_path)
    w = watch(tmux)
    try:
        w.wait_for(f"{pane}: idle")
        tmux.type(pane, "crashloop 9")   # every resumed agent crashes on its continue message
        wait_badges(home, "Resumed", "Continued", "Resumed", "Continued", "Resumed",
                    "Continued", "Stopped retrying", timeout=90)
        w.wait_for("needs you: Stopped retrying")
    finally:
        w.stop()
    got = [r for r in rows(home) if r.badge.value in ("Resumed", "Stopped retrying")]
    resumed = [r for r in got if r.badge.value == "Resumed"]
    assert [r.attempt for r in resumed] == [1, 2, 3]
    crashes = [r["at"] for r in session_records(tmux) if r["type"] == "crash"]
    assert len(crashes) == 4
    crash_t = [dt.datetime.fromisoformat(c).timestamp() for c in sorted(crashes)]
    waits = [r.at - c for r, c in zip(resumed, crash_t, strict=False)]
    assert waits[0] >= 0.5 and waits[1] >= 2.0 and waits[2] >= 6.0   # 5 / 20 / 60 s × 0.1
    stopped = got[3]
    assert stopped.reason == 'Stopped retrying "crashloop 9" after 3 resumes; waiting on you.'
    assert tmux.pane(pane).dead   # nothing more was tried


def test_a_new_prompt_opens_a_new_incident(tmux: TmuxServer, home: Path, tmp_path: Path) -> None:
    pane = start_agent(tmux, tmp_path)
    w = watch(tmux)
    try:
        w.wait_for(f"{pane}: idle")
        tmux.type(pane, "crash 3 1")
        wait_badges(home, "Resumed", "Continued")
        tmux.wait_for_text(pane, "● Done: " + CONTINUE_MESSAGE[:20])
        tmux.type(pane, "crash 4 1")
        got = wait_badges(home, "Resumed", "Continued", "Resumed")
    finally:
        w.stop()
    assert [r.attempt for r in got if r.badge.value == "Resumed"] == [1, 1]
    assert got[2].prompt == "crash 4 1"


def test_exit_questions_and_pickers_are_left_alone(
    tmux: TmuxServer, home: Path, tmp_path: Path
) -> None:
    quitter = start_agent(tmux, tmp_path)
    asker = start_agent(tmux, tmp_path)
    picker = start_agent(tmux, tmp_path)
    w = watch(tmux)
    try:
        for pane in (quitter, asker, picker):
            w.wait_for(f"{pane}: idle")
        tmux.type(quitter, "work 2")
        w.wait_for(f"{quitter}: busy")
        tmux.wait_for_text(quitter, "● Done: work 2")
        tmux.type(quitter, "/exit")
        tmux.type(asker, "question")
        tmux.type(picker, "picker")
        wait_until(lambda: {r.terminal.split(":")[-1] for r in rows(home)
                            if r.badge.value == "Waiting on you"} == {asker, picker},
                   timeout=30, message=lambda: f"the asker's and picker's rows in {rows(home)}")
        before = {p: tmux.screen(p) for p in (asker, picker)}
        w.wait_for(f"{quitter}: ")
    finally:
        w.stop()
    quit_rows = [r for r in rows(home) if r.terminal.endswith(f":{quitter}")]
    assert all(r.badge.value == "Skipped" and "stopped normally" in r.reason
               for r in quit_rows)                # /exit: at most a row saying so
    got = [r for r in rows(home) if r not in quit_rows]
    assert {r.terminal.split(":")[-1] for r in got} == {asker, picker}
    assert {r.badge.value for r in got} == {"Waiting on you"}
    assert {r.reason for r in got} == {"question on screen: left for you",
                                       "picker on screen: left for you"}
    assert tmux.pane(quitter).dead_status == 0
    for pane, screen in before.items():
        assert tmux.screen(pane) == screen        # nothing was typed
    assert not w.saw("needs you:")                # and nobody was pinged


def test_a_login_screen_waits_on_you_with_a_notification(
    tmux: TmuxServer, home: Path, tmp_path: Path
) -> None:
    pane = start_agent(tmux, tmp_path)
    w = watch(tmux)
    try:
        w.wait_for(f"{pane}: idle")
        tmux.type(pane, "login")
        # the task went quiet: With AI, a diagnosis reads the screen first (no checker CLI is
        # installed here, so the local classifier answers), then Autopilot waits on the user
        diagnosed, row = wait_badges(home, "Diagnosed", "Waiting on you")
        w.wait_for('needs you: "Fake Agent" is waiting on you')
    finally:
        w.stop()
    assert diagnosed.readings["state"] == "login_required"
    assert row.reason == "the agent needs you to log in"
    assert row.readings["screen"] == "login_required"


def test_continue_in_place_types_the_providers_message_and_restarts_nothing(
    tmux: TmuxServer, home: Path, tmp_path: Path
) -> None:
    pane = start_agent(tmux, tmp_path)
    pid = tmux.pane(pane).pid
    w = watch(tmux)
    try:
        w.wait_for(f"{pane}: idle")
        tmux.type(pane, "disconnect")
        [row] = wait_badges(home, "Continued")
        tmux.wait_for_text(pane, 'Picking up where I left off on "disconnect"')
    finally:
        w.stop()
    assert row.reason == "continued in place with the CLI's own message"
    assert tmux.pane(pane).pid == pid and not tmux.pane(pane).dead


def test_a_usage_limit_with_a_reset_time_schedules_the_resume_for_then(
    tmux: TmuxServer, home: Path, tmp_path: Path
) -> None:
    pane = start_agent(tmux, tmp_path)
    w = watch(tmux)
    try:
        w.wait_for(f"{pane}: idle")
        tmux.type(pane, "limit resets 3pm (Europe/Paris)")
        [row] = wait_badges(home, "Scheduled")     # at once: no idle timeout, no diagnosis
    finally:
        w.stop()
    from zoneinfo import ZoneInfo

    reset = dt.datetime.fromisoformat(row.readings["reset_at"])
    assert reset.tzinfo is not None and (reset.hour, reset.minute) == (15, 0)
    assert reset.utcoffset() == dt.datetime(reset.year, reset.month, reset.day, 15,
                                            tzinfo=ZoneInfo("Europe/Paris")).utcoffset()
    assert row.readings["wake_at"] > reset.timestamp()        # never before the reset
    assert "resumes after it resets at" in row.reason


def test_kill_9_in_a_backoff_loses_nothing_and_never_resumes_twice(
    tmux: TmuxServer, home: Path, tmp_path: Path
) -> None:
    pane = start_agent(tmux, tmp_path)
    w = watch(tmux, scale="1")
    w.wait_for(f"{pane}: idle")
    tmux.type(pane, "crash 3 1")
    w.wait_for("exited (status 3")
    # the line is printed before the wait is saved: under load, state.json lags it a little
    saved = home / "state.json"
    wait_until(lambda: saved.exists() and '"phase": "waiting"' in saved.read_text(), 4,
               message=lambda: saved.read_text() if saved.exists() else "no state.json")
    os.kill(w.proc.pid, signal.SIGKILL)       # in the middle of the 5 s wait
    w.proc.wait()
    state = json.loads((home / "state.json").read_text())
    [terminal] = state["terminals"].values()
    assert terminal["incident"]["phase"] == "waiting"
    assert terminal["incident"]["prompt"] == "crash 3 1"
    again = watch(tmux, scale="1")
    try:
        wait_badges(home, "Resumed", "Continued")
        again.wait_for(f"{pane}: busy")
    finally:
        again.stop()
    assert badges(home).count("Resumed") == 1
    state = json.loads((home / "state.json").read_text())
    [terminal] = state["terminals"].values()
    assert terminal["incident"]["attempts"] == 1


def test_a_second_supervisor_says_who_holds_the_lock(tmux: TmuxServer, home: Path) -> None:
    w = watch(tmux)
    try:
        second = Running(["watch"], env={"PITCREW_TMUX_SOCKET": tmux.name})
        assert second.proc.wait(30) == 2
        second.stop()
        assert second.saw(f"another Pitcrew supervisor is already running: pid {w.proc.pid} "
                          "(pitcrew watch, since ")
    finally:
        w.stop()


def test_a_task_already_running_when_pitcrew_starts_is_not_quiet_at_once(
    tmux: TmuxServer, home: Path, tmp_path: Path
) -> None:
    """Quiet time counts from when Pitcrew started watching, not from the epoch of its
    clock: an agent busy before the watcher started was once 'quiet' on the first look."""
    pane = start_agent(tmux, tmp_path)
    tmux.type(pane, "work 30")
    tmux.wait_for_text(pane, "esc to interrupt")
    w = watch(tmux)          # quiet_after 10 s, scaled to 1 s: the spinner prints every 0.1 s
    try:
        w.wait_for(f"{pane}: busy")
        time.sleep(2)        # two quiet thresholds with output all along
    finally:
        w.stop()
    assert not w.saw("diagnosed")
    assert badges(home) == []


def test_a_limit_that_resets_at_a_clock_time_is_continued_after_the_reset_not_a_day_later(
    tmux: TmuxServer, home: Path, tmp_path: Path
) -> None:
    """The real clock, a reset a minute or two ahead: at the wake the same limit line is still
    on screen; read again with the current time it would name tomorrow — it is the limit
    that was waited out, so the agent is asked to continue (once), after the reset."""
    pane = start_agent(tmux, tmp_path)
    now = dt.datetime.now().astimezone()
    reset = (now + dt.timedelta(seconds=90)).replace(second=0, microsecond=0)
    w = watch(tmux)                     # margins scaled: the reset itself is the real clock
    try:
        w.wait_for(f"{pane}: idle")
        tmux.type(pane, f"limit resets {reset:%H:%M}")
        scheduled = wait_badges(home, "Scheduled")[0]
        assert dt.datetime.fromisoformat(scheduled.readings["reset_at"]) == reset
        continued = wait_badges(home, "Scheduled", "Continued", timeout=200)[1]
        time.sleep(2)
    finally:
        w.stop()
    assert continued.at >= reset.timestamp(), "not before the reset"
    assert continued.at < reset.timestamp() + 60, "and not a day later"
    assert tmux.screen(pane).count("fake> Continue from where you stopped") == 1   # typed once
    assert badges(home).count("Scheduled") == 1             # the stale line started no wait
