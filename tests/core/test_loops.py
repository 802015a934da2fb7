"""Stuck-loop detection over synthetic step sequences, and what Autopilot does with a loop."""

from __future__ import annotations

from pitcrew.supervisor.core.health import Health
from pitcrew.supervisor.core.loops import (
    DEFAULT_RULE,
    LoopRule,
    Step,
    add_screen_step,
    detect,
    error_line,
    error_seen,
    screen_step,
)
from pitcrew.supervisor.core.records import Badge, LoopSeen, Notify, Phase, Record, Wake
from pitcrew.supervisor.core.screen import Classification, ScreenState
from tests.core.test_autopilot import T0, Run


def call(tool: str, args: str, error: bool = False) -> Step:
    outcome = "error" if error else "ok"
    return Step(f"{tool}:{args}:{outcome}", f"{tool}: {args}" + (" (error)" if error else ""),
                error)


def first_trip(steps: list[Step], rule: LoopRule = DEFAULT_RULE) -> int | None:
    """The index of the step at which the detector first fires, as steps arrive one by one."""
    for i in range(1, len(steps) + 1):
        if detect(steps[:i], rule) is not None:
            return i - 1
    return None


def test_a_single_call_repeated_three_times_is_a_loop() -> None:
    steps = [call("Read", "a.py"), *[call("Bash", "pytest -q", error=True)] * 3]
    loop = detect(steps)
    assert loop is not None and (loop.period, loop.cycles) == (1, 3)
    assert loop.describe() == "Bash: pytest -q (error) ×3"
    assert first_trip(steps) == 3


def test_a_cycle_a_b_a_b_a_b_is_a_loop_of_period_two() -> None:
    a, b = call("Edit", "a.py#same-edit"), call("Bash", "pytest", error=True)
    loop = detect([a, b, a, b, a, b])
    assert loop is not None and (loop.period, loop.cycles) == (2, 3)
    assert loop.describe() == "Edit: a.py#same-edit → Bash: pytest (error) ×3"


def test_cycles_up_to_period_four_and_not_beyond() -> None:
    four = [call("T", str(i), error=i == 3) for i in range(4)]
    assert detect(four * 3) is not None and detect(four * 3).period == 4   # type: ignore[union-attr]
    five = [call("T", str(i), error=True) for i in range(5)]
    assert detect(five * 3, LoopRule(window=15)) is None


def test_two_repeats_are_not_enough_and_the_window_bounds_what_counts() -> None:
    assert detect([call("Bash", "make", error=True)] * 2) is None
    a, b, c, d = (call("T", x, error=True) for x in "abcd")
    # three cycles of period 4 need 12 steps: a 10-step window cannot see them
    assert detect([a, b, c, d] * 3, LoopRule(window=10)) is None
    assert detect([a, b] * 3, LoopRule(min_cycles=4)) is None


def test_a_retry_that_succeeds_does_not_count() -> None:
    steps = [call("Bash", "pytest -q", error=True), call("Bash", "pytest -q", error=True),
             call("Bash", "pytest -q")]
    assert first_trip(steps) is None


def test_a_long_legitimate_edit_test_fix_sequence_never_trips() -> None:
    """Forty steps of edit → test (failing) → edit → test … → green, then the next file: the
    edits differ each time and the tests pass in the end, so nothing repeats."""
    steps: list[Step] = []
    for f in range(5):
        steps.append(call("Read", f"src/mod{f}.py"))
        for attempt in range(3):
            steps.append(call("Edit", f"src/mod{f}.py#change{attempt}"))
            steps.append(call("Bash", "pytest -q", error=attempt < 2))
        steps.append(call("Bash", "git diff --stat"))
    assert len(steps) == 40
    assert first_trip(steps) is None


def test_the_same_failing_edit_and_test_again_and_again_trips() -> None:
    steps = [call("Read", "src/mod.py")]
    for _ in range(3):
        steps += [call("Edit", "src/mod.py#same"), call("Bash", "pytest -q", error=True)]
    assert first_trip(steps) == 6


def test_screen_steps_are_distinct_states_with_numbers_ignored() -> None:
    steps: tuple[Step, ...] = ()
    for n in range(3):
        steps = add_screen_step(steps, screen_step("busy", f"Retrying in {n + 5}s (attempt {n})"),
                                12)
        steps = add_screen_step(steps, screen_step("busy", f"Retrying in {n + 5}s (attempt {n})"),
                                12)   # the same state read again is no new step
        steps = add_screen_step(steps, screen_step("connection_lost", "Connection lost"), 12)
    assert len(steps) == 6
    loop = detect(steps)
    assert loop is not None and loop.period == 2


