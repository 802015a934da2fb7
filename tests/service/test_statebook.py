"""state.json through the StateBook: the parts' data, terminals, pause and consent survive a
restart; a disk that refuses the write is logged once and the supervisor keeps running."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from pitcrew.supervisor.api.commands import ChangeState
from pitcrew.supervisor.core.records import Incident, TerminalState
from pitcrew.supervisor.service.statebook import StateBook, apply_change
from pitcrew.supervisor.store import state_store
from pitcrew.supervisor.store.state_store import Snapshot

ALIVE = TerminalState("work:%1", "Fake Agent", "/work/api", task="refactor the parser",
                      session_id="s1")
GONE = TerminalState("work:%2", "Fake Agent", "/work/web",
                     incident=Incident(1, "fix the tests", 1.0, "process exited", "crashed"))


def test_save_and_load_round_trip_with_parts(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    states = {"test:%1": ALIVE}
    book = StateBook(path, Snapshot(), lambda: states)
    delivery = {"id": "a", "terminal": "test:%1", "text": "hi", "created_at": 1.0,
                "status": "pending"}
    book.parts["deliveries"] = lambda: [delivery]
    book.parts["seats"] = lambda: {"holders": {"api": "fakebackup"}}
    book.change(paused=True, consent=True, consent_asked=True)

    again = StateBook(path, state_store.load(path).snapshot, dict)   # Pitcrew restarted
    assert again.paused and again.consent and again.consent_asked
    assert again.saved("test:%1") == ALIVE
    assert again.extra("deliveries") == [delivery]
    assert again.extra("seats") == {"holders": {"api": "fakebackup"}}


def test_a_terminal_not_seen_since_the_start_keeps_its_saved_state(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    book = StateBook(path, Snapshot(terminals={"test:%2": GONE}), lambda: {"test:%1": ALIVE})
    book.save()
    loaded = state_store.load(path).snapshot
    assert loaded.terminals == {"test:%1": ALIVE, "test:%2": GONE}   # its incident is kept


def test_none_leaves_pause_and_consent_as_they_are(tmp_path: Path) -> None:
    book = StateBook(tmp_path / "state.json", Snapshot(paused=True, consent=True), dict)
    book.change()
    assert book.paused and book.consent
    book.change(paused=False)
    assert not book.paused and book.consent


def test_a_failing_save_logs_once_and_keeps_running(tmp_path: Path,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    blocker = tmp_path / "data"
    blocker.write_text("a file where the folder should be")   # fails even for root
    book = StateBook(blocker / "state.json", Snapshot(), lambda: {"test:%1": ALIVE})
    with caplog.at_level(logging.INFO, logger="pitcrew"):
        assert book.save() is False and book.failed
        book.change(paused=True)                          # does not raise
        book.save()
        errors = [r for r in caplog.records if r.levelno == logging.ERROR]
        assert len(errors) == 1 and "cannot record to" in errors[0].getMessage()
        assert "acts on nothing until it can write there again" in errors[0].getMessage()
        assert book.paused                                # still known in memory
        blocker.unlink()
        assert book.save() is True and not book.failed
    assert "can write again; catching up" in caplog.text
    assert state_store.load(blocker / "state.json").snapshot.paused


def test_apply_change_is_what_the_cli_does_without_a_supervisor() -> None:
    snap = Snapshot(paused=False, consent=True)
    assert apply_change(snap, ChangeState(paused=True)) == Snapshot(paused=True, consent=True)
    assert apply_change(snap, ChangeState(consent=False)).consent is False
