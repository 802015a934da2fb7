"""The fake agent CLI does what the tests rely on, in a real pane."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pitcrew.supervisor.core.classifier import classify
from tests.support.screens import rules_for
from tests.support.tmux_server import TmuxServer
from tests.support.waiting import wait_until


def sessions(server: TmuxServer) -> list[Path]:
    return sorted(server.fake_home.rglob("*.jsonl"))


def state(server: TmuxServer, pane: str) -> str:
    import datetime as dt

    now = dt.datetime.now(dt.UTC)
    return classify(server.screen(pane), rules_for("fakeagent"), now, dt.UTC).state.value


def test_works_then_finishes_and_records_the_session(tmux: TmuxServer) -> None:
    pane = tmux.start("fakeagent")
    tmux.wait_for_text(pane, "fake>")
    assert state(tmux, pane) == "idle"
    tmux.type(pane, "work 1")
    wait_until(lambda: state(tmux, pane) == "busy")
    tmux.wait_for_text(pane, "● Done: work 1")
    wait_until(lambda: state(tmux, pane) == "idle")
    [session] = sessions(tmux)
    kinds = [json.loads(line)["type"] for line in session.read_text().splitlines()]
    assert kinds == ["session", "start", "prompt", "done"]


def test_crash_exits_with_the_given_status_mid_task(tmux: TmuxServer) -> None:
    pane = tmux.start("fakeagent")
    tmux.wait_for_text(pane, "fake>")
    tmux.type(pane, "crash 7 0.5")
    info = wait_until(lambda: (p := tmux.tmux.pane(pane)) and p.dead_status is not None and p)
    assert info.dead_status == 7


def test_exit_is_a_normal_exit_with_a_resume_hint(tmux: TmuxServer) -> None:
    pane = tmux.start("fakeagent")
    tmux.wait_for_text(pane, "fake>")
    tmux.type(pane, "/exit")
    wait_until(lambda: tmux.pane(pane).dead_status == 0)
    assert "Resume this session with: fakeagent --resume " in tmux.screen(pane)


def test_resume_by_id_and_continue_pick_up_the_same_session(tmux: TmuxServer, tmp_path) -> None:
    first = tmux.start("fakeagent", cwd=tmp_path)
    tmux.wait_for_text(first, "fake>")
    tmux.type(first, "/exit")
    wait_until(lambda: tmux.pane(first).dead_status == 0)
    [session] = sessions(tmux)
    again = tmux.start(f"fakeagent --resume {session.stem}", cwd=tmp_path)
    tmux.wait_for_text(again, f"Resumed session {session.stem}")
    latest = tmux.start("fakeagent --continue", cwd=tmp_path)
    tmux.wait_for_text(latest, f"Continuing session {session.stem}")
    assert sessions(tmux) == [session]


def test_resuming_an_unknown_session_fails_like_the_real_clis(tmux: TmuxServer) -> None:
    pane = tmux.start("fakeagent --resume 00000000-0000-0000-0000-000000000000")
    wait_until(lambda: tmux.pane(pane).dead_status == 1)
    assert "No conversation found with session ID" in tmux.screen(pane)
    empty = tmux.start("fakeagent --continue")
    wait_until(lambda: tmux.pane(empty).dead_status == 1)


@pytest.mark.parametrize(
    ("prompt", "expected"),
    [
        ("limit resets 3pm (Europe/Paris)", "rate_limit"),
        ("login", "login_required"),
        ("question", "question"),
        ("picker", "picker"),
        ("disconnect", "continue_prompt"),
        ("upgrade", "upgrade_prompt"),
        ("hang", "busy"),
    ],
)
def test_each_scripted_screen_reads_as_its_state(tmux: TmuxServer, prompt: str,
                                                 expected: str) -> None:
    pane = tmux.start("fakeagent")
    tmux.wait_for_text(pane, "fake>")
    tmux.type(pane, prompt)
    wait_until(lambda: state(tmux, pane) == expected,
               message=f"{expected} for {prompt!r}:\n{tmux.screen(pane)}")


def test_a_typed_but_unsent_prompt_is_a_draft(tmux: TmuxServer) -> None:
    pane = tmux.start("fakeagent")
    tmux.wait_for_text(pane, "fake>")
    tmux.type(pane, "half a thought", enter=False)
    wait_until(lambda: state(tmux, pane) == "draft")


def test_the_message_after_a_disconnect_continues_the_task(tmux: TmuxServer) -> None:
    pane = tmux.start("fakeagent")
    tmux.wait_for_text(pane, "fake>")
    tmux.type(pane, "disconnect")
    tmux.wait_for_text(pane, "Send a message to continue")
    tmux.type(pane, "continue")
    tmux.wait_for_text(pane, 'Picking up where I left off on "disconnect"')