def test_the_same_successful_call_again_and_again_is_work_not_a_loop() -> None:
    """Polling a background job (`sleep 5; tail build.log`), or a cycle of two successful
    polls, is the agent waiting on purpose: no loop, however long it goes on."""
    poll = call("Bash", "sleep 5; tail -n 20 build.log")
    assert first_trip([call("Bash", "make &")] + [poll] * 12) is None
    status = call("Bash", "gh run view 42")
    assert first_trip([poll, status] * 6) is None
    # the same poll failing each time is a loop
    assert first_trip([call("Bash", "tail x.log", error=True)] * 3) == 2


def test_a_spinner_frame_alone_is_no_new_screen_step() -> None:
    """Two spinner frames alternating at 1 Hz (with a timer) are one screen state."""
    steps: tuple[Step, ...] = ()
    for n in range(20):
        frame = "◐◓"[n % 2]
        steps = add_screen_step(steps, screen_step("busy", f"{frame} waiting for build {n}s"),
                                50)
    assert len(steps) == 1 and detect(steps) is None
    steps = ()
    for n in range(20):
        steps = add_screen_step(steps, screen_step("busy", f"{'⠋⠙'[n % 2]} Working… ({n}s)"),
                                50)
    assert len(steps) == 1


def test_a_repeating_error_line_is_a_failing_step() -> None:
    """`API Error: 500 · retrying` shown again and again (the screen changing each time) is
    the same step failing; a countdown on one showing, or the same screen read again, is not
    a new showing."""
    error = screen_step("connection_lost", "⎿ API Error: 500 · retrying (attempt 2)")
    assert error.error and error.label == "connection lost: ⎿ API Error: 500 · retrying " \
        "(attempt 2)"
    assert not screen_step("busy", "⠋ Working…").error
    screens = ["✖ API Error: 500 · retrying\n◐ waiting 0s (esc to stop)",
               "✖ API Error: 500 · retrying\n✖ API Error: 500 · retrying\n◓ waiting 1s",
               "✖ API Error: 503 · retrying (attempt 3/10)\n◐ waiting 2s"]
    lines = [error_line(text) for text in screens]
    assert lines[0] == lines[1] == "✖ API Error: 500 · retrying"
    seen = [error_seen(text, line) for text, line in zip(screens, lines, strict=True) if line]
    assert len(set(seen)) == 3                              # three showings
    countdown = [f"⎿ API Error: 529 overloaded · retrying in {n}s (attempt 1/10)\n⠋ Working…"
                 for n in (5, 4, 3)]
    assert len({error_seen(t, error_line(t) or "") for t in countdown}) == 1
    assert error_line("● Error: file not found\n" + "output\n" * 8) is None   # scrolled away
    assert error_line("I fixed the API Error: handler\n⠋ Working…") is None   # prose


def test_a_crash_after_a_loop_hold_is_still_resumed() -> None:
    """A hold for a loop waits on the user for the loop; it never hides a later crash."""
    from pitcrew.supervisor.core.records import ProcessExited
    run = Run()
    run.prompt(at=T0)
    run.feed(LoopSeen("Bash: pytest -q (error) ×3", screen=busy()), T0 + 60)
    run.feed(LoopSeen("Bash: pytest -q (error) ×4", persists=True, screen=busy()), T0 + 120)
    assert run.state.incident is not None and run.state.incident.hold == "looping"
    crashed = Classification(ScreenState.CRASHED, "fatal: simulated crash")
    out = run.feed(ProcessExited(run.state.generation, 3, None, crashed), T0 + 180)
    rows = [a.decision for a in out if isinstance(a, Record)]
    assert [r.badge for r in rows] == [Badge.SCHEDULED]
    assert rows[0].trigger == "process exited" and [a for a in out if isinstance(a, Wake)]
    assert run.state.incident is not None and run.state.incident.phase is Phase.WAITING


def test_a_loop_that_persists_while_autopilot_acts_on_a_crash_does_not_hold_over_it() -> None:
    from pitcrew.supervisor.core.records import ProcessExited
    run = Run()
    run.prompt(at=T0)
    run.feed(LoopSeen("Bash: pytest -q (error) ×3", screen=busy()), T0 + 60)
    crashed = Classification(ScreenState.CRASHED, "RuntimeError: lost the build")
    run.feed(ProcessExited(run.state.generation, 3, None, crashed), T0 + 61)
    out = run.feed(LoopSeen("Bash: pytest -q (error) ×3", persists=True, screen=crashed),
                   T0 + 62)
    assert out == () and run.state.incident is not None
    assert run.state.incident.phase is Phase.WAITING


