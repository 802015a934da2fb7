""""Open terminal" against a real tmux server: a real attached client is switched to the pane;
with no client, a terminal emulator (a recording stand-in) is started with a command that
really attaches to the pane."""

from __future__ import annotations

import contextlib
import fcntl
import os
import struct
import subprocess
import termios
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from pitcrew.supervisor.adapters.terminal_app import open_terminal, terminal_argv
from pitcrew.supervisor.core.errors import PitcrewError
from tests.support.tmux_server import TmuxServer
from tests.support.waiting import wait_until


class PtyClient:
    """A process on its own pseudo-terminal (120x40), as if a person ran it in a terminal."""

    def __init__(self, argv: Sequence[str]) -> None:
        self.master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        env = {**os.environ, "TERM": "xterm-256color"}
        env.pop("TMUX", None)
        self.proc = subprocess.Popen(list(argv), stdin=slave, stdout=slave, stderr=slave,
                                     env=env, start_new_session=True)
        os.close(slave)
        self.output = bytearray()
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()

    def _drain(self) -> None:  # a terminal that nobody reads would block tmux
        with contextlib.suppress(OSError):
            while chunk := os.read(self.master, 65536):
                self.output += chunk

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait(5)
        self._reader.join(5)
        os.close(self.master)


@contextlib.contextmanager
def attached(tmux: TmuxServer, argv: Sequence[str]) -> Iterator[PtyClient]:
    client = PtyClient(argv)
    try:
        wait_until(lambda: tmux.tmux.list_clients(), timeout=10,
                   message=lambda: f"a tmux client; it printed {bytes(client.output)!r}")
        yield client
    finally:
        client.close()


def second_session(tmux: TmuxServer) -> str:
    """A pane in a session of its own (the fixture puts its panes in the first session)."""
    return tmux.tmux.new_session("other", ["sh", "-c", "exec sleep 300"], str(tmux.root),
                                 env=tmux.env)


