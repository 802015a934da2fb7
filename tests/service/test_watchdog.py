"""The watchdog over fakes: each timeout fires once on the fake clock and goes where it should,
the loop detector reads the task's transcript (only what was written since the task began),
diagnoses once and then reports a loop that persists; held terminals are left alone."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from pitcrew.supervisor.adapters import transcripts
from pitcrew.supervisor.core.loops import screen_step
from pitcrew.supervisor.core.records import Incident, LoopSeen, Phase, TimedOut
from pitcrew.supervisor.core.timeouts import Timeout
from pitcrew.supervisor.service.watchdog import Watchdog
from pitcrew.supervisor.store.config import Config
from tests.service.fakes import FakeClock, Fed, make_watched


class Setup:
    def __init__(self, tmp: Path, config: Config | None = None) -> None:
        self.clock = FakeClock()
        self.fed = Fed()
        self.quiet: list[float] = []
        self.diagnosed: list[dict[str, Any]] = []
        self.file = tmp / "session.jsonl"
        self.config = config or Config(timeouts=(("idle", 600.0), ("soft", 1200.0),
                                                 ("hard", 1800.0), ("not_started", 300.0)))
        self.dog = Watchdog(self.clock, lambda: self.config, lambda key: None, self.fed,
                            lambda w, q: self.quiet.append(q),
                            lambda w, **kw: self.diagnosed.append(kw),
                            lambda w: str(self.file) if self.file.exists() else None,
                            transcripts.read_steps, transcripts.size_of)
        self.w = make_watched(task="fix the parser")

    def tool(self, n: int, command: str, error: bool) -> None:
        with open(self.file, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"type": "tool", "id": f"t{n}", "name": "Bash",
                                 "input": {"command": command}}) + "\n")
            fh.write(json.dumps({"type": "tool_result", "id": f"t{n}", "is_error": error,
                                 "content": "1 failed" if error else "ok"}) + "\n")

    def minutes(self, n: int) -> None:
        for _ in range(n * 6):
            self.clock.advance(10.0)
            self.dog.check(self.w)


def timed_out(fed: Fed) -> list[str]:
    return [o.kind for o in fed.observations if isinstance(o, TimedOut)]


def test_soft_then_idle_then_hard_each_once_on_the_fake_clock(tmp_path: Path) -> None:
    s = Setup(tmp_path)
    s.dog.task_started(s.w)
    s.minutes(5)
    s.w.last_progress = s.clock.mono()          # it printed something real at 5 min
    s.minutes(15)
    assert timed_out(s.fed) == ["soft"]         # 20 min running
    assert s.quiet == [600.0]                   # 10 min without progress, from minute 5
    s.minutes(15)
    assert timed_out(s.fed) == ["soft", "hard"]
    assert s.quiet == [600.0]                   # once per stretch of no progress


def test_progress_rearms_idle_and_a_new_prompt_restarts_every_clock(tmp_path: Path) -> None:
    s = Setup(tmp_path)
    s.dog.task_started(s.w)
    s.minutes(11)
    s.w.last_progress = s.clock.mono()
    s.w.fired.discard(Timeout.IDLE.value)       # what the observer does on progress
    s.minutes(11)
    assert len(s.quiet) == 2
    s.dog.task_started(s.w)
    s.minutes(19)
    assert timed_out(s.fed) == ["soft"]         # counted from the first prompt, not again yet


def test_off_means_off_and_no_task_means_no_clock(tmp_path: Path) -> None:
    s = Setup(tmp_path, Config(timeouts=(("soft", None), ("hard", None), ("idle", None))))
    s.dog.task_started(s.w)
    s.minutes(200)
    assert timed_out(s.fed) == [] and s.quiet == []
    idle = Setup(tmp_path)
    idle.w = make_watched()                     # no task running
    idle.minutes(60)
    assert timed_out(idle.fed) == [] and idle.quiet == []


def test_an_idle_terminal_costs_no_timeout_arithmetic_and_its_fired_clocks_rearm(
        tmp_path: Path) -> None:
    """Most of an idle fleet is terminals with no task and nothing delivered, looked at on
    every pass of the loop: the settings and the timeout table are not even consulted."""
    s = Setup(tmp_path)
    s.dog.task_started(s.w)
    s.minutes(25)
    assert timed_out(s.fed) == ["soft"]
    s.w.state = dataclasses.replace(s.w.state, task=None)    # the task ended

    def no_config() -> Config:
        raise AssertionError("an idle terminal's timeouts were worked out")
    s.dog.config = no_config
    s.minutes(1)
    assert s.w.fired == set() and s.w.fired_from == {}
    s.dog.config = lambda: s.config
    s.w.state = dataclasses.replace(s.w.state, task="the next one")
    s.dog.task_started(s.w)
    s.minutes(21)
    assert timed_out(s.fed) == ["soft", "soft"]                # the next task's own clock


def test_a_message_that_never_started_the_agent_is_a_failed_delivery(tmp_path: Path) -> None:
    s = Setup(tmp_path)
    s.w = make_watched()
    s.w.delivered_at = s.clock.mono()
    s.minutes(4)
    assert timed_out(s.fed) == []
    s.minutes(2)
    assert timed_out(s.fed) == ["not_started"]
    assert s.diagnosed == [{"origin": "delivery", "failures": 0}]
    assert s.w.delivered_at is None


def test_a_terminal_held_by_a_hard_timeout_is_watched_no_more(tmp_path: Path) -> None:
    s = Setup(tmp_path)
    s.w.state = dataclasses.replace(s.w.state, incident=Incident(
        1, "fix the parser", 0.0, "hard timeout", "", phase=Phase.HOLD, hold="hard_timeout"))
    s.dog.task_started(s.w)
    s.minutes(60)
    assert timed_out(s.fed) == [] and s.quiet == [] and s.diagnosed == []


def test_a_loop_in_the_transcript_is_diagnosed_once_then_reported_when_it_persists(
        tmp_path: Path) -> None:
    s = Setup(tmp_path)
    for n in range(3):
        s.tool(n, "pytest -q", error=True)     # an earlier task's loop: not this task's
    s.dog.task_started(s.w)
    s.minutes(1)
    assert s.diagnosed == []
    for n in range(10, 13):
        s.tool(n, "pytest -q", error=True)
    s.minutes(1)
    assert s.diagnosed == [{"origin": "loop", "note": "Bash: pytest -q (error) ×3"}]
    assert s.w.timeline[-1][1] == "looping"
    s.tool(13, "pytest -q", error=True)
    s.minutes(1)
    assert len(s.diagnosed) == 1 and not s.fed.observations    # one diagnosis only
    for n in range(14, 16):
        s.tool(n, "pytest -q", error=True)
    s.minutes(1)
    [seen] = [o for o in s.fed.observations if isinstance(o, LoopSeen)]
    assert seen.persists and seen.what == "Bash: pytest -q (error) ×3"


def test_a_retry_that_succeeds_is_no_loop(tmp_path: Path) -> None:
    s = Setup(tmp_path)
    s.dog.task_started(s.w)
    s.tool(1, "pytest -q", error=True)
    s.tool(2, "pytest -q", error=True)
    s.tool(3, "pytest -q", error=False)
    s.minutes(2)
    assert s.diagnosed == []


def test_without_a_transcript_the_screen_states_are_the_steps(tmp_path: Path) -> None:
    s = Setup(tmp_path)
    s.dog.task_started(s.w)
    for _ in range(3):
        s.w.screen_steps += (screen_step("busy", "Retrying in 5s"),
                             screen_step("connection_lost", "Connection lost"))
    s.minutes(1)
    assert s.diagnosed == [{"origin": "loop",
                            "note": "busy: Retrying in 5s → connection lost: Connection lost ×3"}]


def test_loop_detection_can_be_turned_off(tmp_path: Path) -> None:
    s = Setup(tmp_path, Config(loops=False))
    s.dog.task_started(s.w)
    for n in range(6):
        s.tool(n, "pytest -q", error=True)
    s.minutes(1)
    assert s.diagnosed == []


def test_the_dashboard_and_status_say_why_a_terminal_is_held() -> None:
    from pitcrew.supervisor.api.build import incident_note
    for hold, why in (("hard_timeout", "it ran past the hard time limit"),
                      ("looping", "it kept repeating the same steps")):
        inc = Incident(1, "x", 0.0, "t", "", phase=Phase.HOLD, hold=hold)
        assert incident_note(inc, 0.0) == f"Waiting on you: {why}"


def test_with_diagnosis_off_a_loop_goes_to_autopilot_on_the_local_reading(
        tmp_path: Path) -> None:
    s = Setup(tmp_path, Config(diagnosis=False))
    s.dog.task_started(s.w)
    for n in range(3):
        s.tool(n, "pytest -q", error=True)
    s.minutes(1)
    assert s.diagnosed == []
    assert [o.what for o in s.fed.observations if isinstance(o, LoopSeen)] == [
        "Bash: pytest -q (error) ×3"]


def test_a_gone_agent_has_no_not_started_clock(tmp_path: Path) -> None:
    s = Setup(tmp_path)
    s.w = make_watched(agent_pid=None)
    s.w.delivered_at = s.clock.mono()
    s.minutes(10)
    assert timed_out(s.fed) == [] and s.diagnosed == []


def test_the_same_successful_poll_again_and_again_is_no_loop(tmp_path: Path) -> None:
    """Polling a background job: the same call, succeeding, 20 times. Work, not a loop."""
    s = Setup(tmp_path)
    s.dog.task_started(s.w)
    for n in range(20):
        s.tool(n, "sleep 5; tail -n 20 build.log", error=False)
    s.minutes(2)
    assert s.diagnosed == [] and s.fed.observations == []


def test_spinner_frames_on_a_cli_without_a_transcript_are_no_loop(tmp_path: Path) -> None:
    """Two frames alternating at 1 Hz, as the observer notes them: one step, no loop."""
    s = Setup(tmp_path)                         # no session file: no transcript to read
    s.dog.task_started(s.w)
    from pitcrew.supervisor.core.loops import add_screen_step
    for n in range(60):
        s.w.screen_steps = add_screen_step(
            s.w.screen_steps, screen_step("busy", f"{'◐◓'[n % 2]} building {n}s"), 50)
        s.clock.advance(1.0)
        s.dog.check(s.w)
    assert s.diagnosed == [] and len(s.w.screen_steps) == 1


def error_screen(s: Setup, n: int) -> None:
    """The CLI prints its retry line once more under the last (a busy screen: it retries by
    itself), as the observer reads it."""
    from pitcrew.supervisor.core.loops import add_screen_step
    from pitcrew.supervisor.core.screen import Classification, ScreenState
    s.w.screen = Classification(ScreenState.BUSY, f"◐ waiting {n}s (esc to stop)",
                                cause="server_error")
    s.w.last_text = "\n".join(["◇ summarise the logs",
                               *["✖ API Error: 500 · retrying"] * (n + 1),
                               f"◐ waiting {n}s (esc to stop)"])
    s.w.screen_steps = add_screen_step(        # what the observer does on each reading
        s.w.screen_steps, screen_step("busy", s.w.screen.evidence), 50)


def test_an_error_line_repeating_with_no_tool_calls_is_a_loop(tmp_path: Path) -> None:
    """A transcript with no tool calls, and the screen showing "API Error: 500 · retrying"
    again and again: noticed as a loop of a failing step, long before any timeout."""
    s = Setup(tmp_path)
    s.file.write_text('{"type": "session", "id": "x"}\n')
    s.dog.task_started(s.w)
    for n in range(3):
        error_screen(s, n)
        s.clock.advance(3.0)
        s.dog.check(s.w)
    assert s.diagnosed == [{"origin": "loop",
                            "note": "error: ✖ API Error: 500 · retrying ×3"}]
    # the same line read again with nothing new on screen is no new step
    n = len(s.w.error_steps)
    for _ in range(5):
        s.clock.advance(3.0)
        s.dog.check(s.w)
    assert len(s.w.error_steps) == n == 3


def timer(tmp: Path) -> Setup:
    return Setup(tmp, Config(diagnosis_mode="timer", timeouts=(
        ("idle", 180.0), ("soft", None), ("hard", None), ("stalled", 900.0))))


def test_timer_mode_a_live_spinner_is_no_stall_at_the_idle_timeout(tmp_path: Path) -> None:
    """Manual timer: a long build whose spinner and timer move (the pane prints every second,
    nothing else changes) is not quiet at 3 min; only after `stalled` (15 min)."""
    s = timer(tmp_path)
    s.dog.task_started(s.w)
    for _ in range(14 * 60):
        s.clock.advance(1.0)
        s.w.last_output = s.clock.mono()        # a spinner frame: output, no progress
        s.dog.check(s.w)
    assert s.quiet == []
    for _ in range(2 * 60):
        s.clock.advance(1.0)
        s.w.last_output = s.clock.mono()
        s.dog.check(s.w)
    assert s.quiet == [900.0]


def test_timer_mode_a_frozen_spinner_is_quiet_at_the_idle_timeout(tmp_path: Path) -> None:
    s = timer(tmp_path)
    s.dog.task_started(s.w)
    s.w.last_output = s.clock.mono()
    s.minutes(4)
    assert s.quiet == [180.0]
    s.w.last_output = s.clock.mono()            # it printed again: the clock re-arms
    s.minutes(4)
    assert s.quiet == [180.0, 180.0]


def test_a_crash_loop_is_left_to_the_crash_rules_not_the_loop_detector(tmp_path: Path) -> None:
    """Crash → resume → crash: each crash is an exit (with its own crash-loop rule), so the
    crashed screens it leaves are no failed steps; its last words are no error line either."""
    from pitcrew.supervisor.core.screen import Classification, ScreenState
    s = Setup(tmp_path)
    s.dog.task_started(s.w)
    for n in range(4):
        s.w.screen_steps += (screen_step("busy", "⠋ Working…"),
                             screen_step("crashed", f"fatal: simulated crash ({n} more)"))
        s.w.screen = Classification(ScreenState.CRASHED, "Error: simulated crash")
        s.w.last_text = f"Error: simulated crash ({n} more)\n$ "
        s.clock.advance(3.0)
        s.dog.check(s.w)
        s.w.agent_pid = None if n % 2 else s.w.agent_pid
    assert s.diagnosed == [] and s.fed.observations == []
