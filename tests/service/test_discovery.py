"""Discovery over fakes: which agent is in a pane, how it was started, and whether an open
incident is still about it (SPEC §7 "Identity")."""

from __future__ import annotations

import dataclasses

from pitcrew.supervisor.adapters.processes import LaunchContext, LaunchStyle, ProcInfo
from pitcrew.supervisor.core.records import (
    Incident,
    Phase,
    ProcessStarted,
    Superseded,
    TerminalState,
)
from pitcrew.supervisor.service.discovery import Discovery
from pitcrew.supervisor.service.watched import Watched
from tests.service.fakes import (
    AGENT_PID,
    FakeClock,
    FakeFinder,
    Fed,
    Processes,
    RecordingTmux,
    provider,
)

SERVER_NOW = "777@100"
OPEN = Incident(1, "fix it", 10.0, "process exited", "exit 3", phase=Phase.WAITING,
                next_at=20.0)


class Exits:
    def __init__(self) -> None:
        self.pids: set[int] = set()

    def watch(self, pid: int, key: str, create_time: float | None = None) -> None:
        self.pids.add(pid)

    def watched(self) -> set[int]:
        return set(self.pids)


class Setup:
    def __init__(self, saved: dict[str, TerminalState] | None = None,
                 launches: dict[str, LaunchContext] | None = None,
                 style: LaunchStyle = LaunchStyle.PANE) -> None:
        self.tmux = RecordingTmux()
        self.procs = Processes()
        self.fed = Fed()
        self.watched: dict[str, Watched] = {}
        self.saved = saved or {}
        self.launches = launches or {}
        self.gone: list[str] = []
        self.style = style
        self.discovery = Discovery(
            self.tmux, FakeClock(), self.watched, lambda: [provider()], Exits(), self.fed,
            self.saved.get, self.launches.get, lambda: SERVER_NOW, lambda sessions: set(),
            lambda: None, lambda w, pane: self.gone.append(w.key),
            find=FakeFinder(self.procs), capture=self.capture, is_alive=self.procs.is_alive)

    def capture(self, proc: ProcInfo, pane_pid: int, provider: object) -> LaunchContext:
        return LaunchContext(self.style, proc.pid, proc.create_time, pane_pid, proc.cmdline,
                             proc.cmdline, proc.cwd, {"PATH": "/opt/bin"})


def saved_state(**changes: object) -> TerminalState:
    base = TerminalState("work:%1", "Fake Agent", "/work/api", task="fix it", incident=OPEN,
                         server=SERVER_NOW, agent_started=1.0)
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


def test_an_agent_in_a_pane_is_watched_with_how_it_was_started() -> None:
    s = Setup()
    s.tmux.add("%1")
    s.discovery.rescan()
    [w] = s.watched.values()
    assert w.agent_pid == AGENT_PID and w.launch is not None
    assert w.state.server == SERVER_NOW and w.state.agent_started == 1.0
    assert s.fed.observations == [ProcessStarted(0, AGENT_PID)]


def test_a_key_turns_back_into_the_pane_id_its_tmux_server_knows() -> None:
    d = Setup().discovery
    local = d.key("%12")
    assert local != "%12" and d.pane_of(local) == "%12"
    assert d.key("gpu1:%3") == "gpu1:%3" and d.pane_of("gpu1:%3") == "gpu1:%3"   # remote


def test_a_session_waiting_for_its_control_client_has_its_screens_read_at_each_listing(
) -> None:
    s = Setup()
    s.tmux.add("%1")
    waiting: set[str] = set()
    s.discovery.sync_sessions = lambda sessions: {n for n in sessions if n in waiting}
    s.discovery.rescan()
    [w] = s.watched.values()
    w.dirty = False
    s.discovery.rescan()
    assert not w.dirty                    # its client tells of output: nothing to read
    waiting.add(s.tmux.panes["%1"].session_name)
    s.discovery.rescan()
    assert w.dirty                        # no client yet: look anyway


def test_a_pane_whose_own_command_is_the_agent_is_kept_on_exit() -> None:
    s = Setup(style=LaunchStyle.PANE)
    s.tmux.add("%1")
    s.discovery.rescan()
    assert s.tmux.remain_on_exit == {"%1": True}


def test_an_agent_started_from_a_shell_leaves_the_pane_as_it_is() -> None:
    s = Setup(style=LaunchStyle.SHELL)
    s.tmux.add("%1")
    s.discovery.rescan()
    assert s.tmux.remain_on_exit == {}