def fake_terminal(tmp_path: Path, name: str) -> tuple[dict[str, str], Path]:
    """A stand-in emulator called `name`, first on PATH, that records its argv (NUL-separated)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    record = tmp_path / f"{name}.argv"
    script = bin_dir / name
    script.write_text(f"#!/bin/sh\nprintf '%s\\0' \"$@\" > {record}.tmp && mv {record}.tmp "
                      f"{record}\n")
    script.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    env.pop("TERMINAL", None)
    return env, record


def recorded(record: Path) -> list[str]:
    wait_until(record.is_file, timeout=10, message=f"{record.name} to be written")
    return record.read_bytes().decode().split("\0")[:-1]


def test_an_attached_client_is_switched_to_the_pane(tmux: TmuxServer) -> None:
    in_first = tmux.start("exec sleep 300")        # a window of the first session, not active
    target = second_session(tmux)
    first = tmux.pane(in_first).session_name
    with attached(tmux, ["tmux", "-L", tmux.name, "attach-session", "-t", f"={first}"]):
        before = tmux.tmux.list_clients()[0]
        assert before.session == first and before.pane_id not in (target, in_first)

        how = open_terminal(tmux.tmux, target)
        client = tmux.tmux.list_clients()[0]
        assert (client.session, client.pane_id) == ("other", target)
        assert how.startswith(f"switched tmux client {client.name} to other:")

        open_terminal(tmux.tmux, in_first)         # back, onto a window that was not active
        client = tmux.tmux.list_clients()[0]
        assert (client.session, client.pane_id) == (first, in_first)


def test_the_persons_client_is_switched_not_a_control_mode_client_attached_later(
        tmux: TmuxServer) -> None:
    in_first = tmux.start("exec sleep 300")
    target = second_session(tmux)
    first = tmux.pane(in_first).session_name
    with attached(tmux, ["tmux", "-L", tmux.name, "attach-session", "-t", f"={first}"]):
        # what a watcher attaches, after the person did: the newest client on the server
        # (client_activity counts in seconds: a second later, it is the newer one)
        time.sleep(1.1)
        control = subprocess.Popen(["tmux", "-L", tmux.name, "-C", "attach-session", "-t",
                                    f"={first}"], stdin=subprocess.PIPE,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_until(lambda: any(c.control for c in tmux.tmux.list_clients()), timeout=10)
            how = open_terminal(tmux.tmux, target)
            person = [c for c in tmux.tmux.list_clients() if not c.control]
            watcher = [c for c in tmux.tmux.list_clients() if c.control]
            assert (person[0].session, person[0].pane_id) == ("other", target), how
            assert watcher[0].session == first
        finally:
            control.kill()
            control.wait(5)


def test_without_a_client_a_terminal_emulator_attaches_to_the_pane(
        tmux: TmuxServer, tmp_path: Path) -> None:
    tmux.start("exec sleep 300")
    target = tmux.start("exec sleep 300")          # not the session's active window
    env, record = fake_terminal(tmp_path, "x-terminal-emulator")
    assert tmux.tmux.list_clients() == []

    how = open_terminal(tmux.tmux, target, environ=env)
    assert how.startswith("opened x-terminal-emulator attached to ")
    argv = recorded(record)
    assert argv[0] == "-e"
    # Run what the emulator was asked to run, in a terminal of our own: it must attach there.
    assert argv[1:4] == ["tmux", "-L", tmux.name]
    with attached(tmux, argv[1:]):
        wait_until(lambda: tmux.tmux.list_clients()[0].pane_id == target, timeout=10)
        assert tmux.tmux.list_clients()[0].session == tmux.pane(target).session_name


def test_terminal_env_var_wins_and_keeps_its_own_words(tmp_path: Path) -> None:
    env, _ = fake_terminal(tmp_path, "kitty")
    fake_terminal(tmp_path, "x-terminal-emulator")
    env["TERMINAL"] = "kitty --single-instance"
    argv = terminal_argv(["tmux", "attach"], env)
    assert argv == [str(tmp_path / "bin" / "kitty"), "--single-instance", "tmux", "attach"]
    env["TERMINAL"] = "no-such-terminal-here"
    with pytest.raises(PitcrewError, match=r"\$TERMINAL is 'no-such-terminal-here'"):
        terminal_argv(["tmux", "attach"], env)


@pytest.mark.parametrize(("name", "expected"), [
    ("gnome-terminal", ["--", "tmux", "attach"]),
    ("wezterm", ["start", "--", "tmux", "attach"]),
    ("xfce4-terminal", ["-x", "tmux", "attach"]),
    ("xterm", ["-e", "tmux", "attach"]),
])
def test_each_emulator_gets_its_own_way_to_run_a_command(
        tmp_path: Path, name: str, expected: list[str]) -> None:
    env, _ = fake_terminal(tmp_path, name)
    env["PATH"] = str(tmp_path / "bin")            # only this emulator exists
    assert terminal_argv(["tmux", "attach"], env) == [str(tmp_path / "bin" / name), *expected]


def test_no_emulator_and_no_client_is_a_clear_error(tmux: TmuxServer, tmp_path: Path) -> None:
    pane = tmux.start("exec sleep 300")
    env = {"PATH": str(tmp_path)}                  # nothing to run
    with pytest.raises(PitcrewError, match="no terminal emulator found .* set TERMINAL or "
                       f"attach yourself: tmux -L {tmux.name}"):
        open_terminal(tmux.tmux, pane, environ=env)


def test_a_gone_pane_is_a_clear_error(tmux: TmuxServer) -> None:
    pane = tmux.start("exec sleep 300")
    tmux.tmux.kill_pane(pane)
    with pytest.raises(PitcrewError, match=f"pane {pane} is not on tmux server {tmux.name}"):
        open_terminal(tmux.tmux, pane)
