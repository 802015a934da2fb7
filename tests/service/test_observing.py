"""Readings become the core's observations, over fakes: a prompt starting and finishing, a
prompt typed into a CLI whose provider file has no `input` pattern, an exit, a ^C."""

from __future__ import annotations

import dataclasses
import signal

import pytest

from pitcrew.supervisor.adapters.processes import LaunchContext, LaunchStyle
from pitcrew.supervisor.core.records import (
    Incident,
    Phase,
    ProcessExited,
    PromptSubmitted,
    TaskFinished,
)
from pitcrew.supervisor.core.screen import ScreenState
from pitcrew.supervisor.service.observing import (
    Observer,
    interrupted,
    last_lines,
    note_input,
    submitted_input,
)
from pitcrew.supervisor.store.config import Config
from tests.service.fakes import (
    AGENT_PID,
    BANNER,
    IDLE,
    Fed,
    Rig,
    busy,
    draft,
    idle_after,
    make_pane,
    make_watched,
)


class Setup:
    def __init__(self) -> None:
        self.rig = Rig()
        self.fed = Fed()
        self.killed: list[str] = []
        self.close = False
        self.observer = Observer(
            self.rig.reader, self.rig.clock, self.fed, lambda: None, Config,
            lambda w, quiet_for: None, self.rig.tmux.pane, self.killed.append,
            lambda w: self.close, self.rig.procs.at_prompt, lambda key: False,
            session=lambda w: "s1")


def prompts(fed: Fed) -> list[str]:
    return [o.text for o in fed.observations if isinstance(o, PromptSubmitted)]


def test_a_prompt_starts_when_the_agent_leaves_rest_and_finishes_when_it_returns() -> None:
    s = Setup()
    w = s.rig.terminal()
    s.observer.screen(w)
    s.rig.tmux.screens["%1"] = busy("fix the parser")
    s.observer.screen(w)
    assert prompts(s.fed) == ["fix the parser"]
    w.state = dataclasses.replace(w.state, task="fix the parser")
    s.rig.tmux.screens["%1"] = idle_after("fix the parser")
    s.observer.screen(w)
    assert any(isinstance(o, TaskFinished) for o in s.fed.observations)


def test_without_an_input_pattern_the_cursor_row_gives_the_typed_prompt() -> None:
    w = make_watched()
    note_input(w, "banner\n▸ ", 1, ScreenState.IDLE)
    assert w.input_prefix == "▸"
    note_input(w, "banner\n▸ crash now", 1, ScreenState.UNKNOWN)
    assert w.typed_input == "crash now"
    # still on the input row: not sent yet
    assert submitted_input(w, "banner\n▸ crash now", 1) is None
    # the cursor moved below it: it was sent (even with no busy phase)
    assert submitted_input(w, "banner\n▸ crash now\n» crash now\n$ ", 3) == "crash now"
    assert w.typed_input == ""


def test_an_exit_with_an_unreadable_status_carries_the_last_lines_and_a_ctrl_c() -> None:
    s = Setup()
    w = s.rig.terminal()
    w.pid_generation = {AGENT_PID: 0}
    s.rig.tmux.screens["%1"] = (IDLE + "hang\n⠋ thinking\n^CTraceback (most recent call last):"
                                "\nKeyboardInterrupt\n$ ")
    s.observer.exited(w, AGENT_PID)
    [exited] = [o for o in s.fed.observations if isinstance(o, ProcessExited)]
    assert exited.status is None and exited.interrupted
    assert exited.tail[-1] == "$" and "KeyboardInterrupt" in exited.tail


def test_a_prompt_that_died_before_showing_anything_was_running() -> None:
    s = Setup()
    w = s.rig.terminal()
    w.pid_generation = {AGENT_PID: 0}
    w.input_prefix, w.typed_input = "fake>", "crash 3"
    s.rig.tmux.screens["%1"] = IDLE + "crash 3\nTraceback …\nRuntimeError: boom\n$ "
    s.observer.exited(w, AGENT_PID)
    kinds = [type(o) for o in s.fed.observations]
    assert kinds.index(PromptSubmitted) < kinds.index(ProcessExited)
    assert prompts(s.fed) == ["crash 3"]


