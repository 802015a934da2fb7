"""service/remote_parts.py, over the fakes: a remote host's parts run the local logic over the
host's tmux and process reads (its panes are found there and keyed by host; its shells are
asked, not the local ones), sharing the watched terminals with the local parts."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from types import SimpleNamespace

from pitcrew.supervisor.core.hosts import Host
from pitcrew.supervisor.service.hosts import Hosts
from pitcrew.supervisor.service.remote_parts import RemoteParts
from tests.service.fakes import IDLE, FakeFinder, Loop, Processes, RecordingTmux, make_pane


def test_a_remote_host_parts_find_its_panes_over_its_own_tmux_and_processes(
        lp: Loop, tmp_path: Path) -> None:
    sup = lp.sup
    hosts = Hosts([Host("gpu1", "me@gpu1")], tmp_path, sup.post, sup.changed, sup.watched)
    remote = hosts.remotes["gpu1"]
    tmux = RecordingTmux("gpu1")
    tmux.panes["gpu1:%4"] = dataclasses.replace(make_pane("%4"), pane_id="gpu1:%4")
    tmux.screens["gpu1:%4"] = IDLE
    procs = Processes()
    remote.tmux = tmux                                                  # type: ignore[assignment]
    remote.procs = SimpleNamespace(                                     # type: ignore[assignment]
        find_agent=FakeFinder(procs), launch_context=lambda proc, pane_pid, provider: None,
        is_alive=procs.is_alive, stop_tree=procs.stop_tree, environ=lambda pid: {},
        shell_at_prompt=lambda pid, started=None: True)
    sessions: list[tuple[str, list[str]]] = []
    local_at_prompt = sup.observer.at_prompt
    parts = RemoteParts(sup.clock, sup.watched, sup.active_providers, sup.autopilot.feed,
                        sup.book.saved, sup.launches.get,
                        lambda r, found: sessions.append((r.host.name, list(found))) or set(),
                        sup.changed, sup.observer)
    discovery, reader, relauncher = parts(remote)
    discovery.rescan()
    assert list(sup.watched) == ["gpu1:%4"]             # shared with the local parts
    assert sessions == [("gpu1", ["work"])]
    assert reader.read(sup.watched["gpu1:%4"]).screen is not None
    assert tmux.captures["gpu1:%4"] == 1 and lp.tmux.captures == {}
    assert relauncher.tmux is tmux
    host_observer = discovery.gone_while_confirming.__self__     # type: ignore[attr-defined]
    assert host_observer.at_prompt is remote.procs.shell_at_prompt   # the host's shells
    assert sup.observer.at_prompt is local_at_prompt     # the local observer is untouched
