"""`pitcrew watch` with no tmux server says so once (as `pitcrew status` does), and once more
when a server appears; not at every listing."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.support.proc import Running
from tests.support.tmux_server import TmuxServer

pytestmark = pytest.mark.e2e


def test_watch_says_once_there_is_no_server_and_once_when_one_appears(
        tmux: TmuxServer, pitcrew_home: Path) -> None:
    (pitcrew_home / "config.toml").write_text("[watch]\npoll_interval = 0.5\n")
    watch = Running(["watch", "--tmux-socket", tmux.name])     # no server on it yet
    try:
        watch.wait_for(f"No tmux server is running ({tmux.name}); watching for one to start")
        time.sleep(3)                          # a listing a second while no session exists
        assert sum("tmux server" in line for line in watch.lines) == 2, watch.lines
        tmux.start("exec sleep 300")
        watch.wait_for(f"A tmux server is running on {tmux.name} now")
        time.sleep(2)
    finally:
        assert watch.stop() == 0
    said = [line for line in watch.lines if "tmux server" in line.lower()]
    assert len(said) == 3, said   # "watching tmux server …", none running, one running now
    assert not any("went away" in line or "again" in line for line in said), said
