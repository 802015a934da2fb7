"""A host's link as its log tells it: down said once however long it stays down, said again
once it is back; and a connection that dropped soon after it came up is reconnected at once,
not after the backoff its earlier failed attempts had reached."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest

from pitcrew.supervisor.adapters.ssh import SshLink
from pitcrew.supervisor.core.hosts import Host, HostState
from tests.support.sshd import Sshd
from tests.support.waiting import wait_until

LOGGER = "pitcrew.supervisor.adapters.ssh"


def test_a_host_down_then_back_then_dropped_is_said_once_each_and_reconnected_at_once(
        sshd: Sshd, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, LOGGER)
    sshd.stop()
    ctl = tmp_path / "ctl"
    ctl.mkdir()
    # three quick failed attempts; the third waits 3 s; a 4th failure would wait 30 s
    link = SshLink(Host("gpu1", sshd.ssh_spec), ctl, backoff=(0.2, 0.2, 3.0, 30.0))
    link.start()
    try:
        wait_until(lambda: link.connects == 3 and link.state == HostState.DOWN, 20)
        sshd.start()                                  # back during the 3 s wait
        wait_until(lambda: link.state == HostState.UP, 20, message=lambda: link.problem)
        said = [r.getMessage() for r in caplog.records if r.name == LOGGER]
        assert sum("is down" in line for line in said) == 1, said
        assert not any(": connecting" in line for line in said), said
        assert said[-1].startswith("host gpu1: up again (it was down for "), said
        caplog.clear()
        sshd.kill_connections()                       # a short-lived connection drops
        dropped = time.monotonic()
        wait_until(lambda: link.connects == 5 and link.state == HostState.UP, 20)
        assert time.monotonic() - dropped < 10        # not the 30 s its failures had reached
        said = [r.getMessage() for r in caplog.records if r.name == LOGGER]
        assert [line.split(":")[0] for line in said] == ["host gpu1 is down", "host gpu1"], said
    finally:
        link.stop()
