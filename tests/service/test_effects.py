"""The effects executor over fakes: what it types, when it refuses to, and what it schedules."""

from __future__ import annotations

import dataclasses

import pytest

from pitcrew.supervisor.adapters.processes import LaunchContext, LaunchStyle
from pitcrew.supervisor.core.delivery import Delivery, Do, Status, Step
from pitcrew.supervisor.core.records import (
    Badge,
    Decision,
    Notify,
    Record,
    RelaunchRefused,
    SwitchToBackup,
    TextKind,
    TypeText,
    Wake,
)
from pitcrew.supervisor.service.effects import ENTER_GAP, LOOK_AGAIN
from pitcrew.supervisor.service.events import DeliveryDue, PressEnter, Report, Rescan, Wakeup
from tests.service.fakes import (
    AGENT_PID,
    CONTINUE,
    IDLE,
    LOGIN,
    PERMISSION_MENU,
    T0,
    Rig,
    busy,
    draft,
    relaunch,
)

CONTINUE_TEXT = TypeText("continue where you stopped", TextKind.CONTINUE)


def test_type_text_types_at_an_idle_box_and_presses_enter_a_moment_later() -> None:
    rig = Rig()
    w = rig.terminal()
    rig.effects.run(w, CONTINUE_TEXT)
    assert rig.tmux.typed_into("%1") == ["continue where you stopped"]
    assert rig.tmux.enters("%1") == 0
    job = rig.scheduler.job("enter:test:%1")
    assert job is not None and job.when == T0 + ENTER_GAP
    assert job.event == PressEnter("test:%1", "%1", "continue")
    assert w.typed_text == "continue where you stopped"   # its echo is Pitcrew's, not the user's
    rig.clock.advance(ENTER_GAP)
    rig.run_due()
    assert rig.tmux.enters("%1") == 1


def test_type_text_continues_in_place_at_a_connection_lost_prompt() -> None:
    rig = Rig()
    w = rig.terminal(screen=CONTINUE)
    rig.effects.run(w, TypeText("continue", TextKind.CONTINUE_IN_PLACE))
    assert rig.tmux.typed_into("%1") == ["continue"]


@pytest.mark.parametrize("screen, shown", [
    (draft("my own unsent words"), "draft"),
    (PERMISSION_MENU, "picker"),                       # a numbered permission menu
    (busy("refactor the parser"), "busy"),
    (LOGIN, "login_required"),
])
def test_type_text_reads_first_and_skips_what_is_unsafe(screen: str, shown: str) -> None:
    rig = Rig()
    w = rig.terminal(screen=screen, task="refactor the parser")
    reads = rig.reader.reads
    rig.effects.run(w, CONTINUE_TEXT)
    assert rig.reader.reads == reads + 1                   # a fresh look, not a remembered one
    assert rig.tmux.typed == []
    assert rig.scheduler.jobs == []
    [row] = rig.ledger.rows
    assert row.badge is Badge.SKIPPED
    assert row.reason == f"did not type: the screen shows {shown}"
    assert row.prompt == "refactor the parser" and row.terminal == "work:%1"


def test_type_text_skips_when_the_agent_no_longer_runs() -> None:
    rig = Rig()
    w = rig.terminal()
    rig.procs.alive.discard(AGENT_PID)
    rig.effects.run(w, CONTINUE_TEXT)
    assert rig.tmux.typed == []
    assert rig.ledger.badges == [Badge.SKIPPED]


def test_wake_becomes_one_job_per_terminal() -> None:
    rig = Rig()
    w = rig.terminal()
    rig.effects.run(w, Wake(T0 + 20))
    rig.effects.run(w, Wake(T0 + 5))                       # a newer wait replaces the older
    [job] = rig.scheduler.jobs
    assert (job.key, job.when, job.event) == ("wake:test:%1", T0 + 5, Wakeup("test:%1"))


def test_notify_record_and_switch_reach_the_gate_the_ledger_and_the_seats() -> None:
    rig = Rig()
    w = rig.terminal()
    decision = Decision(Badge.WAITING, T0, "work:%1", "Fake Agent", "p", "/work/api",
                        "process exited", "login required", 1)
    rig.effects.run(w, Notify("Fake Agent needs a login", "Log in, then resume", "k:login"))
    rig.effects.run(w, Record(decision))
    rig.effects.run(w, SwitchToBackup("rate limit"))
    [msg] = rig.gate.messages
    assert (msg.title, msg.key, msg.terminal) == ("Fake Agent needs a login", "k:login",
                                                  "test:%1")
    assert rig.ledger.rows == [decision]
    assert rig.failed_over == [("test:%1", "rate limit")]


def test_relaunch_respawns_the_agents_own_pane_and_looks_again_soon() -> None:
    rig = Rig()
    w = rig.terminal()
    rig.effects.run(w, relaunch(("fakeagent", "--resume", "s1")))
    assert rig.tmux.respawned == [("%1", ("fakeagent", "--resume", "s1"), "/work/api")]
    assert rig.tmux.remain_on_exit == {"%1": True}
    assert w.agent_pid is None
    rescans = sorted((j.when, j.event) for j in rig.scheduler.jobs)
    assert [event for _, event in rescans] == [Rescan("%1")] * len(LOOK_AGAIN)
    assert rescans[0][0] - T0 < 1.0                        # the first look comes soon


