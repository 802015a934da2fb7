"""The user's tmux behaves the same with Pitcrew running (SPEC §7), end to end: a real tmux
3.x server, the user attached to it in a real terminal (a pty, `script`), the real `pitcrew
watch` with its control clients, and copy mode, where every key is a copy-mode command.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.test_autopilot_cli import pitcrew
from tests.e2e.test_autopilot_e2e import rows, start_agent, watch
from tests.support.tmux_server import TmuxServer
from tests.support.waiting import wait_until

pytestmark = pytest.mark.e2e


@pytest.fixture
def home(pitcrew_home: Path, fake_provider_installed: Path) -> Path:
    (pitcrew_home / "config.toml").write_text(
        "[watch]\npoll_interval = 0.5\n[autopilot]\nenabled = true\n")
    return pitcrew_home


@contextlib.contextmanager
def attached(tmux: TmuxServer) -> Iterator[None]:
    """The user's own terminal, attached before Pitcrew starts (`script` gives it a pty)."""
    session = tmux.tmux.run("list-sessions", "-F", "#{session_name}").stdout.split()[0]
    user = subprocess.Popen(
        ["script", "-q", "-c", f"tmux -L {tmux.name} attach -t ={session}", "/dev/null"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True, env={**os.environ, "TERM": "xterm-256color"})
    try:
        wait_until(lambda: tmux.tmux.run("list-clients", "-F", "#{client_control_mode}")
                   .stdout.split() == ["0"], 10, message="the user's client attached")
        yield
    finally:
        os.killpg(user.pid, signal.SIGKILL)
        user.wait(5)


def in_mode(tmux: TmuxServer, pane: str) -> bool:
    return tmux.pane(pane).in_mode


def test_the_users_send_keys_into_copy_mode_works_with_pitcrew_running(
        tmux: TmuxServer, home: Path, tmp_path: Path) -> None:
    pane = start_agent(tmux, tmp_path)
    with attached(tmux):
        w = watch(tmux)
        try:
            w.wait_for(f"{pane}: idle")
            assert tmux.tmux.run("copy-mode", "-t", pane).ok and in_mode(tmux, pane)
            out = tmux.tmux.run("send-keys", "-t", pane, "q")   # as the user would, from a shell
            assert out.ok, out.stderr
            wait_until(lambda: not in_mode(tmux, pane), 5, message="copy mode left")
        finally:
            assert w.stop() == 0


def test_a_message_waits_while_its_pane_is_in_copy_mode_and_goes_after(
        tmux: TmuxServer, home: Path, tmp_path: Path) -> None:
    """Typed into copy mode, `quick` would be copy-mode commands (`q` leaves it)."""
    pane = start_agent(tmux, tmp_path)
    with attached(tmux):
        w = watch(tmux)
        try:
            w.wait_for(f"{pane}: idle")
            assert tmux.tmux.run("copy-mode", "-t", pane).ok
            out = pitcrew("--tmux-socket", tmux.name, "send", pane, "quick question")
            assert out.returncode == 0, out.stderr
            w.wait_for(f"{tmux.name}:{pane}: did not type the message: the pane is in copy "
                       "mode", timeout=20)
            assert in_mode(tmux, pane), "nothing typed into copy mode"
            assert [r.badge.value for r in rows(home)] == []   # a failed type is no Typed row
            assert "quick question" not in tmux.screen(pane)
            assert tmux.tmux.run("send-keys", "-t", pane, "-X", "cancel").ok
            w.wait_for(f"{tmux.name}:{pane}: typed a queued message", timeout=30)
            tmux.wait_for_text(pane, "quick question")
        finally:
            assert w.stop() == 0
    assert [r.badge.value for r in rows(home)] == ["Typed"]
