"""service/waking.py over the fakes: a wait that is over reads the screen and tells the core;
a pane id that now belongs to another tmux server is `Superseded` without a read; a terminal
whose host is down is left alone (woken again once the host is back)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from pitcrew.supervisor.core.hosts import Host
from pitcrew.supervisor.core.records import Incident, Phase, Superseded, Tick
from pitcrew.supervisor.service.hosts import Hosts
from pitcrew.supervisor.service.waking import Waker
from tests.service.fakes import T0, Fed, Loop, Processes, make_watched

WAITING = Incident(1, "refactor the parser", T0 - 5, "process exited", "crashed",
                   phase=Phase.WAITING, next_at=T0)


def waker(lp: Loop, tmp_path: Path, fed: Fed) -> Waker:
    sup = lp.sup
    hosts = Hosts([Host("gpu1", "me@gpu1")], tmp_path, sup.post, sup.changed, sup.watched)
    hosts.remotes["gpu1"].discovery = sup.discovery     # built, its link not up
    return Waker(sup.watched, hosts, sup.discovery, sup.servers, Processes().is_alive,
                 sup.reader, fed)


def test_a_wake_up_reads_the_screen_and_feeds_a_tick(lp: Loop, tmp_path: Path) -> None:
    w = lp.watch(task="refactor the parser", incident=WAITING)
    fed = Fed()
    waker(lp, tmp_path, fed).wake(w.key)
    [obs] = fed.observations
    assert isinstance(obs, Tick) and obs.screen is not None and obs.alive is True
    assert obs.active is False                  # no output since the incident opened
    assert lp.tmux.captures["%1"] >= 1


def test_a_pane_id_of_a_restarted_tmux_server_is_superseded_unread(
        lp: Loop, tmp_path: Path) -> None:
    w = lp.watch(task="refactor the parser", incident=WAITING, server="1@1")
    fed = Fed()
    waker(lp, tmp_path, fed).wake(w.key)
    [obs] = fed.observations
    assert isinstance(obs, Superseded) and "tmux server was restarted" in obs.reason
    assert lp.tmux.captures["%1"] == 0


def test_a_terminal_whose_host_is_down_is_left_alone(lp: Loop, tmp_path: Path) -> None:
    w = dataclasses.replace(make_watched("%1", incident=WAITING), key="gpu1:%1",
                            pane_id="gpu1:%1")
    lp.sup.watched[w.key] = w
    fed = Fed()
    waker(lp, tmp_path, fed).wake(w.key)
    waker(lp, tmp_path, fed).wake("test:%9")    # not watched (any more)
    assert fed.observations == [] and lp.tmux.captures == {}