def test_an_incident_from_before_a_tmux_server_restart_is_closed_not_acted_on() -> None:
    s = Setup(saved={"test:%1": saved_state(server="555@1")})
    s.tmux.add("%1")
    s.discovery.rescan()
    superseded = [o for o in s.fed.observations if isinstance(o, Superseded)]
    assert superseded and "tmux server was restarted" in superseded[0].reason


def test_an_agent_started_again_by_hand_closes_the_open_incident() -> None:
    s = Setup(saved={"test:%1": saved_state(agent_started=-100.0)})   # another process
    s.tmux.add("%1")
    s.discovery.rescan()
    [superseded] = [o for o in s.fed.observations if isinstance(o, Superseded)]
    assert "started again by hand" in superseded.reason


def test_an_agent_started_again_by_hand_a_second_later_is_another_process() -> None:
    # the start-time tolerance (a clock step, ps's 1 s resolution) holds for one pid only:
    # the user's new agent, started 1 s after the crashed one, is not the crashed one
    s = Setup(saved={"test:%1": saved_state(agent_pid=AGENT_PID + 1, agent_started=0.0)})
    s.tmux.add("%1")
    s.discovery.rescan()
    [superseded] = [o for o in s.fed.observations if isinstance(o, Superseded)]
    assert "started again by hand" in superseded.reason


def test_the_same_pid_read_a_second_off_after_a_restart_of_pitcrew_keeps_its_incident() -> None:
    s = Setup(saved={"test:%1": saved_state(agent_pid=AGENT_PID, agent_started=0.0)})
    s.tmux.add("%1")
    s.discovery.rescan()
    assert not [o for o in s.fed.observations if isinstance(o, Superseded)]
    assert s.watched["test:%1"].state.agent_pid == AGENT_PID


def test_the_same_agent_after_a_restart_of_pitcrew_keeps_its_incident() -> None:
    s = Setup(saved={"test:%1": saved_state()})
    s.tmux.add("%1")
    s.discovery.rescan()
    assert not [o for o in s.fed.observations if isinstance(o, Superseded)]
    assert s.watched["test:%1"].state.incident == OPEN


def test_the_shell_a_crashed_agent_ran_from_is_picked_up_after_a_restart() -> None:
    shell = LaunchContext(LaunchStyle.SHELL, 999, 1.0, 700, ("fakeagent",), ("fakeagent",),
                          "/work/api", {}, shell_pid=700, shell_started=0.5,
                          shell_name="bash")
    s = Setup(saved={"test:%1": saved_state()}, launches={"test:%1": shell})
    s.tmux.add("%1", pid=700, command="bash")           # no agent in it now
    s.procs.alive = {700}                               # …but the same shell
    s.discovery.find = lambda pane_pid, providers: None
    s.discovery.rescan()
    w = s.watched["test:%1"]
    assert w.agent_pid is None and w.launch == shell and w.state.incident == OPEN


def test_a_shell_pane_without_its_old_shell_is_not_adopted() -> None:
    shell = LaunchContext(LaunchStyle.SHELL, 999, 1.0, 700, ("fakeagent",), ("fakeagent",),
                          "/work/api", {}, shell_pid=700, shell_started=0.5)
    s = Setup(saved={"test:%1": saved_state()}, launches={"test:%1": shell})
    s.tmux.add("%1", pid=701, command="bash")
    s.procs.alive = {701}
    s.discovery.find = lambda pane_pid, providers: None
    s.discovery.rescan()
    assert s.watched == {}


def test_a_relaunch_being_confirmed_is_looked_at_even_when_nothing_changed() -> None:
    s = Setup()
    s.tmux.add("%1")
    s.discovery.rescan()
    w = s.watched["test:%1"]
    w.state = dataclasses.replace(w.state, incident=dataclasses.replace(
        OPEN, phase=Phase.CONFIRMING))
    w.agent_pid = None
    s.discovery.rescan_pane("%1")
    s.discovery.rescan()
    assert s.gone == ["test:%1", "test:%1"]


def test_a_closed_pane_is_no_longer_watched() -> None:
    s = Setup()
    s.tmux.add("%1")
    s.discovery.rescan()
    s.tmux.close("%1")
    s.discovery.rescan()
    assert s.watched == {}
