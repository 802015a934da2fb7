"""A real, isolated tmux server per test (`tmux -L pitcrew-test-<random> -f /dev/null`)."""

from __future__ import annotations

import contextlib
import itertools
import shlex
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import psutil

from pitcrew.supervisor.adapters.tmux import PaneInfo, Tmux
from tests.support import isolation
from tests.support.waiting import wait_until

FAKE_AGENT_DIR = Path(__file__).resolve().parent.parent / "fake_agent"


class TmuxServer:
    """Starts panes on a private server; the finalizer kills every process it started."""

    def __init__(self, root: Path) -> None:
        self.name = f"pitcrew-test-{uuid.uuid4().hex[:10]}"
        isolation.register_socket(self.name)
        self.tmux = Tmux(self.name, config_file="/dev/null", timeout=10)
        self.root = root
        self.home = root / "home"
        self.home.mkdir(parents=True, exist_ok=True)
        self.fake_home = root / "fakeagent-home"
        self.env = {
            "HOME": str(self.home),
            "FAKEAGENT_HOME": str(self.fake_home),
            "TERM": "xterm-256color",
            "LANG": "C.UTF-8",
            "PS1": "$ ",
        }
        self._pids: set[int] = set()

    def start(self, command: str | Sequence[str], cwd: Path | str | None = None,
              env: Mapping[str, str] | None = None, width: int = 120, height: int = 40,
              keep_dead: bool = True) -> str:
        """Run `command` in a new window of the first session; returns the pane id."""
        argv = [command] if isinstance(command, str) else [shlex.join(command)]
        cwd = str(cwd or self.root)
        merged = {**self.env, **(env or {})}
        session = f"s{uuid.uuid4().hex[:6]}"
        if not self.tmux.server_alive():
            pane = self.tmux.new_session(session, ["sh", "-c", "exec sleep 86400"], cwd,
                                         width, height, merged)
            self.tmux.run("set-option", "-g", "remain-on-exit", "on" if keep_dead else "off")
            self._pids.add(self.pane(pane).pid)
        pane = self.tmux.new_window(f"{self._first_session()}", argv, cwd, env=merged)
        if keep_dead:
            self.tmux.set_remain_on_exit(pane)
        info = self.pane(pane)
        self._pids.add(info.pid)
        return pane

    def wait_watched(self, timeout: float = 15.0) -> None:
        """Until a control-mode client (the watcher's) is attached to every session. A test's
        session is seconds old when its watcher starts, and the watcher connects to a session
        younger than 3 s only once it is not (a tmux crash, service/control_sessions.py);
        until then it reads screens once a second, and a test about what happens within a
        second would race that."""
        def attached() -> bool:
            sessions = set(self.tmux.run("list-sessions", "-F", "#{session_name}").stdout.split())
            clients = self.tmux.run("list-clients", "-F", "#{client_session}").stdout.split()
            return sessions <= set(clients)     # no session (no server): nothing to wait for
        wait_until(attached, timeout, message="the watcher's control client on every session")

    def _first_session(self) -> str:
        out = self.tmux.run("list-sessions", "-F", "#{session_name}").stdout.split()
        return out[0]

    def pane(self, pane_id: str) -> PaneInfo:
        info = self.tmux.pane(pane_id)
        assert info is not None, f"pane {pane_id} is gone"
        return info

    def screen(self, pane_id: str) -> str:
        """What the pane shows; for a dead pane, what it showed last (tmux scrolled it up)."""
        info = self.tmux.pane(pane_id)
        history = info.height if info is not None and info.dead else 0
        return self.tmux.capture(pane_id, history=history) or ""

    def wait_for_text(self, pane_id: str, needle: str, timeout: float = 15.0) -> str:
        return wait_until(lambda: needle in self.screen(pane_id) and self.screen(pane_id),
                          timeout, message=f"{needle!r} on {pane_id}:\n{self.screen(pane_id)}")

    def type(self, pane_id: str, text: str, enter: bool = True) -> None:
        self.tmux.send_text(pane_id, text)
        if enter:
            self.tmux.send_keys(pane_id, "Enter")

    def stop(self) -> None:
        pids = set(self._pids)
        for pane in self.tmux.list_panes():
            pids.add(pane.pid)
        procs = []
        for pid in pids:
            with contextlib.suppress(psutil.Error):
                root = psutil.Process(pid)
                procs += [root, *root.children(recursive=True)]
        for proc in procs:
            with contextlib.suppress(psutil.Error):
                proc.kill()
        with contextlib.suppress(Exception):
            self.tmux.run("kill-server")
        # kill-server needs the socket: a server whose socket file is gone (or that did not
        # answer in time) lives on, and so do its clients (a killed watcher's control client):
        # every process named after this socket goes, server and clients alike
        procs += kill_trees(socket_processes(self.name))
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and any(_running(p) for p in procs):
            time.sleep(0.02)
        with contextlib.suppress(OSError):
            (isolation.tmux_socket_dir() / self.name).unlink()


def socket_processes(name: str) -> list[psutil.Process]:
    """Every tmux process for `-L name`: its server (which has the command line of the client
    that started it) and its clients."""
    found = []
    for proc in psutil.process_iter(["name", "cmdline"]):
        argv = proc.info["cmdline"] or []
        if (proc.info["name"] or "").startswith("tmux") and any(
                a == name and b == "-L" for b, a in itertools.pairwise(argv)):
            found.append(proc)
    return found


def kill_trees(procs: list[psutil.Process]) -> list[psutil.Process]:
    """SIGKILL each process and everything under it; all of them, to wait on."""
    trees = []
    for proc in procs:
        with contextlib.suppress(psutil.Error):
            trees += [*proc.children(recursive=True), proc]
    for proc in trees:
        with contextlib.suppress(psutil.Error):
            proc.kill()
    return trees


def _running(proc: psutil.Process) -> bool:
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


@contextlib.contextmanager
def tmux_server(root: Path) -> Iterator[TmuxServer]:
    server = TmuxServer(root)
    try:
        yield server
    finally:
        server.stop()