def shell_launch(shell_pid: int = 777) -> LaunchContext:
    """The agent was typed at an interactive bash in the pane."""
    return LaunchContext(LaunchStyle.SHELL, AGENT_PID, 1.0, shell_pid,
                         ("fakeagent",), ("/opt/bin/fakeagent",), "/work/api",
                         {"PATH": "/opt/bin"}, shell_pid=shell_pid, shell_started=0.5,
                         shell_name="bash")


def test_an_agent_started_at_a_shell_is_resumed_by_typing_at_that_shell() -> None:
    rig = Rig()
    w = rig.terminal()
    w.launch = shell_launch()
    rig.procs.alive.add(777)
    rig.effects.run(w, relaunch(("fakeagent", "--resume", "s1")))
    assert rig.tmux.respawned == []                        # the shell is never replaced
    assert rig.tmux.typed_into("%1") == ["/opt/bin/fakeagent --resume s1"]
    assert rig.posted == []
    assert w.delivered_at is None       # a shell command is no message: no not-started clock


def test_a_message_typed_to_the_agent_starts_its_not_started_clock() -> None:
    rig = Rig()
    w = rig.terminal()
    rig.effects.run(w, CONTINUE_TEXT)
    assert w.delivered_at == rig.clock.mono()


def test_a_busy_shell_is_never_typed_into_and_the_core_is_told() -> None:
    rig = Rig()
    w = rig.terminal()
    w.launch = shell_launch()
    rig.procs.alive.add(777)
    rig.procs.busy_shells.add(777)                         # the user runs vim there now
    rig.effects.run(w, relaunch(("fakeagent", "--resume", "s1")))
    assert rig.tmux.typed == [] and rig.tmux.respawned == []
    [report] = rig.posted
    assert isinstance(report, Report) and report.key == "test:%1"
    assert isinstance(report.observation, RelaunchRefused) and report.observation.busy


def test_a_tmux_error_is_logged_and_never_raised(caplog: pytest.LogCaptureFixture) -> None:
    rig = Rig()
    w = rig.terminal()
    rig.tmux.fail.add("send_text")
    rig.effects.run(w, CONTINUE_TEXT)                      # does not raise
    assert "could not TypeText" in caplog.text


def test_press_enter_after_the_pane_changed_presses_nothing() -> None:
    rig = Rig()
    w = rig.terminal()
    rig.effects.type_line(w, "hello", "message")
    [event] = rig.scheduler.events(PressEnter)
    rig.tmux.close("%1")                                   # the pane closed meanwhile
    rig.effects.press_enter(event)
    assert rig.tmux.keys == []


def test_press_enter_for_a_terminal_now_in_another_pane_presses_nothing() -> None:
    rig = Rig()
    w = rig.terminal()
    rig.effects.type_line(w, "hello", "message")
    [event] = rig.scheduler.events(PressEnter)
    w.pane_id = "%7"
    rig.effects.press_enter(event)
    assert rig.tmux.keys == []


def test_an_enter_is_pressed_once_even_if_its_job_runs_after_a_flush() -> None:
    rig = Rig()
    w = rig.terminal()
    rig.effects.type_line(w, "hello", "message")
    rig.effects.flush()                                    # stopping: Enter now
    assert rig.tmux.enters("%1") == 1
    rig.clock.advance(ENTER_GAP)
    rig.run_due()                                          # the job still runs later
    assert rig.tmux.enters("%1") == 1


def test_a_second_line_first_sends_the_enter_of_the_one_before() -> None:
    rig = Rig()
    w = rig.terminal()
    rig.effects.type_line(w, "one", "message")
    rig.effects.type_line(w, "two", "message")
    assert rig.tmux.calls[-2:] == [("send_keys", ("%1", "Enter")),
                                   ("send_text", ("%1", "two"))]
    rig.clock.advance(ENTER_GAP)
    rig.run_due()
    assert rig.tmux.enters("%1") == 2                      # one Enter per line, no more


def test_flush_presses_every_pending_enter() -> None:
    rig = Rig()
    a, b = rig.terminal("%1"), rig.terminal("%2")
    rig.effects.type_line(a, "one", "message")
    rig.effects.type_line(b, "two", "message")
    rig.effects.flush()
    assert rig.tmux.enters("%1") == rig.tmux.enters("%2") == 1
    assert rig.effects.pending_enter == {}


def test_delivery_steps_type_enter_wake_and_diagnose() -> None:
    rig = Rig()
    w = rig.terminal(screen=IDLE)
    d = Delivery("d1", w.key, "run the tests", T0, attempts=8, status=Status.TYPED)
    rig.effects.deliver(w, d, (Step(Do.TYPE), Step(Do.WAKE, T0 + 1)))
    assert rig.tmux.typed_into("%1") == ["run the tests"]
    job = rig.scheduler.job("delivery:d1")
    assert job is not None and job.when == T0 + 1 and job.event == DeliveryDue("d1")
    rig.effects.deliver(w, d, (Step(Do.ENTER), Step(Do.DIAGNOSE), Step(Do.WAKE, T0 + 15)))
    assert rig.tmux.enters("%1") == 1
    assert rig.diagnosed == [("test:%1", 8)]
    assert rig.scheduler.expect("delivery:d1").when == T0 + 15   # replaced, not added
    assert len(rig.scheduler.events(DeliveryDue)) == 1


