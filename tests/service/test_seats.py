"""Seats over fakes: binding, which backup is next, and a failover as a user sees it (a new
window running the backup, a brief queued for it, a ledger row, a notification)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from pitcrew.supervisor.core.records import Badge
from pitcrew.supervisor.core.seats import AgentChoice, Seat
from pitcrew.supervisor.providers.model import Provider
from pitcrew.supervisor.service.seats import SeatBook, launch_argv, load
from pitcrew.supervisor.service.watched import Watched
from tests.service.fakes import T0, Counted, Rig, provider, registry

SEAT = Seat("api", "/work/api", AgentChoice("fakeagent"),
            (AgentChoice("claude"), AgentChoice("fakebackup", "fast")), brief="Keep tests green")
BRIEF = "You are taking over seat api."


class BookWithoutGit(SeatBook):
    """`task_brief` runs `git status` in the seat's folder (a real process, not a port): the
    brief's own content is tested in tests/core; here it is a fixed text."""

    def task_brief(self, w: Watched, seat: Seat, to: Provider, reason: str) -> str:
        return f"{BRIEF} ({to.display_name}: {reason})"


@dataclass
class Seats:
    rig: Rig = field(default_factory=Rig)
    installed: set[str] = field(default_factory=lambda: {"fakeagent", "fakebackup"})
    briefs: list[tuple[str, str]] = field(default_factory=list)
    looked: list[str] = field(default_factory=list)
    persist: Counted = field(default_factory=Counted)
    seats: tuple[Seat, ...] = (SEAT,)

    def build(self, saved: object = None) -> SeatBook:
        rig = self.rig
        return BookWithoutGit(lambda: self.seats, registry(), rig.tmux, rig.clock, rig.ledger,
                              rig.gate, self.persist,
                              lambda key, text: self.briefs.append((key, text)),
                              self.looked.append, saved,
                              is_installed=lambda p: p.name in self.installed)


@pytest.fixture
def s() -> Seats:
    return Seats()


def test_bind_seats_a_terminal_and_is_saved(s: Seats) -> None:
    book = s.build()
    w = s.rig.terminal()
    assert not book.seated(w)
    book.bind("api", w.key)
    assert book.seated(w) and book.seat_of(w.key) == SEAT
    assert s.persist.calls == 1
    assert load(book.to_json()) == ({}, {"test:%1": "api"})


def test_the_next_backup_skips_one_that_is_not_installed(s: Seats) -> None:
    book = s.build()
    assert book.next_backup(SEAT) == AgentChoice("fakebackup", "fast")   # claude: not installed
    s.installed.add("claude")
    assert book.next_backup(SEAT) == AgentChoice("claude")


def test_a_failover_starts_the_backup_in_a_new_window_and_briefs_it(s: Seats) -> None:
    book = s.build()
    w = s.rig.terminal(task="refactor the parser")
    book.bind("api", w.key)
    book.fail_over(w, "rate limit")
    [window] = s.rig.tmux.windows
    assert window["session"] == "work" and window["cwd"] == "/work/api"
    assert window["name"] == "api-fakebackup"
    argv = window["argv"]
    assert argv[:3] == ("fakebackup", "--model", "fast") and argv[3] == "--session-id"
    new = window["pane"]
    assert s.rig.tmux.remain_on_exit == {new: True}
    assert s.briefs == [(f"test:{new}", f"{BRIEF} (Fake Backup: rate limit)")]
    [row] = s.rig.ledger.rows
    assert row.badge is Badge.SWITCHED and row.prompt == "refactor the parser"
    assert row.readings["to"] == "fakebackup:fast" and row.readings["pane"] == new
    [msg] = s.rig.gate.messages
    assert msg.title == 'Seat "api" switched to Fake Backup' and msg.terminal == f"test:{new}"
    assert book.holders == {"api": "fakebackup:fast"}
    assert book.seat_of(f"test:{new}") == SEAT             # the backup sits in the seat now
    assert s.looked == [new]
    assert s.rig.clock.wall() == T0 and row.at == T0


