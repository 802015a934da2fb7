"""adapters/ssh.py, remote_procs.py and remote_sessions.py against a real sshd on 127.0.0.1
and a tmux server reached only through it."""

from __future__ import annotations

import json
import queue
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pitcrew.supervisor.adapters.control import Attached, ControlGone, Output, Topology
from pitcrew.supervisor.adapters.remote_procs import RemoteProcs
from pitcrew.supervisor.adapters.remote_sessions import RemoteSessions
from pitcrew.supervisor.adapters.ssh import HostDown, RemoteControlClient, RemoteTmux, SshLink
from pitcrew.supervisor.core.hosts import Host, HostState
from tests.service.fakes import provider
from tests.support.sshd import RemoteTmuxServer, Sshd
from tests.support.waiting import wait_until


@pytest.fixture
def link(sshd: Sshd, remote: RemoteTmuxServer, tmp_path: Path) -> Iterator[SshLink]:
    changes: list[str] = []
    ctl = tmp_path / "ctl"
    ctl.mkdir()
    up = SshLink(Host("gpu1", sshd.ssh_spec, remote.socket), ctl,
                 lambda state, why: changes.append(state), backoff=(0.2,))
    up.start()
    wait_until(lambda: up.state == HostState.UP, 15, message=lambda: up.problem)
    try:
        yield up
    finally:
        up.stop()


def test_tmux_and_its_control_client_run_over_one_connection_with_the_hosts_pane_ids(
        sshd: Sshd, remote: RemoteTmuxServer, link: SshLink) -> None:
    pane = remote.start("bash --norc --noprofile")
    tmux = RemoteTmux(link)
    ids = [p.pane_id for p in tmux.list_panes()]
    assert f"gpu1:{pane}" in ids and all(i.startswith("gpu1:%") for i in ids)
    events: queue.Queue[object] = queue.Queue()
    client = RemoteControlClient(tmux, "work", events.put)
    assert client.start_client()
    try:
        attached = events.get(timeout=10)                      # attached: now it hears all
        assert isinstance(attached, Attached) and f"gpu1:{pane}" in attached.panes
        assert isinstance(events.get(timeout=10), Topology)
        tmux.send_text(f"gpu1:{pane}", "echo over-ssh")
        tmux.send_keys(f"gpu1:{pane}", "Enter")
        wait_until(lambda: "over-ssh\n" in (tmux.capture(f"gpu1:{pane}") or ""), 10)
        output = events.get(timeout=10)
        while not isinstance(output, Output):
            output = events.get(timeout=10)
        assert output.pane_id == f"gpu1:{pane}"          # the event names the host's pane
        assert len(sshd.connections()) == 1 and link.connects == 1   # one connection for all
        sshd.kill_connections()                                        # the link drops
        gone = events.get(timeout=10)
        while not isinstance(gone, ControlGone):
            gone = events.get(timeout=10)
        assert not gone.server_gone            # the link went, not the tmux server
        wait_until(lambda: link.state == HostState.UP and link.connects == 2, 15)
        assert tmux.capture(f"gpu1:{pane}") is not None               # and is back
    finally:
        client.stop()


def test_the_connection_a_killed_pitcrew_left_open_is_closed_by_the_next_one(
        sshd: Sshd, remote: RemoteTmuxServer, link: SshLink) -> None:
    link._stop.set()                        # its Pitcrew is killed: no keeper, no stop()
    assert link._thread is not None
    link._thread.join(5)
    left = link._master
    assert left is not None and left.poll() is None
    again = SshLink(link.host, link.socket.parent)   # a restarted Pitcrew: the same socket
    try:
        assert again.connect()
        wait_until(lambda: left.poll() is not None, 10, message="the old master to exit")
        assert again.run("echo hi").stdout.strip() == b"hi"
    finally:
        again.stop()


def test_a_command_while_the_host_is_down_is_refused_at_once(
        sshd: Sshd, link: SshLink) -> None:
    sshd.stop()
    wait_until(lambda: link.state == HostState.DOWN, 15)
    started = time.monotonic()
    with pytest.raises(HostDown, match="host gpu1 is"):
        RemoteTmux(link).list_panes()
    assert time.monotonic() - started < 0.5     # nothing was tried
    sshd.start()
    wait_until(lambda: link.state == HostState.UP, 20)


def test_the_agent_its_launch_and_its_session_are_read_on_the_host(
        remote: RemoteTmuxServer, link: SshLink, tmp_path: Path) -> None:
    work = tmp_path / "my project"
    work.mkdir()
    pane = remote.start("bash --norc --noprofile", cwd=work)
    remote.type(pane, "fakeagent --model 'fake large'")
    remote.wait_for_text(pane, "fake>")
    tmux, procs = RemoteTmux(link), RemoteProcs(link)
    info = tmux.pane(f"gpu1:{pane}")
    assert info is not None
    procs.refresh()
    found = procs.find_agent(info.pid, [provider()])
    assert found is not None
    agent = found[1]
    assert agent.cwd == str(work) and procs.is_alive(agent.pid, agent.create_time)
    ctx = procs.launch_context(agent, info.pid, provider())
    assert ctx is not None and ctx.style.value == "shell" and ctx.shell_pid == info.pid
    assert ctx.env["FAKEAGENT_HOME"] == str(remote.fake_home)
    assert ctx.argv[-2:] == ("--model", "fake large")     # one argument, as typed: not ps's
    assert not procs.shell_at_prompt(info.pid, ctx.shell_started)   # it runs the agent
    [session_file] = list(remote.fake_home.rglob("*.jsonl"))
    sid = json.loads(session_file.read_text().splitlines()[0])["id"]
    ref = RemoteSessions(link).find_session(provider().sessions, str(work), ctx.env,
                                            agent.create_time)
    assert ref is not None and ref.session_id == sid and ref.path == str(session_file)
    procs.stop_tree(agent.pid)
    wait_until(lambda: not procs.is_alive(agent.pid, agent.create_time), 10)
    wait_until(lambda: procs.shell_at_prompt(info.pid, ctx.shell_started), 10)
