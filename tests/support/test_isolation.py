"""The suite's own isolation: a private HOME for the run, tmux servers that go with their
test even when their socket file is gone, and the end-of-run leak check."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from tests.support import isolation
from tests.support.tmux_server import tmux_server
from tests.support.waiting import wait_until


def test_the_run_has_its_own_home_xdg_dirs_and_temp_dir() -> None:
    root = Path(os.environ[isolation.RUN_VAR])
    for var in ("HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME",
                "XDG_RUNTIME_DIR", "TMPDIR", "TMUX_TMPDIR"):
        assert Path(os.environ[var]).is_relative_to(root), var
    assert not Path.home().is_relative_to(isolation.real_home())
    assert Path(os.path.expanduser("~/.fakeagent")).is_relative_to(root)


def test_a_tmux_server_whose_socket_file_is_gone_is_stopped_with_its_clients(
        tmp_path: Path) -> None:
    with tmux_server(tmp_path) as server:
        server.start("sleep 300")
        pid = int(server.tmux.run("display-message", "-p", "#{pid}").stdout)
        client = subprocess.Popen(["tmux", "-L", server.name, "-C", "attach"],
                                  stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
        wait_until(lambda: server.tmux.run("list-clients").stdout.strip(), 10,
                   message="the control client attached")
        (isolation.tmux_socket_dir() / server.name).unlink()   # kill-server cannot reach it
    assert client.wait(10) is not None
    wait_until(lambda: not psutil.pid_exists(pid) or
               psutil.Process(pid).status() == psutil.STATUS_ZOMBIE, 5,
               message=f"the tmux server {pid} still running")


def test_the_leak_check_kills_and_names_what_the_run_left(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, real_home = tmp_path / "run", tmp_path / "real-home"
    root.mkdir()
    (real_home / ".config").mkdir(parents=True)
    monkeypatch.setenv(isolation.REAL_HOME_VAR, str(real_home))
    leaks = isolation.Leaks.start(root)
    leaks.grace = 0.5
    left = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"],
                            env={**os.environ, isolation.RUN_VAR: str(root)})
    (real_home / ".config" / "fakeagent").mkdir()
    problems = leaks.check()
    assert left.wait(5) == -9
    assert problems == [f"process {left.pid} still running: {sys.executable} -c "
                        "import time; time.sleep(300)",
                        f"written to the real HOME: {real_home / '.config' / 'fakeagent'}"]