def test_delivery_steps_for_a_terminal_that_is_gone_only_schedule() -> None:
    rig = Rig()
    d = Delivery("d1", "test:%9", "hello", T0)
    rig.effects.deliver(None, d, (Step(Do.TYPE), Step(Do.DIAGNOSE), Step(Do.WAKE, T0 + 15)))
    assert rig.tmux.calls == []
    assert rig.diagnosed == []
    assert rig.scheduler.job("delivery:d1") is not None


def test_a_line_typed_before_a_kill_gets_its_enter_after_the_restart_only_if_still_there() -> None:
    before = Rig()
    w = before.terminal()
    saved: list[dict] = []
    before.effects.persist = lambda: saved.append(before.effects.typed_json())
    before.effects.run(w, CONTINUE_TEXT)                 # killed before the Enter is pressed
    assert saved[0] == {"test:%1": {"pane_id": "%1", "what": "continue",
                                    "text": "continue where you stopped"}}   # saved first
    for screen, enters in [(draft("continue where you stopped"), 1), (IDLE, 0),
                           (draft("something the user typed"), 0)]:
        after = Rig()
        w = after.terminal(screen=screen)
        after.effects.finish_typed(saved[0])
        assert after.tmux.enters("%1") == enters, screen
        assert after.tmux.typed_into("%1") == []         # never typed again
        assert (w.typed_text == "continue where you stopped") == bool(enters)
    after = Rig()
    after.terminal(screen=draft("a queued message"))
    after.effects.finish_typed({"test:%1": {"pane_id": "%1", "what": "a queued message",
                                            "text": "a queued message"}})
    assert after.tmux.enters("%1") == 0                  # deliveries press their own Enter
    after.effects.finish_typed({"test:%1": 7})           # a saved entry of the wrong shape
    after.effects.finish_typed(["not", "a", "table"])


def test_a_pane_in_copy_mode_gets_no_resume_command_and_the_core_is_told() -> None:
    rig = Rig()
    w = rig.terminal()
    w.launch = shell_launch()
    rig.procs.alive.add(777)
    rig.tmux.panes["%1"] = dataclasses.replace(rig.tmux.panes["%1"], in_mode=True)
    rig.effects.run(w, relaunch(("fakeagent", "--resume", "s1")))
    assert rig.tmux.typed == [] and rig.tmux.respawned == []
    [report] = rig.posted
    assert isinstance(report, Report) and isinstance(report.observation, RelaunchRefused)
    assert report.observation.busy and "copy mode" in report.observation.reason


def test_no_continue_is_typed_into_a_pane_in_copy_mode() -> None:
    rig = Rig()
    w = rig.terminal()
    rig.tmux.panes["%1"] = dataclasses.replace(rig.tmux.panes["%1"], in_mode=True)
    rig.effects.run(w, CONTINUE_TEXT)
    assert rig.tmux.typed == []
    [row] = rig.ledger.rows
    assert row.badge is Badge.SKIPPED and "copy mode" in row.reason


def test_the_wrap_up_is_typed_while_it_works_but_never_onto_type_ahead() -> None:
    """Typed after the user's unsent line, it would be sent with it (issue 21 item 7)."""
    wrap_up = TypeText("Finish the current step and save your work.", TextKind.WRAP_UP)
    rig = Rig()
    w = rig.terminal(screen=busy("work 60"))
    rig.effects.run(w, wrap_up)
    assert rig.tmux.typed_into("%1") == [wrap_up.text]       # an empty box: typed
    rig = Rig()
    w = rig.terminal(screen=busy("work 60") + "\nfake> my next idea")
    rig.effects.run(w, wrap_up)
    assert rig.tmux.typed == []
    [row] = rig.ledger.rows
    assert row.badge is Badge.SKIPPED and "the input box holds text" in row.reason
    assert "my next idea" in row.reason


def test_a_resume_command_is_typed_only_at_an_empty_shell_command_line() -> None:
    for line, typed in [("me@box:~/proj$ ", True), ("% ", True), ("bash-5.2# ", True),
                        ("❯ ", True), ("me@box:~/proj$ ls -la", False),
                        ("some output without a prompt", False)]:
        rig = Rig()
        w = rig.terminal(screen=f"Traceback …\nRuntimeError: reset\n{line}")
        w.launch = shell_launch()
        rig.procs.alive.add(777)
        rig.effects.run(w, relaunch(("fakeagent", "--resume", "s1")))
        assert bool(rig.tmux.typed) is typed, line
        if not typed:
            [report] = rig.posted
            assert isinstance(report, Report) and isinstance(report.observation,
                                                              RelaunchRefused)
            assert report.observation.busy and "command line is not empty" in \
                report.observation.reason