def test_a_prompt_that_died_unseen_after_a_task_seen_running_is_the_one_that_crashed() -> None:
    """`work` was read running, finished and `crash` was typed with no reading between: the
    dead pane's newest echo is the prompt that was running, not the task read last."""
    s = Setup()
    w = s.rig.terminal()
    w.pid_generation = {AGENT_PID: 0}
    s.observer.screen(w)
    s.rig.tmux.screens["%1"] = busy("work 0.2")
    s.observer.screen(w)
    w.state = dataclasses.replace(w.state, task="work 0.2")
    s.rig.tmux.screens["%1"] = (idle_after("work 0.2") + "crash 3 0.5\n"
                                "Traceback …\nRuntimeError: boom\n\nPane is dead")
    s.observer.exited(w, AGENT_PID)
    kinds = [type(o) for o in s.fed.observations]
    assert prompts(s.fed) == ["work 0.2", "crash 3 0.5"]
    assert kinds.index(TaskFinished) < kinds.index(ProcessExited)
    assert kinds[-2:] == [PromptSubmitted, ProcessExited]


@pytest.mark.parametrize("cursor_on_echo", [False, True], ids=["below", "on its row"])
def test_a_prompt_read_as_a_draft_then_running_starts_once(cursor_on_echo: bool) -> None:
    """Read in the box, then running for two readings — the first with the cursor below the
    echo or still on it: one prompt, never finished between (a second start would read as a
    user's prompt and close Autopilot's incident)."""
    s = Setup()
    w = s.rig.terminal()
    s.observer.screen(w)
    s.rig.tmux.screens["%1"] = draft("Continue from where you stopped")
    s.observer.screen(w)
    s.rig.tmux.screens["%1"] = busy("Continue from where you stopped")
    pane = s.rig.tmux.pane
    if cursor_on_echo:
        s.rig.tmux.pane = lambda pane_id: dataclasses.replace(   # type: ignore[method-assign]
            pane(pane_id), cursor_y=pane(pane_id).cursor_y - 1)
    s.observer.screen(w)
    s.rig.tmux.pane = pane                                        # type: ignore[method-assign]
    w.state = dataclasses.replace(w.state, task="Continue from where you stopped")
    s.rig.tmux.screens["%1"] = busy("Continue from where you stopped") + "\n● Read 3 files"
    s.observer.screen(w)
    assert prompts(s.fed) == ["Continue from where you stopped"]
    assert not any(isinstance(o, TaskFinished) for o in s.fed.observations)


def test_an_exit_after_the_task_read_running_keeps_that_task() -> None:
    s = Setup()
    w = s.rig.terminal()
    w.pid_generation = {AGENT_PID: 0}
    s.observer.screen(w)
    s.rig.tmux.screens["%1"] = busy("work 9")
    s.observer.screen(w)
    w.state = dataclasses.replace(w.state, task="work 9")
    s.rig.tmux.screens["%1"] = busy("work 9") + "\nTraceback …\nRuntimeError: boom\n"
    s.observer.exited(w, AGENT_PID)
    assert prompts(s.fed) == ["work 9"]


def test_the_shells_killed_drawn_in_the_dead_clis_input_box_is_not_a_prompt() -> None:
    """Claude Code 2.1.197 killed at a bash prompt (tests/e2e/real/): bash prints `Killed`
    where Claude's cursor was, in its input box (`❯ Killed`), then its prompt over the box's
    rule. That row is the shell's report, not a prompt sent: the task read running is the
    one that crashed (a `Killed` prompt would make the resumed session's redrawn history a
    new prompt of the user's, and no continue would follow)."""
    s = Setup()
    w = s.rig.terminal()
    w.pid_generation = {AGENT_PID: 0}
    s.observer.screen(w)
    s.rig.tmux.screens["%1"] = busy("work 9")
    s.observer.screen(w)
    w.state = dataclasses.replace(w.state, task="work 9")
    s.rig.tmux.screens["%1"] = busy("work 9") + "\nfake> Killed\n$ " + "─" * 40
    s.observer.exited(w, AGENT_PID)
    assert prompts(s.fed) == ["work 9"]
    assert not any(isinstance(o, TaskFinished) for o in s.fed.observations)
    [exited] = [o for o in s.fed.observations if isinstance(o, ProcessExited)]
    assert exited.signal == signal.SIGKILL


