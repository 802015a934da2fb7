"""How an agent ended, told from facts (issue 21 item 2): the CLI's own goodbye under any
common shell prompt is a normal exit; the shell's signal report or a failure on screen is a
crash; a shell prompt alone tells nothing — and then Autopilot types nothing and says so."""

from __future__ import annotations

import datetime as dt
import random

import pytest

from pitcrew.supervisor.core.autopilot import decide
from pitcrew.supervisor.core.classifier import classify, said_goodbye
from pitcrew.supervisor.core.records import (
    Badge,
    Notify,
    Phase,
    ProcessExited,
    PromptSubmitted,
    Record,
    Relaunch,
    TerminalState,
    TypeText,
)
from pitcrew.supervisor.core.recovery import GOODBYE, normal_exit
from pitcrew.supervisor.core.screen import Classification, ScreenState
from pitcrew.supervisor.core.settings import Context
from tests.support.screens import registry

NOW = dt.datetime(2026, 12, 2, 12, 0, tzinfo=dt.UTC)
PROMPTS = ["$ ", "% ", "me@box:~/proj$ ", "user@host:~/dir$ ", "root@box:/srv# "]
ZORP = ("zorp 1.0 ready\n> fix the bug\nworking...\ndone.\n> /exit\n"
        "Bye! Resume with: zorp --resume 3f2a9c1e-77aa-4e0b-9c55-0d1f2e3a4b5c\n")


def rules(name: str = "generic"):
    p = registry().get(name)
    return p.screen if p else registry().generic_screen


def read(text: str, provider: str = "generic") -> Classification:
    return classify(text, rules(provider), NOW, dt.UTC)


@pytest.mark.parametrize("prompt", PROMPTS)
def test_a_resume_hint_above_a_shell_prompt_is_a_normal_exit(prompt: str) -> None:
    got = read(ZORP + prompt)
    assert got.state is ScreenState.EXITED and got.cause == GOODBYE
    assert "Resume with: zorp --resume" in got.evidence


@pytest.mark.parametrize(("provider", "words"), [
    ("claude", "Resume this session with:\nclaude --resume cbd34d4c-11e7-47aa-9efc-2f3ac65ca9f7"),
    ("gemini", "│  To resume this session: gemini --resume 6c9f0d6f-fa3e-486e-9fdc-4603ea87d8cc │"),
    ("qwen", "  To continue this session, run qwen --resume cf10282f-c9c9-4745-a723-4607ce405c11"),
    ("codex", "Disconnected from this task. Any running work continues.\nTo reconnect, run:\n"
              "  codex resume 01a22e6d-b1d0-7270-8558-3584d590e97a"),
])
@pytest.mark.parametrize("prompt", PROMPTS[:3])
def test_each_real_clis_goodbye_is_a_normal_exit(provider: str, words: str, prompt: str) -> None:
    got = read(f"working on it\n{words}\n{prompt}", provider)
    assert (got.state, got.cause) == (ScreenState.EXITED, GOODBYE)


@pytest.mark.parametrize("prompt", PROMPTS)
def test_a_shell_prompt_alone_is_exited_not_crashed(prompt: str) -> None:
    got = read("> fix the bug\nworking...\n" + prompt)
    assert got.state is ScreenState.EXITED and got.cause is None


@pytest.mark.parametrize("tail", ["Killed\n$ ", "zsh: killed     zorp\n% ",
                                  "Traceback (most recent call last):\n  File \"x\", line 1\n"
                                  "RuntimeError: boom\nme@box:~/proj$ "])
def test_a_signal_or_a_failure_above_the_prompt_is_a_crash(tail: str) -> None:
    assert read("> fix the bug\nworking...\n" + tail).state is ScreenState.CRASHED


def test_an_earlier_runs_goodbye_above_the_command_line_does_not_count() -> None:
    text = ZORP + "me@box:~/proj$ zorp\nzorp 1.0 ready\n> go\nworking...\nme@box:~/proj$ "
    got = read(text)
    assert got.state is ScreenState.EXITED and got.cause is None
    assert said_goodbye(text, rules()) == ""


def test_a_goodbye_under_a_prompt_the_classifier_does_not_know_is_found() -> None:
    assert "Resume with" in said_goodbye(ZORP + "➜  proj git:(main) ✗ ", rules())


def test_a_dead_panes_status_decides_without_a_goodbye() -> None:
    assert read("working...\nPane is dead (status 0, Mon Nov 30 21:24:56 2026)").state \
        is ScreenState.EXITED
    assert read("working...\nPane is dead (signal 9, Mon Nov 30 21:24:56 2026)").state \
        is ScreenState.CRASHED


@pytest.mark.parametrize(("obs", "verdict"), [
    (ProcessExited(0, status=0), True),
    (ProcessExited(0, signal=15), True),
    (ProcessExited(0, signal=9), False),
    (ProcessExited(0, status=3), False),
    (ProcessExited(0, interrupted=True), True),
    (ProcessExited(0, screen=Classification(ScreenState.EXITED, "bye", cause=GOODBYE)), True),
    (ProcessExited(0, screen=Classification(ScreenState.CRASHED, "Traceback")), False),
    (ProcessExited(0, screen=Classification(ScreenState.EXITED, "$")), None),
    (ProcessExited(0, screen=Classification(ScreenState.UNKNOWN)), None),
    (ProcessExited(0), None),
])
def test_how_it_ended_comes_from_facts(obs: ProcessExited, verdict: bool | None) -> None:
    assert normal_exit(obs) is verdict


def run_exit(screen: Classification) -> tuple[TerminalState, tuple]:
    state = TerminalState(terminal="s:%1", agent="Zorp", project="/p")
    ctx = Context()
    state, _ = decide(state, PromptSubmitted("fix the bug"), 0.0, ctx, random.Random(1))
    return decide(state, ProcessExited(0, screen=screen), 5.0, ctx, random.Random(1))


def test_an_exit_that_cannot_be_told_types_nothing_and_tells_the_user() -> None:
    state, actions = run_exit(Classification(ScreenState.EXITED, "me@box:~/proj$"))
    assert not [a for a in actions if isinstance(a, (Relaunch, TypeText))]
    [record] = [a for a in actions if isinstance(a, Record)]
    assert record.decision.badge is Badge.WAITING
    assert "couldn't tell" in record.decision.reason and "not resumed" in record.decision.reason
    assert [a for a in actions if isinstance(a, Notify)]
    assert state.incident is not None and state.incident.phase is Phase.HOLD
    assert state.crashes == ()       # not counted as a crash


def test_a_goodbye_mid_task_is_recorded_as_a_normal_stop() -> None:
    state, actions = run_exit(Classification(ScreenState.EXITED, "bye", cause=GOODBYE))
    [record] = [a for a in actions if isinstance(a, Record)]
    assert record.decision.badge is Badge.SKIPPED and "normally" in record.decision.reason
    assert "its own goodbye: bye" in record.decision.reason
    assert state.incident is None and len(actions) == 1