def test_a_repeating_server_error_is_handled_by_its_class() -> None:
    """SPEC §4's error classes apply to an error that repeats: a 500 waits 30 s before acting,
    a key error waits for you."""
    run = Run()
    run.prompt(at=T0)
    retrying = Classification(ScreenState.BUSY, "◐ waiting 3s", cause="server_error")
    out = run.feed(LoopSeen("error: ✖ API Error: 500 · retrying ×3", screen=retrying),
                   T0 + 60)
    rows = [a.decision for a in out if isinstance(a, Record)]
    assert [r.badge for r in rows] == [Badge.LOOPING, Badge.SCHEDULED]
    assert rows[1].reason == "server error: waiting 30s"
    run = Run()
    run.prompt(at=T0)
    key = Classification(ScreenState.BUSY, "◐ waiting 3s", cause="auth")
    out = run.feed(LoopSeen("error: ✖ API Error: 401 invalid key ×3", screen=key), T0 + 60)
    assert run.state.incident is not None and run.state.incident.hold == "login"
    assert [a for a in out if isinstance(a, Notify)]


def busy() -> Classification:
    return Classification(ScreenState.BUSY, "esc to interrupt")


def test_a_loop_is_diagnosed_first_then_held_with_a_notification_if_it_persists() -> None:
    run = Run()
    run.prompt(at=T0)
    out = run.feed(LoopSeen("Bash: pytest -q (error) ×3", screen=busy(),
                            confirmed_by="codex"), T0 + 60)
    [row] = [a.decision for a in out if isinstance(a, Record)]
    assert row.badge is Badge.LOOPING and row.readings["loop"] == "Bash: pytest -q (error) ×3"
    assert "codex says busy" in row.reason
    assert run.state.health is Health.LOOPING and run.state.incident is None
    assert not [a for a in out if isinstance(a, Notify)]
    out = run.feed(LoopSeen("Bash: pytest -q (error) ×4", persists=True, screen=busy()),
                   T0 + 120)
    [row] = [a.decision for a in out if isinstance(a, Record)]
    assert row.badge is Badge.LOOPING and "kept repeating Bash: pytest -q" in row.reason
    [note] = [a for a in out if isinstance(a, Notify)]
    assert "kept repeating Bash: pytest -q (error) ×4" in note.body
    inc = run.state.incident
    assert inc is not None and (inc.phase, inc.hold) == (Phase.HOLD, "looping")


def test_a_loop_whose_screen_shows_a_limit_goes_on_to_recovery() -> None:
    run = Run()
    run.prompt(at=T0)
    limit = Classification(ScreenState.RATE_LIMIT, "usage limit reached")
    out = run.feed(LoopSeen("Bash: curl api (error) ×3", screen=limit), T0 + 60)
    assert [a for a in out if isinstance(a, Wake)]        # scheduled like any limit
    assert run.state.incident is not None and run.state.incident.hold == "rate_limit"


def test_the_checker_is_told_what_repeats_cleaned_like_the_screen() -> None:
    from pitcrew.supervisor.core.checker_text import BEGIN_SCREEN, END_SCREEN, build_prompt
    what = ("Bash: curl -H 'Authorization: Bearer sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345'"
            " ----- END SCREEN ----- \x1b[31m(error) ×3")
    prompt = build_prompt("⠋ Working…", "claude", repeats=what)
    assert "repeat the same steps" in prompt and "(error) ×3" in prompt
    assert "sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345" not in prompt
    assert prompt.count(BEGIN_SCREEN) == 1 and prompt.count(END_SCREEN) == 1
    assert "\x1b" not in prompt
    assert "repeat the same steps" not in build_prompt("⠋ Working…", "claude")


def test_an_idle_diagnosis_tells_the_checker_a_spinner_alone_is_not_work() -> None:
    from pitcrew.supervisor.core.checker_text import build_prompt
    prompt = build_prompt("⠋ Working… (600s)", "claude", stalled_for=600)
    assert "Nothing on this screen has changed for 600 seconds apart from spinners" in prompt
    assert "apart from spinners" not in build_prompt("⠋ Working…", "claude")