def test_a_dead_pane_of_a_normal_exit_is_closed_as_tmux_would_have() -> None:
    s = Setup()
    w = s.rig.terminal()
    w.pid_generation = {AGENT_PID: 0}
    s.rig.tmux.panes["%1"] = make_pane("%1", dead=True, dead_status=0)
    s.close = True
    s.observer.exited(w, AGENT_PID)
    assert s.killed == ["%1"]


def test_a_relaunch_that_died_at_once_is_reported_without_waiting_for_its_process() -> None:
    s = Setup()
    w = s.rig.terminal()
    w.state = dataclasses.replace(w.state, incident=Incident(
        1, "fix", 1.0, "process exited", "exit 3", 1, Phase.CONFIRMING, 99.0), generation=1)
    w.relaunched_pid, w.agent_pid = 5151, None
    pane = make_pane("%1", pid=5151, dead=True, dead_status=1)
    s.rig.tmux.panes["%1"] = pane
    s.observer.gone_while_confirming(w, pane)
    [exited] = [o for o in s.fed.observations if isinstance(o, ProcessExited)]
    assert (exited.generation, exited.status) == (1, 1)


def test_a_shell_back_at_its_prompt_after_the_resume_command_means_it_ended() -> None:
    s = Setup()
    w = s.rig.terminal()
    w.launch = LaunchContext(LaunchStyle.SHELL, AGENT_PID, 1.0, 700, ("a",), ("a",), "/w", {},
                             shell_pid=700, shell_started=0.5)
    w.relaunched_pid, w.agent_pid = 700, None
    pane = make_pane("%1", pid=700, command="bash")
    s.rig.tmux.panes["%1"] = pane
    s.observer.gone_while_confirming(w, pane)
    assert [type(o) for o in s.fed.observations] == [ProcessExited]
    s.rig.procs.busy_shells.add(700)                  # still running it: not ended
    w.relaunched_pid = 700
    s.observer.gone_while_confirming(w, pane)
    assert len(s.fed.observations) == 1


def test_last_lines_and_interrupted() -> None:
    assert last_lines("a\n\nb\nPane is dead (status 1)\n", 5) == ("a", "b")
    assert interrupted(("x", "^C")) and not interrupted(("Error", "$"))


def test_only_a_change_beyond_the_spinner_and_timer_is_progress() -> None:
    s = Setup()
    w = s.rig.terminal()
    w.state = dataclasses.replace(w.state, task="stall")
    frame = BANNER + 'fake> stall\n{} Working on "stall"… ({}s · ↓ 40 tokens · esc to interrupt)'
    s.rig.tmux.screens["%1"] = frame.format("⠋", 1)
    s.observer.screen(w)
    first = w.last_progress
    s.rig.clock.advance(30)
    s.rig.tmux.screens["%1"] = frame.format("⠹", 31)     # spinner turned, timer counted on
    w.last_read = float("-inf")
    s.observer.screen(w)
    assert w.last_progress == first                      # not progress
    s.rig.clock.advance(5)
    s.rig.tmux.screens["%1"] = frame.format("⠹", 36).replace("40 tokens", "97 tokens")
    w.last_read = float("-inf")
    s.observer.screen(w)
    assert w.last_progress == s.rig.clock.mono()         # the stream moved: progress


def test_a_busy_screen_means_the_typed_text_was_taken_up() -> None:
    s = Setup()
    w = s.rig.terminal()
    s.observer.screen(w)
    w.delivered_at = s.rig.clock.mono()
    w.state = dataclasses.replace(w.state, task="fix the parser")
    s.rig.tmux.screens["%1"] = busy("fix the parser")
    w.last_read = float("-inf")
    s.observer.screen(w)
    assert w.delivered_at is None
    assert [step.key for step in w.screen_steps][-1].startswith("screen:busy:")


