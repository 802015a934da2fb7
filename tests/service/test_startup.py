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
