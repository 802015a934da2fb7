"""service/startup.py alone, over the fakes: what a (re)start picks up, in order, and the open
incident of a pane that is gone closed with a ledger row (not acted on, not kept)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from pitcrew.supervisor.adapters import leftovers
from pitcrew.supervisor.adapters.processes import LaunchContext, LaunchStyle
from pitcrew.supervisor.core.records import Action, Badge, Incident, Phase, TerminalState, Wake
from pitcrew.supervisor.service.startup import Startup
from pitcrew.supervisor.service.statebook import StateBook
from pitcrew.supervisor.service.watched import Watched
from pitcrew.supervisor.store.state_store import Snapshot
from tests.service.fakes import AGENT_PID, T0, FakeClock, FakeLedger, make_watched


def launch(cwd: str) -> LaunchContext:
    return LaunchContext(LaunchStyle.PANE, AGENT_PID, T0 - 100, AGENT_PID, ("fakeagent",),
                         ("/usr/bin/fakeagent",), cwd)


def waiting(prompt: str, next_at: float) -> Incident:
    return Incident(1, prompt, T0 - 50, "process exited", "crashed", attempts=1,
                    phase=Phase.WAITING, next_at=next_at)


def test_a_start_picks_up_waits_and_closes_the_incident_of_a_pane_that_is_gone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(leftovers.OWNER_VAR, "restored after the test")
    here = make_watched("%1", task="refactor the parser",
                        incident=waiting("refactor the parser", T0 + 30))
    gone = TerminalState(terminal="work:%2", agent="Fake Agent", project="/work/web",
                         incident=waiting("fix the build", T0 + 20))
    snapshot = Snapshot(terminals={here.key: here.state, "test:%2": gone,
                                   "other:%3": gone},          # another tmux server's
                        extra={"typed": {"pane": "%1", "text": "continue"}})
    book = StateBook(tmp_path / "state.json", snapshot, lambda: {})
    ledger, calls = FakeLedger(), []
    launches = {"test:%2": launch("/work/web"), "other:%3": launch("/work/web")}

    def run(w: Watched, actions: tuple[Action, ...]) -> None:
        calls.append(("run", w.key, actions))

    startup = Startup(str(tmp_path), {here.key: here}, FakeClock(), ledger, book, launches,
                      lambda: "test", lambda: calls.append("rescan"),
                      lambda typed: calls.append(("typed", typed)), run,
                      lambda: calls.append("deliveries"),
                      sweep=lambda owner: calls.append(("sweep", owner)) or 0)
    startup.start()
    assert calls == [("sweep", str(tmp_path)), "rescan",
                     ("typed", {"pane": "%1", "text": "continue"}),
                     ("run", here.key, (Wake(T0 + 30),)), "deliveries"]
    [row] = ledger.rows                       # only this server's pane that is gone
    assert row.badge is Badge.SKIPPED and row.prompt == "fix the build"
    assert "the pane is gone" in row.reason and row.terminal == "work:%2"
    assert set(book.snapshot.terminals) == {here.key, "other:%3"}
    assert set(launches) == {"other:%3"}


def test_launch_json_keeps_how_agents_not_seen_right_now_were_started(
        tmp_path: Path) -> None:
    w = dataclasses.replace(make_watched("%1"), launch=launch("/work/api"))
    launches: dict[str, Any] = {"test:%5": launch("/work/old")}
    startup = Startup(str(tmp_path), {w.key: w}, FakeClock(), FakeLedger(),
                      StateBook(tmp_path / "state.json", Snapshot(), lambda: {}), launches,
                      lambda: "test", lambda: None, lambda typed: None, lambda w, a: None,
                      lambda: None, sweep=lambda owner: 0)
    saved = startup.launch_json()
    assert {k: v["cwd"] for k, v in saved.items()} == {"test:%1": "/work/api",
                                                       "test:%5": "/work/old"}


def started(tmp_path: Path, watched: dict[str, Watched], saved: dict[str, TerminalState],
            extra: dict[str, Any] | None = None) -> tuple[Startup, list[str], FakeLedger]:
    book = StateBook(tmp_path / "state.json", Snapshot(terminals=saved, extra=extra or {}),
                     lambda: {k: w.state for k, w in watched.items()})
    gone: list[str] = []
    ledger = FakeLedger()
    startup = Startup(str(tmp_path), watched, FakeClock(), ledger, book, {}, lambda: "test",
                      lambda: None, lambda typed: None, lambda w, a: None, lambda: None,
                      gone_while_away=lambda w: gone.append(w.key), sweep=lambda owner: 0)
    startup.start()
    return startup, gone, ledger


@pytest.mark.parametrize(("task", "phase", "told"), [
    ("refactor the parser", None, True),                # a running task, no agent now
    (None, Phase.WATCHING, True),                       # resumed and continued: acted on
    ("refactor the parser", Phase.WAITING, False),      # its wait is scheduled again
    ("refactor the parser", Phase.CONFIRMING, False),   # its relaunch is confirmed apart
    (None, None, False),                                # nothing was running
])
def test_a_start_tells_the_core_of_an_agent_that_ended_while_no_watcher_ran(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, task: str | None,
        phase: Phase | None, told: bool) -> None:
    monkeypatch.setenv(leftovers.OWNER_VAR, "restored after the test")
    inc = dataclasses.replace(waiting("refactor the parser", T0 + 30), phase=phase) \
        if phase else None
    w = make_watched("%1", task=task, incident=inc)
    w.agent_pid = None                    # a dead pane, or its shell back at the prompt
    _, gone, ledger = started(tmp_path, {w.key: w}, {w.key: w.state})
    assert gone == ([w.key] if told else [])
    assert ledger.rows == []


def test_a_running_task_whose_pane_is_gone_gets_a_row_and_is_let_go(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(leftovers.OWNER_VAR, "restored after the test")
    lost = TerminalState(terminal="work:%2", agent="Fake Agent", project="/work/web",
                         task="fix the build")
    startup, gone, ledger = started(tmp_path, {}, {"test:%2": lost})
    [row] = ledger.rows
    assert row.prompt == "fix the build" and "not resumed" in row.reason
    assert startup.book.snapshot.terminals == {} and gone == []


def test_what_pitcrew_typed_is_its_own_again_after_a_restart(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(leftovers.OWNER_VAR, "restored after the test")
    clock = FakeClock()
    w = make_watched("%1")
    w.typed_text, w.typed_at = "Continue from where you stopped.", clock.mono() - 2
    before, _, _ = started(tmp_path, {w.key: w}, {})
    saved = before.typing_json()
    after = make_watched("%1")
    started(tmp_path, {after.key: after}, {after.key: after.state}, {"own_typing": saved})
    assert after.typed_text == "Continue from where you stopped."
    assert after.is_own_prompt("Continue from where you stopped.", FakeClock().mono())
    assert not after.is_own_prompt("something the user typed", FakeClock().mono())
