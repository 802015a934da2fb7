"""Carrying out a restore plan over a recording tmux: what is made, respawned and typed, the
continue queued once, a ledger row per agent."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from pitcrew.supervisor.core.errors import TmuxError
from pitcrew.supervisor.core.fleet import AgentPlace, Launched, PanePlace, WindowPlace
from pitcrew.supervisor.core.records import Badge, Decision
from pitcrew.supervisor.core.recovery import CONTINUE_MESSAGE
from pitcrew.supervisor.core.restore_plan import CliCommands, plan
from pitcrew.supervisor.core.rules import Command
from pitcrew.supervisor.service.restoring import Restorer, at_start, describe
from tests.service.fakes import FakeClock, provider

SID = "0f3c2a1e-1111-4222-8333-944445555666"
FAKE = CliCommands(Command(("fakeagent",)), Command(("fakeagent", "--resume", "{session_id}")),
                   r"[0-9a-f-]{36}", "Fake Agent")
SHELL = Launched("shell", ("/opt/fakeagent",), "/w/api", {"MARK": "zsh-only"}, "zsh")
PANE = Launched("pane", ("/opt/fakeagent",), "/w/web", {"K": "v"})


class Places:
    label = "test"

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.typed: list[tuple[str, str]] = []
        self.next = 0
        self.prompt_after = 0          # pane_pid polls before the shell is at its prompt
        self.fail: set[str] = set()

    def _pane(self) -> str:
        self.next += 1
        return f"%{self.next}"

    def new_session(self, name: str, window: str, cwd: str, layout: str) -> tuple[str, int]:
        self.calls.append(("new_session", name, window, cwd))
        return self._pane(), 0

    def move_window(self, session: str, old: int, new: int) -> None:
        self.calls.append(("move_window", session, old, new))

    def new_window(self, session: str, index: int, name: str, cwd: str) -> str:
        self.calls.append(("new_window", session, index, name, cwd))
        return self._pane()

    def split(self, pane_id: str, cwd: str) -> str:
        self.calls.append(("split", pane_id, cwd))
        return self._pane()

    def select_layout(self, session: str, index: int, layout: str) -> bool:
        self.calls.append(("select_layout", session, index, layout))
        return True

    def respawn(self, pane_id: str, argv: Sequence[str], cwd: str,
                env: Mapping[str, str]) -> None:
        if "respawn" in self.fail:
            raise TmuxError("respawn-pane failed")
        self.calls.append(("respawn", pane_id, tuple(argv), cwd, dict(env)))

    def pane_pid(self, pane_id: str) -> int | None:
        return 500

    def type_line(self, pane_id: str, text: str) -> None:
        self.typed.append((pane_id, text))


class Ledger:
    def __init__(self) -> None:
        self.rows: list[Decision] = []

    def append(self, decision: Decision) -> None:
        self.rows.append(decision)


def restorer(places: Places, at_prompt: Any = lambda pid: True):
    clock, queued, ledger = FakeClock(), [], Ledger()
    r = Restorer(places, at_prompt, lambda key, text: queued.append((key, text)), ledger,
                 clock.wall, clock.mono, clock.advance)
    return r, queued, ledger


def record() -> list[WindowPlace]:
    return [
        WindowPlace("work", 1, "api", "b25d,120x40,0,0{60x40,0,0,1,59x40,61,0,2}",
                    (PanePlace(0, "/w/api"), PanePlace(1, "/w/notes")),
                    (AgentPlace(0, "fakeagent", SHELL, SID, "work 60", "Fake Agent"),), "1@1"),
        WindowPlace("work", 2, "web", "", (PanePlace(0, "/w/web"),),
                    (AgentPlace(0, "fakeagent", PANE, SID.replace("0f", "1f"), None,
                                "Fake Agent"),), "1@1"),
    ]


def test_windows_are_made_whole_agents_started_and_one_continue_queued() -> None:
    places = Places()
    r, queued, ledger = restorer(places)
    done = r.carry_out(plan(record(), [], [], {"fakeagent": FAKE}))
    assert [c[0] for c in places.calls] == [
        "new_session", "move_window", "split", "select_layout", "respawn", "new_window",
        "respawn"]
    assert places.calls[4] == ("respawn", "%1", ("zsh",), "/w/api", {"MARK": "zsh-only"})
    assert places.calls[6][2] == ("/opt/fakeagent", "--resume", SID.replace("0f", "1f"))
    assert places.typed == [("%1", f"/opt/fakeagent --resume {SID}")]
    assert queued == [("test:%1", CONTINUE_MESSAGE)]
    assert [d.started for d in done] == [True, True]
    assert [row.badge for row in ledger.rows] == [Badge.RESTORED, Badge.RESTORED]
    assert ledger.rows[0].readings["session_id"] == SID and ledger.rows[0].prompt == "work 60"
    assert "MARK" not in str([row.to_json() for row in ledger.rows])   # no env in the ledger


def test_a_shell_that_never_reaches_its_prompt_is_not_typed_into() -> None:
    places = Places()
    r, queued, ledger = restorer(places, at_prompt=lambda pid: False)
    r.carry_out(plan(record()[:1], [], [], {"fakeagent": FAKE}))
    assert places.typed == [] and queued == []
    assert ledger.rows[0].badge is Badge.COULDNT_RESUME
    assert "nothing typed" in ledger.rows[0].reason


def test_tmux_refusing_is_a_row_not_a_traceback() -> None:
    places = Places()
    places.fail.add("respawn")
    r, queued, ledger = restorer(places)
    done = r.carry_out(plan(record(), [], [], {"fakeagent": FAKE}))
    assert [d.started for d in done] == [False, False] and queued == []
    assert all("tmux refused" in row.reason for row in ledger.rows)


def test_the_plan_in_words_names_what_is_made_started_and_typed() -> None:
    text = "\n".join(describe(plan(record(), ["work"], [("work", 2)], {"fakeagent": FAKE})))
    assert "work:1 (new window, window 'api', 2 panes)" in text
    assert f"then typed: /opt/fakeagent --resume {SID}" in text
    assert "was mid-task: once it is ready, typed: Continue from where" in text
    assert "work:2 ('web') exists already: left alone" in text
    assert "MARK" not in text


class Server(Places):
    """`Places` with what the server has now, for the watcher's start."""

    def __init__(self, sessions: set[str], windows: set[tuple[str, int]]) -> None:
        super().__init__()
        self.have = (sessions, windows)

    def windows(self) -> tuple[set[str], set[tuple[str, int]]]:
        return self.have


def test_at_start_ask_says_how_many_in_one_line_and_does_nothing(
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="pitcrew")
    places = Server({"work"}, {("work", 2)})
    count = at_start("ask", record(), places, [provider()], lambda: restorer(places)[0])
    lines = [r.getMessage() for r in caplog.records]
    assert count == 1 and not places.calls
    assert lines == ["1 agent from before the restart can be restored: pitcrew restore"]


def test_at_start_auto_restores_and_off_or_nothing_missing_does_nothing() -> None:
    places = Server(set(), set())
    assert at_start("off", record(), places, [provider()], lambda: restorer(places)[0]) == 0
    assert not places.calls
    full = Server({"work"}, {("work", 1), ("work", 2)})
    assert at_start("auto", record(), full, [provider()], lambda: restorer(full)[0]) == 0
    assert not full.calls
    assert at_start("auto", record(), places, [provider()], lambda: restorer(places)[0]) == 2
    assert [c[0] for c in places.calls].count("respawn") == 2
