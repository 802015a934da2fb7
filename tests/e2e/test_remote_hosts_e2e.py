"""Remote hosts end to end: the real `pitcrew watch` watching a tmux server that it reaches
only through a real sshd on 127.0.0.1 (tests/support/sshd.py), with the fake agent in it."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from pitcrew.supervisor.store.ledger import Ledger
from tests.cli.test_autopilot_cli import pitcrew
from tests.support.proc import Running
from tests.support.sshd import RemoteTmuxServer, Sshd
from tests.support.tmux_server import FAKE_AGENT_DIR, TmuxServer
from tests.support.waiting import wait_until

pytestmark = pytest.mark.e2e
SCALE = "0.1"


def configure(home: Path, sshd: Sshd, remote: RemoteTmuxServer) -> None:
    (home / "config.toml").write_text(
        "[watch]\npoll_interval = 0.5\n[autopilot]\nenabled = true\nquiet_after = 10\n"
        f'[[hosts]]\nname = "gpu1"\nssh = "{sshd.ssh_spec}"\ntmux_socket = "{remote.socket}"\n')


def watch(tmux: TmuxServer, remote: RemoteTmuxServer | None = None) -> Running:
    """The watcher; with `remote`, once its control client is attached there."""
    w = Running(["watch"], env={"PITCREW_TMUX_SOCKET": tmux.name,
                                "PITCREW_TEST_TIME_SCALE": SCALE})
    w.wait_for("Autopilot: ")
    if remote is not None:
        remote.wait_watched()
    return w


@contextlib.contextmanager
def watching_a_remote_agent(
    tmux: TmuxServer, sshd: Sshd, remote: RemoteTmuxServer, home: Path, cwd: Path,
    at_shell: bool = False,
) -> Iterator[tuple[str, Running]]:
    """gpu1 configured, the fake agent started there (as the pane's command, or typed at an
    interactive bash), and the watcher running until it reads the agent idle: (pane, watcher).
    The watcher is stopped on the way out and must exit cleanly."""
    configure(home, sshd, remote)
    if at_shell:
        pane = remote.start("bash --norc --noprofile", cwd=cwd)
        remote.type(pane, "fakeagent")
    else:
        pane = remote.start("fakeagent", cwd=cwd)
    remote.wait_for_text(pane, "fake>")
    w = watch(tmux, remote)
    try:
        w.wait_for(f"gpu1:{pane}: idle", timeout=30)
        yield pane, w
    finally:
        assert w.stop() == 0


def session_records(remote: RemoteTmuxServer) -> list[dict[str, object]]:
    out = []
    for path in remote.fake_home.rglob("*.jsonl"):
        out += [json.loads(line) for line in path.read_text().splitlines()]
    return out


def badges(home: Path) -> list[str]:
    return [r.badge.value for r in reversed(Ledger(home / "autopilot-ledger.jsonl").tail(100))
            if r.badge.value != "Scheduled"]


def wait_badges(home: Path, *expected: str, timeout: float = 40) -> None:
    wait_until(lambda: badges(home)[: len(expected)] == list(expected), timeout,
               message=lambda: f"ledger {badges(home)} to start with {list(expected)}")


def test_a_remote_agent_is_found_read_and_resumed_after_a_crash(
    tmux: TmuxServer, sshd: Sshd, remote: RemoteTmuxServer, pitcrew_home: Path,
    fake_provider_installed: Path, tmp_path: Path,
) -> None:
    with watching_a_remote_agent(tmux, sshd, remote, pitcrew_home, tmp_path) as (pane, w):
        [session] = list(remote.fake_home.rglob("*.jsonl"))
        remote.type(pane, "crash 3 1")
        w.wait_for(f"gpu1:{pane}: busy (was ")
        wait_badges(pitcrew_home, "Resumed", "Continued", timeout=60)
    resumed = next(r for r in Ledger(pitcrew_home / "autopilot-ledger.jsonl").tail(100)
                   if r.badge.value == "Resumed")
    assert resumed.readings["session_id"] == session.stem
    assert resumed.prompt == "crash 3 1"
    assert f"Resumed session {session.stem}" in remote.screen(pane)
    assert len(sshd.connections()) <= 1        # everything went over one connection


def test_a_dropped_connection_is_reconnected_and_a_crash_meanwhile_is_not_lost(
    tmux: TmuxServer, sshd: Sshd, remote: RemoteTmuxServer, pitcrew_home: Path,
    fake_provider_installed: Path, tmp_path: Path,
) -> None:
    with watching_a_remote_agent(tmux, sshd, remote, pitcrew_home, tmp_path) as (pane, w):
        remote.type(pane, "crash 3 1")
        w.wait_for(f"gpu1:{pane}: busy (was ")
        sshd.stop()              # the connection is killed, and the host stays unreachable
        w.wait_for("host gpu1 is down")
        wait_until(lambda: any(r["type"] == "crash" for r in session_records(remote)), 15,
                   message="the agent to crash while the host is unreachable")
        assert badges(pitcrew_home) == []          # nothing seen, nothing done meanwhile
        sshd.start()
        w.wait_for("host gpu1: up", timeout=30)
        wait_badges(pitcrew_home, "Resumed", "Continued", timeout=40)


def test_a_host_that_is_down_from_the_start_is_one_state_and_local_watching_goes_on(
    tmux: TmuxServer, sshd: Sshd, remote: RemoteTmuxServer, pitcrew_home: Path,
    fake_provider_installed: Path, tmp_path: Path,
) -> None:
    configure(pitcrew_home, sshd, remote)
    sshd.stop()
    local = tmux.start("fakeagent", cwd=tmp_path)
    tmux.wait_for_text(local, "fake>")
    w = watch(tmux)
    try:
        w.wait_for(f"{local}: idle")
        w.wait_for("host gpu1 is down")
    finally:
        assert w.stop() == 0
    downs = [line for line in w.lines if "host gpu1 is down" in line]
    assert 1 <= len(downs) <= 3, downs                  # one line per attempt, backing off


def test_a_message_is_delivered_to_a_remote_agent_and_its_login_screen_notifies_with_the_host(
    tmux: TmuxServer, sshd: Sshd, remote: RemoteTmuxServer, pitcrew_home: Path,
    fake_provider_installed: Path, tmp_path: Path,
) -> None:
    with watching_a_remote_agent(tmux, sshd, remote, pitcrew_home, tmp_path) as (pane, w):
        out = pitcrew("send", f"gpu1:{pane}", "work 1")
        assert out.returncode == 0, out.stderr
        w.wait_for("message delivered")
        remote.wait_for_text(pane, "● Done: work 1")
        remote.type(pane, "login")
        w.wait_for(f"gpu1:{pane}: login_required")
        w.wait_for('needs you: gpu1 · "Fake Agent" is waiting on you')
        wait_badges(pitcrew_home, "Typed", "Diagnosed", "Waiting on you")
    prompts = [r["text"] for r in session_records(remote) if r["type"] == "prompt"]
    assert prompts[0] == "work 1"                       # typed once, over the connection
    rows = Ledger(pitcrew_home / "autopilot-ledger.jsonl").tail(100)
    assert {r.terminal for r in rows} == {f"gpu1:work:{pane}"}


def test_a_seated_remote_terminal_fails_over_to_its_backup_on_the_same_host(
    tmux: TmuxServer, sshd: Sshd, remote: RemoteTmuxServer, pitcrew_home: Path,
    fake_provider_installed: Path, tmp_path: Path,
) -> None:
    (pitcrew_home / "providers" / "fakebackup.toml").write_text(
        (FAKE_AGENT_DIR / "fakebackup.toml").read_text())
    project = tmp_path / "api"
    project.mkdir()
    (pitcrew_home / "config.toml").write_text(
        '[autopilot]\nenabled = false\nquiet_after = 600\n[diagnosis]\nmode = "timer"\n'
        f'[[seats]]\nname = "api"\ncwd = "{project}"\nprimary = "fakeagent"\n'
        'backups = ["fakebackup"]\nbrief = "You own the API service."\n'
        f'[[hosts]]\nname = "gpu1"\nssh = "{sshd.ssh_spec}"\ntmux_socket = "{remote.socket}"\n')
    pane = remote.start("fakeagent", cwd=project)
    remote.wait_for_text(pane, "fake>")
    w = watch(tmux, remote)
    try:
        w.wait_for(f"gpu1:{pane}: idle", timeout=30)
        bound = pitcrew("seat", "bind", "api", f"gpu1:{pane}")
        assert bound.returncode == 0, bound.stderr
        w.wait_for(f"gpu1:{pane}: sits in seat api")
        remote.type(pane, "limit resets 3pm (Europe/Paris)")
        w.wait_for(f"gpu1:{pane}: rate_limit")
        pitcrew("send", f"gpu1:{pane}", "keep going")
        switched = wait_until(lambda: [r for r in Ledger(
            pitcrew_home / "autopilot-ledger.jsonl").tail(100)
            if r.badge.value == "Switched to backup"], 60)[0]
        w.wait_for("brief delivered", timeout=60)
    finally:
        assert w.stop() == 0
    new_pane = str(switched.readings["pane"])
    assert new_pane.startswith("gpu1:%") and new_pane != f"gpu1:{pane}"
    listed = remote.tmux("list-panes", "-a", "-F", "#{pane_id} #{pane_current_path}").stdout
    assert f"{new_pane.removeprefix('gpu1:')} {project}" in listed   # opened on the host
    assert not tmux.tmux.list_panes()                 # and nothing on this machine
    briefs = [r["text"] for r in session_records(remote) if r["type"] == "prompt"
              and str(r["text"]).startswith("Pitcrew handover")]
    assert len(briefs) == 1 and "You own the API service." in str(briefs[0])


def test_a_remote_agent_started_at_a_shell_is_resumed_by_typing_at_that_shell(
    tmux: TmuxServer, sshd: Sshd, remote: RemoteTmuxServer, pitcrew_home: Path,
    fake_provider_installed: Path, tmp_path: Path,
) -> None:
    with watching_a_remote_agent(tmux, sshd, remote, pitcrew_home, tmp_path,
                                 at_shell=True) as (pane, w):
        [session] = list(remote.fake_home.rglob("*.jsonl"))
        remote.type(pane, "crash 3 1")
        w.wait_for(f"gpu1:{pane}: busy (was ")
        wait_badges(pitcrew_home, "Resumed", "Continued", timeout=60)
        w.wait_for("typed the resume command")
    assert f"fakeagent --resume {session.stem}" in remote.screen(pane)   # typed at the shell
    assert f"Resumed session {session.stem}" in remote.screen(pane)


def test_a_running_remote_agent_is_rerun_in_a_new_window_on_its_own_host(
    tmux: TmuxServer, sshd: Sshd, remote: RemoteTmuxServer, pitcrew_home: Path,
    fake_provider_installed: Path, tmp_path: Path,
) -> None:
    """The rerun of an agent that still runs opens a window beside it: on gpu1, not on this
    machine (it used to open in the local tmux, and asked the local kernel whether the
    remote agent's pid was alive)."""
    with watching_a_remote_agent(tmux, sshd, remote, pitcrew_home, tmp_path) as (pane, w):
        remote.type(pane, "work 600")
        w.wait_for(f"gpu1:{pane}: busy")
        local_panes = {p.pane_id for p in tmux.tmux.list_panes()}
        agent = int(remote.tmux("display", "-p", "-t", pane, "#{pane_pid}").stdout)
        done = pitcrew("rerun", f"gpu1:{pane}")
        assert done.returncode == 0, done.stdout + done.stderr
        row = wait_until(lambda: next((r for r in Ledger(
            pitcrew_home / "autopilot-ledger.jsonl").tail(100) if r.badge.value == "Rerun"),
            None), 30, message=lambda: "\n".join(w.lines))
        windows = remote.tmux("list-windows", "-a", "-F", "#{window_name}").stdout.split()
        new_pane = row.readings["pane"]
        remote.wait_for_text(new_pane, "fake>")
    assert "rerun-fakeagent" in windows, (row.readings, windows)
    assert row.readings["where"].startswith("a new window")
    assert {p.pane_id for p in tmux.tmux.list_panes()} == local_panes   # nothing opened here
    assert int(remote.tmux("display", "-p", "-t", pane, "#{pane_pid}").stdout) == agent
    assert psutil.Process(agent).is_running()                          # the old one runs on
    assert "Resumed" not in badges(pitcrew_home)