def test_an_instant_answer_takes_the_message_up_but_its_echo_alone_does_not() -> None:
    s = Setup()
    w = s.rig.terminal()
    s.observer.screen(w)
    w.delivered_at, w.delivered_sig = s.rig.clock.mono(), w.progress_sig
    s.rig.tmux.screens["%1"] = IDLE.replace("fake> ", "fake> hello\nfake> ")   # echo only
    w.last_read = float("-inf")
    s.observer.screen(w)
    assert w.delivered_at is not None          # accepted, never started: the clock runs on
    s.rig.tmux.screens["%1"] = idle_after("hello")                 # echo and an answer
    w.last_read = float("-inf")
    s.observer.screen(w)
    assert w.delivered_at is None


def test_the_continue_pitcrew_typed_is_its_own_even_while_the_old_turn_is_the_newest_echo(
        ) -> None:
    """A resumed session shows its history: under load the reading that sees it go busy can
    still show the crashed prompt as the newest echo. The box held what Pitcrew typed, so
    the prompt is Pitcrew's (taken for the user's, it reset the attempt count: a crash loop
    restarted "1 of 3" for ever)."""
    s = Setup()
    old = idle_after("crash 3 1")
    w = s.rig.terminal(screen=old)
    s.observer.screen(w)
    w.typed_text, w.typed_at = "continue where you left off", s.rig.clock.mono()
    s.rig.tmux.screens["%1"] = draft("continue where you left off", before=old)
    s.observer.screen(w)
    s.rig.tmux.screens["%1"] = busy("crash 3 1")
    s.observer.screen(w)
    [submitted] = [o for o in s.fed.observations if isinstance(o, PromptSubmitted)]
    assert submitted.by_pitcrew and submitted.text == "continue where you left off"


def open_incident(prompt: str, phase: Phase = Phase.WATCHING) -> Incident:
    return Incident(1, prompt, 0.0, "process exited", "crashed", attempts=1, phase=phase)


def test_a_redrawn_history_is_not_a_new_prompt() -> None:
    """A resumed session redraws the conversation: the incident's own prompt shows again as
    the newest echo. It is that prompt, not a new one from the user (no new incident)."""
    s = Setup()
    w = s.rig.terminal(screen=idle_after("Continue from where you stopped."),
                       task=None, incident=open_incident("refactor the parser"))
    s.observer.screen(w)
    s.rig.tmux.screens["%1"] = idle_after("refactor the parser")     # the history, redrawn
    s.observer.screen(w)
    assert prompts(s.fed) == []


def test_a_redrawn_history_read_as_a_sent_input_row_is_not_a_new_prompt() -> None:
    """Claude Code 2.1.197 resumed at a shell (tests/e2e/real/): `claude --resume` redraws
    the conversation, so an input row with the incident's prompt appears above the empty box,
    one more than before the crash. It is the history, not a prompt the user just sent (that
    would close the incident, and no continue would follow)."""
    s = Setup()
    w = s.rig.terminal(task=None, incident=open_incident("refactor the parser"))
    s.observer.screen(w)                                              # the box: `fake>`
    s.rig.tmux.screens["%1"] = (f"$ fakeagent --resume 0b7c\n{BANNER}"
                                "fake> refactor the parser\n\nfake> ")
    s.observer.screen(w)
    assert prompts(s.fed) == []


def test_pitcrews_continue_is_its_own_long_after_it_typed_it() -> None:
    """After a restart the memory of the typing is gone (or older than its window): the fixed
    continue while an incident is open is still Pitcrew's, and keeps the incident's count."""
    s = Setup()
    w = s.rig.terminal(task=None, incident=open_incident("refactor the parser"))
    s.observer.screen(w)
    s.rig.tmux.screens["%1"] = busy("Continue from where you stopped. Do not redo steps")
    s.observer.screen(w)
    [obs] = [o for o in s.fed.observations if isinstance(o, PromptSubmitted)]
    assert obs.by_pitcrew


def test_the_same_text_with_no_incident_open_is_the_users() -> None:
    s = Setup()
    w = s.rig.terminal(task=None)
    s.observer.screen(w)
    s.rig.tmux.screens["%1"] = busy("Continue from where you stopped. Do not redo steps")
    s.observer.screen(w)
    [obs] = [o for o in s.fed.observations if isinstance(o, PromptSubmitted)]
    assert not obs.by_pitcrew
