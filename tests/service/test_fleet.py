"""The fleet record kept while watching: written on change only, at most once a second,
private, and never lost to a corrupt file or an empty server."""

from __future__ import annotations

import dataclasses
import stat
from pathlib import Path

import pytest

from pitcrew.supervisor.adapters.processes import LaunchContext, LaunchStyle
from pitcrew.supervisor.adapters.tmux import PaneInfo
from pitcrew.supervisor.service.fleet import FleetKeeper
from pitcrew.supervisor.store import fleet_file
from tests.service.fakes import SERVER, FakeClock, make_pane, make_watched

IDENT = "77@1700000000"
SID = "0f3c2a1e-1111-4222-8333-944445555666"
CTX = LaunchContext(LaunchStyle.SHELL, 4242, 1.0, 10, ("fakeagent",), ("/opt/fakeagent",),
                    "/work/api", {"OPENAI_API_KEY": "sk-test", "MARK": "m"}, 10, "zsh", 1.0)


class Places:
    label = SERVER

    def __init__(self) -> None:
        self.server: str | None = IDENT
        self.layout = "b25d,120x40,0,0,1"
        self.panes: list[PaneInfo] = [make_pane("%1"), make_pane("%2", command="zsh")]

    def ident(self) -> str | None:
        return self.server

    def layouts(self) -> dict[tuple[str, int], str]:
        return {("work", 1): self.layout} if self.server else {}


class Writes:
    def __init__(self) -> None:
        self.count = 0

    def __call__(self, path: Path, record: fleet_file.Record) -> None:
        self.count += 1
        fleet_file.save(path, record)


@pytest.fixture
def setup(tmp_path: Path):
    places, clock, writes = Places(), FakeClock(), Writes()
    w = make_watched("%1", session_id=SID, task="work 60", server=IDENT)
    w.launch = CTX
    watched = {w.key: w}
    keeper = FleetKeeper(tmp_path / "fleet.json", places, lambda: places.panes, watched,
                         clock.mono, writes)
    return keeper, places, clock, writes, w


def test_the_record_holds_what_rebuilds_the_agents_place(setup) -> None:
    keeper, _, _, writes, _ = setup
    keeper.tick()
    assert writes.count == 1
    [win] = fleet_file.load(keeper.path).record[SERVER]
    assert (win.session, win.index, win.name, win.layout) == ("work", 1, "agent",
                                                              "b25d,120x40,0,0,1")
    assert [p.index for p in win.panes] == [1, 2] and win.server == IDENT
    [agent] = win.agents
    assert (agent.pane, agent.provider, agent.session_id, agent.task) == (
        1, "fakeagent", SID, "work 60")
    assert agent.launch.style == "shell" and agent.launch.shell == "zsh"
    assert agent.launch.env == {"OPENAI_API_KEY": "sk-test", "MARK": "m"}
    assert stat.S_IMODE(keeper.path.stat().st_mode) == 0o600


def test_written_only_on_change_and_at_most_once_a_second(setup) -> None:
    keeper, _, clock, writes, w = setup
    keeper.tick()
    for _ in range(20):               # nothing changed: nothing written, even much later
        clock.advance(5)
        keeper.tick()
    assert writes.count == 1
    w.state = dataclasses.replace(w.state, task=None)
    keeper.tick()
    assert writes.count == 2
    w.state = dataclasses.replace(w.state, task="again")
    clock.advance(0.5)
    keeper.tick()
    assert writes.count == 2          # changed, but within a second of the last write
    clock.advance(0.6)
    keeper.tick()
    assert writes.count == 3
    assert fleet_file.load(keeper.path).record[SERVER][0].agents[0].task == "again"


def test_a_window_renamed_is_seen_by_the_periodic_look(setup) -> None:
    keeper, places, clock, writes, _ = setup
    keeper.tick()
    places.panes = [dataclasses.replace(p, window_name="renamed") for p in places.panes]
    clock.advance(11)
    keeper.tick()
    assert writes.count == 2 and keeper.windows[0].name == "renamed"


def test_no_server_or_a_new_one_keeps_the_agents_from_before(setup) -> None:
    keeper, places, clock, _writes, w = setup
    keeper.tick()
    before = keeper.windows
    places.server, places.panes = None, []
    w.agent_pid = None
    clock.advance(11)
    keeper.tick()
    assert keeper.windows == before
    places.server = "99@1700005000"     # a new server, with nothing on it yet
    clock.advance(11)
    keeper.tick()
    assert keeper.windows == before and len(keeper.from_before()) == 1


def test_an_agent_that_ended_while_its_server_ran_leaves_the_record(setup) -> None:
    keeper, _places, clock, _, w = setup
    keeper.tick()
    w.agent_pid = None                 # exited normally: no incident either
    clock.advance(2)
    keeper.tick()
    assert keeper.windows == ()


def test_a_corrupt_file_is_one_line_kept_aside_and_never_a_traceback(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "fleet.json"
    path.write_text('{"version": 1, "sockets": {"test": [{"session": 3}]}}')
    places = Places()
    keeper = FleetKeeper(path, places, lambda: places.panes, {}, FakeClock().mono)
    [line] = [r.getMessage() for r in caplog.records if "fleet.json" in r.getMessage()]
    assert "unreadable" in line and "kept it as fleet.json.corrupt-" in line
    assert keeper.windows == ()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("fleet.json.corrupt-")]


def test_the_restore_command_reads_a_corrupt_file_without_moving_it(tmp_path: Path) -> None:
    path = tmp_path / "fleet.json"
    path.write_text("{not json")
    loaded = fleet_file.load(path)
    assert loaded.record == {} and loaded.problem is not None
    assert "nothing restored" in loaded.problem and path.exists()
