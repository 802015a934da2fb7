"""service/hosts.py alone: pane ids route to their host's tmux, a host that is down is left
alone (no listing, no quiet check), and its quiet time counts again once it is back."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from pitcrew.supervisor.adapters.control import Topology
from pitcrew.supervisor.core.hosts import Host, HostState, host_of
from pitcrew.supervisor.service.hosts import HostEvent, Hosts, RoutedTmux
from tests.service.fakes import RecordingTmux, make_pane, make_watched


class Looked:
    def __init__(self) -> None:
        self.rescans = 0

    def rescan(self) -> None:
        self.rescans += 1

    def rescan_pane(self, pane_id: str) -> None:
        self.rescans += 1


def rig(tmp_path: Path) -> tuple[Hosts, list[object], RecordingTmux, RecordingTmux]:
    posted: list[object] = []
    w_local, w_remote = make_watched("%1"), make_watched("%1")
    w_remote = dataclasses.replace(w_remote, key="gpu1:%1", pane_id="gpu1:%1")
    watched = {w_local.key: w_local, w_remote.key: w_remote}
    hosts = Hosts([Host("gpu1", "me@gpu1"), Host("off", "me@off", enabled=False)],
                  tmp_path, posted.append, lambda: None, watched, lambda: 50.0)
    local, remote = RecordingTmux(), RecordingTmux("gpu1")
    local.panes["%1"] = make_pane("%1")
    remote.panes["gpu1:%1"] = dataclasses.replace(make_pane("%1"), pane_id="gpu1:%1")
    local.screens["%1"], remote.screens["gpu1:%1"] = "local screen", "remote screen"
    hosts.remotes["gpu1"].tmux = remote      # type: ignore[assignment]
    return hosts, posted, local, remote


def test_a_pane_id_reaches_the_tmux_of_its_host_and_anything_else_the_local_one(
        tmp_path: Path) -> None:
    hosts, _, local, remote = rig(tmp_path)
    routed = RoutedTmux(local, hosts)
    routed.send_text("gpu1:%1", "hello")
    routed.send_text("%1", "hi")
    assert remote.typed == [("gpu1:%1", "hello")] and local.typed == [("%1", "hi")]
    assert routed.capture("gpu1:%1") == "remote screen"
    assert routed.capture("%1") == "local screen"
    assert routed.label == local.label
    assert "off" not in hosts.remotes            # a disabled host is not connected at all


def test_a_host_that_is_down_is_not_listed_and_its_terminals_are_not_quiet(
        tmp_path: Path) -> None:
    hosts, _, _, _ = rig(tmp_path)
    remote = hosts.remotes["gpu1"]
    looked = Looked()
    remote.discovery = looked                   # type: ignore[assignment]
    remote.link.state = HostState.DOWN
    hosts.handle(HostEvent("gpu1", HostState.DOWN, "no route to host"))
    hosts.handle(HostEvent("gpu1", Topology("work")))
    hosts.rescan()
    assert looked.rescans == 0                   # nothing listed: no pane reads as closed
    w = hosts.watched["gpu1:%1"]
    assert w.quiet_reported and not hosts.watched[next(iter(hosts.watched))].quiet_reported
    remote.procs.refresh = lambda: {}            # type: ignore[method-assign]
    assert "idle" in w.fired                     # nor the watchdog's idle timeout
    hosts.handle(HostEvent("gpu1", HostState.UP))
    assert not w.quiet_reported and w.last_output == w.last_progress == 50.0
    assert "idle" not in w.fired


def test_a_terminal_key_names_its_host_only_for_remote_hosts() -> None:
    remote: Any = {"gpu1"}
    assert host_of("gpu1:%3", remote) == "gpu1"
    assert host_of("default:%3", remote) == "local"


def test_the_view_names_each_terminals_host_and_each_hosts_connection(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from pitcrew.supervisor.api.build import _hosts, host_of
    hosts, _, _, _ = rig(tmp_path)
    hosts.remotes["gpu1"].link.state, hosts.remotes["gpu1"].link.problem = "down", "refused"
    source: Any = SimpleNamespace(hosts=hosts)
    assert host_of(source, "gpu1:%1") == "gpu1" and host_of(source, "default:%1") == "local"
    assert [(h.name, h.state, h.problem) for h in _hosts(source)] == [("gpu1", "down",
                                                                        "refused")]
    assert _hosts(SimpleNamespace()) == () and host_of(SimpleNamespace(), "x:%1") == "local"


class Stoppable:
    def stop(self) -> None: ...


def test_a_remote_session_waiting_for_its_client_is_listed_every_second(tmp_path: Path) -> None:
    now = [100.0]
    hosts = Hosts([Host("gpu1", "me@gpu1")], tmp_path, [].append, lambda: None, {},
                  lambda: now[0])
    remote = hosts.remotes["gpu1"]
    remote.link.state = HostState.UP
    looked: list[float] = []

    def rescan_host(r: Any, full: bool = True) -> None:
        looked.append(now[0])
        hosts.looked[r.host.name] = now[0]
    hosts.rescan_host = rescan_host              # type: ignore[method-assign]
    remote.controls.connect = lambda name: None  # not attached yet
    hosts.sync_sessions(remote, {"work": 0})
    assert not hosts.settled
    hosts.rescan()
    now[0] += 1.0
    hosts.rescan()
    assert looked == [100.0, 101.0]
    remote.controls.connect = lambda name: Stoppable()
    now[0] += 2.0                                # listed 3 s ago: not being built
    hosts.sync_sessions(remote, {"work": 0})
    assert hosts.settled
    now[0] += 1.0
    hosts.rescan()
    assert looked == [100.0, 101.0]              # attached: the 10 s fallback again
    remote.link.state = HostState.DOWN
    remote.controls.connect = lambda name: None
    hosts.sync_sessions(remote, {"work": 0, "api": 0})
    assert hosts.settled                         # a host that is down waits for no one
