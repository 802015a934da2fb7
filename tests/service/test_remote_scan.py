"""service/remote_scan.py: a remote host's agent terminals for `pitcrew status`, over a real
sshd on 127.0.0.1 (the CLI test covers the table; this covers a dead pane and a lost link)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from pitcrew.supervisor.adapters.ssh import RemoteTmux, SshLink
from pitcrew.supervisor.core.hosts import Host
from pitcrew.supervisor.service.remote_scan import scan_remote
from tests.service.fakes import provider
from tests.support.sshd import RemoteTmuxServer, sshd_server
from tests.support.waiting import wait_until


def test_a_crashed_agent_and_a_shell_and_then_a_lost_link(tmp_path: Path) -> None:
    with sshd_server(tmp_path / "sshd") as sshd:
        remote = RemoteTmuxServer(sshd, tmp_path / "remote")
        try:
            crashed = remote.start("fakeagent", cwd=tmp_path)
            remote.wait_for_text(crashed, "fake>")
            remote.start("bash --norc --noprofile", cwd=tmp_path)     # no agent: not listed
            remote.type(crashed, "crash 7 0")
            remote.wait_for_text(crashed, "simulated crash")
            # tmux 3.3a may miss the exit until another child of the server exits
            # (adapters/tmux.py): a `run-shell true` makes it reap, as Pitcrew's listing does
            wait_until(lambda: remote.tmux("run-shell", "true") and
                       "Pane is dead" in remote.screen(crashed), 15,
                       message=lambda: remote.screen(crashed))
            (tmp_path / "ctl").mkdir()
            link = SshLink(Host("gpu1", sshd.ssh_spec, remote.socket), tmp_path / "ctl")
            assert link.connect()
            try:
                now = dt.datetime.now(dt.UTC)
                found = scan_remote(RemoteTmux(link), [provider()], now, dt.UTC)
                assert found.state == "up"
                [t] = found.terminals
                assert (t.host, t.pane_id, t.dead, t.dead_status) == (
                    "gpu1", f"gpu1:{crashed}", True, 7)
                assert t.target == "gpu1:work:1.0" and t.agent_pid is None
                sshd.stop()                                  # the connection is killed
                lost = scan_remote(RemoteTmux(link), [provider()], now, dt.UTC)
                assert lost.state == "down" and lost.error.startswith("host gpu1: ")
                sshd.start()
            finally:
                link.stop()
        finally:
            remote.stop()