def test_after_the_last_backup_the_user_is_told_and_nothing_starts(s: Seats) -> None:
    book = s.build({"holders": {"api": "fakebackup:fast"}, "terminals": {"test:%1": "api"}})
    w = s.rig.terminal()
    assert not book.has_backup(w)
    book.fail_over(w, "rate limit")
    assert s.rig.tmux.windows == [] and s.briefs == []
    [msg] = s.rig.gate.messages
    assert msg.title == 'Seat "api" has no installed backup left'
    assert msg.body == "Fake Agent: rate limit"


def test_a_terminal_outside_a_seat_never_fails_over(s: Seats) -> None:
    book = s.build()
    book.fail_over(s.rig.terminal(), "rate limit")
    assert s.rig.tmux.windows == [] and s.rig.gate.messages == []


def test_a_window_that_cannot_start_changes_nothing_and_may_be_tried_again(s: Seats) -> None:
    book = s.build()
    w = s.rig.terminal()
    book.bind("api", w.key)
    s.rig.tmux.fail.add("new_window")
    book.fail_over(w, "rate limit")
    assert book.holders == {} and s.briefs == [] and s.rig.ledger.rows == []
    s.rig.tmux.fail.clear()
    book.fail_over(w, "rate limit")
    assert len(s.rig.tmux.windows) == 1


def test_load_keeps_only_string_tables() -> None:
    assert load(None) == ({}, {})
    assert load({"holders": {"api": "codex", "x": 3}, "terminals": "oops"}) == (
        {"api": "codex"}, {})


def test_launch_argv_fills_the_model_and_a_new_session_id() -> None:
    argv = launch_argv(provider("fakeagent"), AgentChoice("fakeagent", "big"))
    assert argv[:3] == ("fakeagent", "--model", "big")
    assert argv[3] == "--session-id" and len(argv[4]) == 36
    assert launch_argv(provider("fakeagent"), AgentChoice("fakeagent"))[:2] == (
        "fakeagent", "--session-id")


def test_the_old_pane_cannot_switch_a_seat_that_already_moved_on(s: Seats) -> None:
    """Was a bug: after a failover the old pane stays open and stays in the seat
    (`terminals[old key]`), so a later diagnosis or Autopilot `SwitchToBackup` on the *old*
    pane hands the seat on again — a third agent is started while the backup that now holds
    the seat works fine. Only the seat's current holder should be able to fail it over."""
    s.installed.add("claude")
    book = s.build()
    old = s.rig.terminal()
    book.bind("api", old.key)
    book.fail_over(old, "rate limit")                      # → claude takes the seat
    assert book.holders == {"api": "claude"}
    book.fail_over(old, "rate limit")                      # the old pane, stuck again
    assert len(s.rig.tmux.windows) == 1
    assert book.holders == {"api": "claude"}


def test_a_backup_that_dies_at_once_is_reported_and_may_be_tried_again(s: Seats) -> None:
    """Was a bug: only `new_window` is guarded. If the backup exits at once (no API key, a crash on
    start), its window is gone before `set_remain_on_exit` runs and tmux's error escapes
    `fail_over`: the terminal stays in `_switching` for good (it can never fail over again),
    and when the failover came from a diagnosis (`Diagnoses.done` → `Supervisor.handle`, which
    has no guard) the error ends the supervisor loop."""
    book = s.build()
    w = s.rig.terminal()
    book.bind("api", w.key)
    s.rig.tmux.fail.add("set_remain_on_exit")
    book.fail_over(w, "rate limit")                        # must not raise
    s.rig.tmux.fail.clear()
    book.fail_over(w, "rate limit")
    assert len(s.rig.tmux.windows) == 2                    # tried again


def test_a_failover_relieves_the_old_primary_of_its_task(s: Seats) -> None:
    """The old pane leaves the seat, and its incident is closed (Superseded, through the
    loop) with a row saying where the task went: it gets no continue, no resume after."""
    relieved: list[tuple[str, str]] = []
    book = s.build()
    book.relieve = lambda w, why: relieved.append((w.key, why))
    w = s.rig.terminal()
    book.bind("api", w.key)
    book.fail_over(w, "rate limit")
    [(key, why)] = relieved
    assert key == w.key and why.startswith("the seat's task went to Fake Backup in %")
    assert not book.seated(w)
